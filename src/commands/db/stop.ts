import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'

export default class DbStop extends KtCommand {
  static override summary = 'Stop the local PostgreSQL server started by kt db start.'
  static override examples = [
    {description: 'The server of `kt db start` (data in .kt/postgres).', command: '<%= config.bin %> db stop'},
    {
      description: 'The server of `kt db start --dir .kt/pg`.',
      command: '<%= config.bin %> db stop --dir .kt/pg --json',
    },
  ]
  static override flags = {
    dir: Flags.string({description: 'Data folder.', default: '.kt/postgres'}),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(DbStop)
    const {PgServer, findBinaries} = await import('../../db/server.js')
    const {InputError} = await import('../../util/errors.js')
    const bin = findBinaries()
    if (!bin) throw new InputError('kt db stop', 'PostgreSQL server binaries', 'none found')
    const server = new PgServer({dir: flags.dir, port: 0}, bin)
    if (!server.initialised()) throw new InputError(flags.dir, 'a PostgreSQL data folder made by kt db start', 'none')
    const was = server.running()
    // a postmaster.pid whose server is gone (killed, crashed) is not a server: nothing to stop; the next start recovers
    const crashed = server.crashed()
    await server.stop('fast')
    if (!this.jsonEnabled())
      this.log(
        was
          ? `stopped the server in ${server.dir}`
          : `no server running in ${server.dir}${crashed ? ' (its last server did not shut down cleanly: kt db start recovers it)' : ''}`,
      )
    return {stopped: was, dir: server.dir}
  }
}
