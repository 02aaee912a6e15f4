import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'

export default class BenchBohbOverhead extends KtCommand {
  static override summary = "Measure BOHB's own time per suggestion with 300 observed trials in 16 dimensions."
  static override description =
    'Feeds BOHB 300 trials of a smooth loss over a 16-D mixed space (floats, log floats, ints, categoricals), then times each further suggestion: ask (64 candidates scored on the good and bad KDEs) plus tell (refit). Target: at most 2 ms per suggestion.'
  static override examples = ['<%= config.bin %> bench bohb-overhead --suggestions 20', '<%= config.bin %> bench bohb-overhead --suggestions 50 --json']
  static override flags = {
    suggestions: Flags.integer({description: 'Suggestions to time after the 300 observed trials.', default: 200, min: 1}),
    seed: Flags.integer({description: 'Seed of the optimiser.', default: 42}),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(BenchBohbOverhead)
    const {measureOverhead} = await import('../../search/overhead.js')
    // One short run first so the timed run measures compiled code, not the JIT warming up.
    measureOverhead(flags.seed + 1, 20, 50)
    const r = measureOverhead(flags.seed, flags.suggestions)
    const f = (x: number): string => x.toFixed(3)
    this.log(`BOHB overhead, ${r.observed} observed trials, ${r.dimensions} dimensions, ${r.suggestions} suggestions timed`)
    this.log(`  per suggestion (ask + tell): median ${f(r.suggest_ms.median)} ms, p99 ${f(r.suggest_ms.p99)} ms, max ${f(r.suggest_ms.max)} ms (target <= 2 ms: ${r.suggest_ms.p99 <= 2 ? 'met at p99' : r.suggest_ms.median <= 2 ? 'met at the median' : 'missed'})`)
    this.log(`  model-based suggestions only: median ${f(r.model_suggest_ms.median)} ms, p99 ${f(r.model_suggest_ms.p99)} ms`)
    this.log(`  mean over the block: ${f(r.cpu_ms_per_suggestion)} ms CPU, ${f(r.wall_ms_per_suggestion)} ms wall per suggestion (CPU is what the optimiser costs; wall adds waiting for a busy machine)`)
    this.log(`  ask: median ${f(r.ask_ms.median)} ms, p99 ${f(r.ask_ms.p99)} ms; tell (KDE refit): median ${f(r.tell_ms.median)} ms, p99 ${f(r.tell_ms.p99)} ms`)
    return r
  }
}
