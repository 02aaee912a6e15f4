import {Args, Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'
import {reply, storageFlag} from '../../cli/flags.js'

export default class StudyShow extends KtCommand {
  static override summary = 'Show one study: its settings, trials per budget, and the incumbent.'
  static override examples = [
    {
      description:
        'After `kt search --objective branin --optimizer bohb --trials 100` (it stores study branin-bohb-s42 in kt-studies.sqlite, the default --storage): its settings, trials per budget and incumbent.',
      command: '<%= config.bin %> study show branin-bohb-s42',
    },
    {
      description:
        'After `kt search --objective counting_ones --budget 50 --storage studies.sqlite --study co-1`: the same with its best 10 trials, for scripts.',
      command: '<%= config.bin %> study show co-1 --storage studies.sqlite --top 10 --json',
    },
  ]
  static override args = {
    name: Args.string({description: 'Study name.', required: true}),
  }
  static override flags = {
    storage: storageFlag(),
    top: Flags.integer({
      description: 'Also list the best N successful trials at the largest budget.',
      default: 5,
      min: 0,
    }),
  }

  async run(): Promise<unknown> {
    const {args, flags} = await this.parse(StudyShow)
    const {openStorage} = await import('../../study/storage.js')
    const {showStudy} = await import('../../study/show.js')
    const store = await openStorage(flags.storage, {readonly: true})
    try {
      const shown = await showStudy(store, args.name, {top: flags.top})
      return reply(this, shown.lines, shown.json)
    } finally {
      await store.close()
    }
  }
}
