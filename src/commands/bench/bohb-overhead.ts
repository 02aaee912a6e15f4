import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'

export default class BenchBohbOverhead extends KtCommand {
  static override summary =
    "Measure BOHB's own time per suggestion with 300 observed trials in 16 dimensions, and per call on kt bench workers' workload."
  static override description =
    "Feeds BOHB 300 trials of a smooth loss over a 16-D mixed space (floats, log floats, ints, categoricals), then times each further suggestion: ask (64 candidates scored on the good and bad KDEs) plus tell (refit). Target: at most 2 ms per suggestion.\n\nFirst, before anything warms BOHB's code, it times ask, tell, and a copy's hinted replay (replayAsk) and tell on the optimiser of `kt bench workers` (counting_ones, seed 42, 160 trials per worker process, its default, at 1, 2, 4 and 8 processes, with that many results outstanding): once cold, as in a freshly started worker process, then warm (medians of --workload-passes passes). The worker processes ask inside the study's lock, so the ask is part of every lock hold."
  static override examples = [
    '<%= config.bin %> bench bohb-overhead --suggestions 20',
    '<%= config.bin %> bench bohb-overhead --suggestions 50 --json',
  ]
  static override flags = {
    suggestions: Flags.integer({
      description: 'Suggestions to time after the 300 observed trials.',
      default: 200,
      min: 1,
    }),
    seed: Flags.integer({description: 'Seed of the optimiser.', default: 42}),
    'workload-passes': Flags.integer({
      description: "Warm passes over kt bench workers' workload (after the cold one).",
      default: 5,
      min: 1,
    }),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(BenchBohbOverhead)
    const {measureOverhead, measureWorkersWorkload, WORKERS_WORKLOAD} = await import('../../bench/bohb-overhead.js')
    // first, while BOHB's code is still cold (as in a worker process that has just started)
    const w = measureWorkersWorkload(flags['workload-passes'])
    // One short run first so the timed run measures compiled code, not the JIT warming up.
    measureOverhead(flags.seed + 1, 20, 50)
    const r = measureOverhead(flags.seed, flags.suggestions)
    const f = (x: number): string => x.toFixed(3)
    this.log(
      `BOHB overhead, ${r.observed} observed trials, ${r.dimensions} dimensions, ${r.suggestions} suggestions timed`,
    )
    this.log(
      `  per suggestion (ask + tell): median ${f(r.suggest_ms.median)} ms, p99 ${f(r.suggest_ms.p99)} ms, max ${f(r.suggest_ms.max)} ms (target <= 2 ms: ${r.suggest_ms.p99 <= 2 ? 'met at p99' : r.suggest_ms.median <= 2 ? 'met at the median' : 'missed'})`,
    )
    this.log(
      `  model-based suggestions only: median ${f(r.model_suggest_ms.median)} ms, p99 ${f(r.model_suggest_ms.p99)} ms`,
    )
    this.log(
      `  mean over the block: ${f(r.cpu_ms_per_suggestion)} ms CPU, ${f(r.wall_ms_per_suggestion)} ms wall per suggestion (CPU is what the optimiser costs; wall adds waiting for a busy machine)`,
    )
    this.log(
      `  ask: median ${f(r.ask_ms.median)} ms, p99 ${f(r.ask_ms.p99)} ms; tell (KDE refit): median ${f(r.tell_ms.median)} ms, p99 ${f(r.tell_ms.p99)} ms`,
    )
    this.log(
      `BOHB on kt bench workers' workload (counting_ones, seed ${WORKERS_WORKLOAD.seed}, ${WORKERS_WORKLOAD.trialsPerProcess} trials per process, results outstanding as that many processes leave them), mean wall time per call (ms): ask / tell / a copy's hinted replay of the ask / its tell`,
    )
    for (const [label, rows] of [
      [
        'cold: the first pass in this process (1, 2, 4, 8 processes in turn, so only the first rows are fully cold)',
        w.cold,
      ],
      [`warm (median of ${w.passes} passes)`, w.warm],
    ] as const) {
      this.log(`  ${label}`)
      for (const row of rows)
        this.log(
          `    ${String(row.processes).padStart(1)} process${row.processes > 1 ? 'es' : '  '}, ${String(row.trials).padStart(4)} trials (${String(row.model_based_asks).padStart(3)} model-based asks): ${f(row.ask_ms)} / ${f(row.tell_ms)} / ${f(row.replay_ask_ms)} / ${f(row.replay_tell_ms)}`,
        )
    }
    this.log(
      `  process CPU over the warm passes: ${f(w.warm_cpu_ms_per_trial)} ms per trial (its ask, tell, replayed ask and replayed tell, plus the objective)`,
    )
    return {...r, workers_workload: w}
  }
}
