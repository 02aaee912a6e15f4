import {Args, Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'

export default class StudyCopy extends KtCommand {
  static override summary =
    'Copy a study, every trial included, from one storage to another (SQLite file or PostgreSQL).'
  static override examples = [
    {
      description:
        'After `kt db start` and `kt search ... --storage studies.sqlite --study co-1`: the SQLite study to the PostgreSQL server, where workers on other machines can continue it.',
      command: '<%= config.bin %> study copy co-1 --from studies.sqlite --to postgresql://kt@127.0.0.1:5433/kt',
    },
    {
      description: 'And back into a new SQLite file.',
      command: '<%= config.bin %> study copy co-1 --from postgresql://kt@127.0.0.1:5433/kt --to backup.sqlite --json',
    },
  ]
  static override args = {
    name: Args.string({description: 'Study name.', required: true}),
  }
  static override flags = {
    from: Flags.string({description: 'Source storage (SQLite file or postgresql:// URL).', required: true}),
    to: Flags.string({
      description: "Target storage (created if it is a new SQLite file; kt's schema is created in an empty database).",
      required: true,
    }),
    as: Flags.string({description: 'Name of the copy (default: the same name).'}),
  }

  async run(): Promise<unknown> {
    const {args, flags} = await this.parse(StudyCopy)
    const {copyStudy} = await import('../../study/copy.js')
    const result = await copyStudy(flags.from, flags.to, args.name, flags.as)
    if (!this.jsonEnabled())
      this.log(
        `copied study ${args.name} (${result.trials} trials${result.running ? `, ${result.running} running ones released for the next worker` : ''}) from ${result.from} to ${result.to}${result.study !== args.name ? ` as ${result.study}` : ''}`,
      )
    return result
  }
}
