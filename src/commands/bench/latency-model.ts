import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'
import {InputError} from '../../util/errors.js'

export default class BenchLatencyModel extends KtCommand {
  static override summary =
    'Re-measures the retrieval latency cost model (ns per work unit, fixed overhead per query) and compares it with the committed constants.'
  static override description =
    "The retrieval search objective ranks configurations by an estimated P99 latency, work x NS_PER_WORK_UNIT + FIXED_QUERY_OVERHEAD_MS (src/engine/retrieval/cost.ts), where work is the query's counted inner-loop steps, so that a study repeats exactly. This command checks that model on this machine: for seeded synthetic conversations of each size and the default plus random configurations, it takes each query's minimum wall time over the repeats, fits wall time against work by least squares and prints the fitted constants, R^2, the committed constants and their ratio. Run it when the machine is quiet (see the load average it prints)."
  static override examples = [
    '<%= config.bin %> bench latency-model --turns 100,300 --configs 1 --repeats 1',
    '<%= config.bin %> bench latency-model --data fixtures/memory_small.json --turns 100,300 --configs 1 --repeats 1',
    '<%= config.bin %> bench latency-model --turns 100,300 --configs 2 --repeats 2 --json',
  ]
  static override flags = {
    // The sizes of the conversations the retrieval objective evaluates: the fixtures have about 130 turns, LoCoMo conversations 300-700.
    turns: Flags.string({description: 'Corpus sizes in turns, comma-separated.', default: '100,300,1000,3000'}),
    configs: Flags.integer({
      description: 'Random configurations from the retrieval space besides the defaults.',
      default: 8,
      min: 0,
    }),
    repeats: Flags.integer({
      description: 'Timed passes; each query counts with its minimum wall time over them.',
      default: 9,
      min: 1,
    }),
    seed: Flags.integer({description: 'Seed of the synthetic corpora and the random configurations.', default: 42}),
    data: Flags.string({
      description:
        'A memory dataset (LoCoMo .json, .jsonl or .csv) to check the committed model on as well; not part of the fit.',
    }),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(BenchLatencyModel)
    const sizes = flags.turns.split(',').map((s) => {
      const n = Number(s.trim())
      if (!Number.isInteger(n) || n < 100)
        throw new InputError('--turns', 'comma-separated integers >= 100', JSON.stringify(s))
      return n
    })
    const {measureLatencyModel} = await import('../../bench/latency-model.js')
    let data
    if (flags.data !== undefined) {
      const {loadMemoryDataset} = await import('../../data/conversations/index.js')
      const {prepareEvaluation} = await import('../../eval/harness.js')
      data = prepareEvaluation(loadMemoryDataset(flags.data))
    }
    const progress = this.spinner('measuring')
    const report = measureLatencyModel(
      {sizes, configs: flags.configs, repeats: flags.repeats, seed: flags.seed, data},
      (stage) => void progress.update(`measuring ${stage}`),
    )
    await progress.succeed('done')
    if (!this.jsonEnabled()) {
      const {fit, committed, ratio, committedRelativeError: err, load} = report
      const f = (x: number | null | undefined, d = 3): string => (x === null || x === undefined ? 'n/a' : x.toFixed(d))
      this.log(
        `points: ${report.points.length} queries x configurations (${sizes.join(', ')} turns; ${flags.configs + 1} configurations; minimum of ${flags.repeats} passes)`,
      )
      this.log(
        `fitted:    ${f(fit?.nsPerWorkUnit, 2)} ns per work unit, ${f(fit?.fixedOverheadMs, 4)} ms fixed per query, R^2 ${f(fit?.rSquared, 4)}`,
      )
      this.log(
        `  by size: ${report.bySize.map((b) => `${b.turns} turns ${f(b.fit?.nsPerWorkUnit, 2)} ns + ${f(b.fit?.fixedOverheadMs, 4)} ms (R^2 ${f(b.fit?.rSquared, 3)})`).join('; ')}`,
      )
      this.log(
        `committed: ${f(committed.nsPerWorkUnit, 2)} ns per work unit, ${f(committed.fixedOverheadMs, 4)} ms fixed per query`,
      )
      this.log(
        `ratio fitted / committed: ${f(ratio.nsPerWorkUnit, 2)} x per work unit, ${f(ratio.fixedOverheadMs, 2)} x fixed`,
      )
      this.log(
        `committed model against these timings: median relative error ${f(100 * err.median, 1)}%, 90th percentile ${f(100 * err.p90, 1)}%`,
      )
      const d = report.dataset
      if (d) {
        this.log(
          `on ${d.source} (${d.points} queries x configurations, not in the fit): committed model median relative error ${f(100 * d.committedRelativeError.median, 1)}%, 90th percentile ${f(100 * d.committedRelativeError.p90, 1)}%`,
        )
        this.log(
          `  P99 measured ${f(d.measuredP99Ms)} ms, estimated ${f(d.estimatedP99Ms)} ms; fit on it alone: ${f(d.fit?.nsPerWorkUnit, 2)} ns per unit, ${f(d.fit?.fixedOverheadMs, 4)} ms fixed, R^2 ${f(d.fit?.rSquared, 4)}`,
        )
      }
      this.log(
        `load average (1 min): ${f(load.before, 2)} before, ${f(load.after, 2)} after, on ${load.cores} cores; timings on a loaded machine are slower and noisier`,
      )
    }
    const {snakeKeys} = await import('../../util/json-keys.js')
    return snakeKeys({
      fit: report.fit,
      committed: report.committed,
      ratio: report.ratio,
      by_size: report.bySize,
      committed_relative_error: report.committedRelativeError,
      dataset: report.dataset ?? null,
      load: report.load,
      points: report.points.length,
    })
  }
}
