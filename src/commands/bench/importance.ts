import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'
import {repetitionsFlag, reply, seedFlag} from '../../cli/flags.js'

export default class BenchImportance extends KtCommand {
  static override summary = 'Turns scored per second: columnar batch scoring vs a naive object-per-turn loop.'
  static override description =
    'Both loops run in this process on the same random signals; the ratio is taken in one run. Target: 100 million turns/s or more on one core.'
  static override examples = [
    '<%= config.bin %> bench importance',
    '<%= config.bin %> bench importance --turns 2000000 --json',
  ]
  static override flags = {
    turns: Flags.integer({description: 'Turns per pass.', default: 1_000_000, min: 1000}),
    repeats: repetitionsFlag(15, 'Timed passes per loop (median reported).'),
    seed: seedFlag('Seed of the random signals.'),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(BenchImportance)
    const {benchImportance, importanceBenchLine} = await import('../../bench/importance.js')
    const r = benchImportance(flags.turns, flags.repeats, flags.seed)
    return reply(this, importanceBenchLine(r), r)
  }
}
