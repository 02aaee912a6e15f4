import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'

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
    repeats: Flags.integer({description: 'Timed passes per loop (median reported).', default: 15, min: 1}),
    seed: Flags.integer({description: 'Seed of the random signals.', default: 42}),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(BenchImportance)
    const {benchImportance} = await import('../../bench/importance.js')
    const r = benchImportance(flags.turns, flags.repeats, flags.seed)
    const m = (x: number) => `${(x / 1e6).toFixed(1)} M turns/s`
    this.log(
      `columnar: ${m(r.columnar_turns_per_s)}  naive: ${m(r.naive_turns_per_s)}  ratio ${r.speedup.toFixed(1)}x  target ${m(r.target_turns_per_s)}: ${r.meets_target ? 'met' : 'MISSED'}  (same scores: ${r.checksum_equal})`,
    )
    return r
  }
}
