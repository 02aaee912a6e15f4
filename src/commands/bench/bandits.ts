import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'

export default class BenchBandits extends KtCommand {
  static override summary = 'Time Thompson sampling per query for 11 parameters (target <= 5 µs).'
  static override description =
    "Warms a tenant's bandits with random feedback, then times drawing one arm per dimension (11 parameters of 10 bins: 110 arms; and the retrieval space's 11 tuned parameters, 13 dimensions), for binary (Beta) and graded (4-level Dirichlet) feedback and each sampler: exact gamma draws, moment-matched Gaussian, logistic-normal (the default). Random feedback makes every arm of a dimension about equally good, the worst case for sampling (every arm stays a contender). Also times sampling plus building the configuration, and crediting feedback. Reports the median over repetitions and the machine's load average; timings depend on the machine and its load (on a shared machine, compare medians of repeated runs)."
  static override examples = [
    '<%= config.bin %> bench bandits --queries 1000 --repetitions 1',
    '<%= config.bin %> bench bandits --queries 1000 --repetitions 3 --json',
  ]
  static override flags = {
    queries: Flags.integer({description: 'Queries per timed repetition.', default: 5000, min: 100}),
    repetitions: Flags.integer({description: 'Timed repetitions (the median is reported).', default: 11, min: 1}),
    seed: Flags.integer({description: 'Seed of the warm-up feedback and the draws.', default: 42}),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(BenchBandits)
    const {runBanditBench, TARGET_US_PER_QUERY} = await import('../../bench/bandits.js')
    const {renderTable} = await import('../../online/format.js')
    const {availableParallelism, loadavg} = await import('node:os')
    const spinner = this.spinner('kt bench bandits: timing')
    const cases = runBanditBench({queries: flags.queries, repetitions: flags.repetitions, seed: flags.seed})
    await spinner.succeed('kt bench bandits: done')
    const load = {load_average_1m: loadavg()[0], cores: availableParallelism()}
    if (!this.jsonEnabled()) {
      this.log(
        `load average ${load.load_average_1m.toFixed(2)} on ${load.cores} cores; median of ${flags.repetitions} repetitions x ${flags.queries} queries`,
      )
      this.log(
        renderTable(
          [
            'space',
            'params',
            'dims',
            'arms',
            'levels',
            'sampler',
            'sample µs/query',
            'best',
            'sample+config µs',
            'feedback+sample µs',
            `median <= ${TARGET_US_PER_QUERY} µs`,
          ],
          cases.map((c) => [
            c.space,
            String(c.parameters),
            String(c.dimensions),
            String(c.arms),
            String(c.levels),
            c.default_sampler ? `${c.sampler} (default)` : c.sampler,
            c.sample_us_per_query.toFixed(2),
            c.sample_us_per_query_best.toFixed(2),
            c.choose_us_per_query.toFixed(2),
            c.feedback_and_sample_us.toFixed(2),
            c.meets_target ? 'yes' : 'NO',
          ]),
        ),
      )
    }
    return {target_us_per_query: TARGET_US_PER_QUERY, ...load, cases}
  }
}
