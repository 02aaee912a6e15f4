import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'

export default class OnlineWorkload extends KtCommand {
  static override summary = 'Simulate a tenant whose queries shift from entity lookups to temporal questions, and the bandits retuning the retrieval engine.'
  static override description = [
    'The reward is a SYNTHETIC model of answer quality per query type (src/online/workload.ts, IDEALS): entity lookups and temporal',
    'questions prefer different retrieval parameters; the probability that a retrieved node is used is that quality. The real engine is',
    'not run per query. 90% entity lookups until T/2, then 90% temporal questions; one query per second, uses reported 1-30 s later,',
    'unused queries count as reward 0 when their 5-minute window closes (the tenants\' own feedback join). Policies: the deployed profile',
    'unchanged, Thompson sampling without forgetting (ts), with the scheduled decay (ts-decay), with change detection (ts-adaptive), and',
    'the oracle (the best bins for the current mix, found by coordinate ascent). Reports mean expected quality before the shift and in',
    'windows after it, and the regret after the shift against the oracle.',
  ].join(' ')

  static override examples = ['<%= config.bin %> online workload', '<%= config.bin %> online workload --steps 40000 --runs 5 --json']
  static override flags = {
    steps: Flags.integer({description: 'Queries per run (the mix shifts at steps/2).', default: 20000, min: 100}),
    runs: Flags.integer({description: 'Independent runs.', default: 3, min: 1}),
    window: Flags.integer({description: 'Width of the reporting windows after the shift, in queries.', default: 2000, min: 10}),
    seed: Flags.integer({description: 'Seed of every random choice.', default: 42}),
    sampler: Flags.string({description: 'Posterior draw (default the tenants\' DEFAULT_SAMPLER).', options: ['logit', 'gaussian', 'exact']}),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(OnlineWorkload)
    const {simulateWorkload} = await import('../../online/workload.js')
    const {DEFAULT_SAMPLER} = await import('../../online/bandit.js')
    const {renderTable, fixed} = await import('../../online/format.js')
    const spinner = this.spinner('kt online workload')
    const report = simulateWorkload(
      {steps: flags.steps, runs: flags.runs, seed: flags.seed, window: flags.window, sampler: (flags.sampler ?? DEFAULT_SAMPLER) as 'logit' | 'gaussian' | 'exact'},
      (policy, run) => void spinner.update(`kt online workload: ${policy} run ${run + 1}/${flags.runs}`),
    )
    await spinner.succeed('kt online workload: done')
    if (!this.jsonEnabled()) {
      this.log(`synthetic reward model; ${report.runs} runs x ${report.steps} queries, mix shifts at ${report.shift_at}; oracle quality ${report.oracle_quality.before.toFixed(3)} before, ${report.oracle_quality.after.toFixed(3)} after`)
      const first = Object.values(report.policies)[0]
      const header = ['policy', `before (last ${flags.window})`, ...first.after_shift.map((w) => `+${w.from - report.shift_at}..${w.to - report.shift_at}`), 'regret after shift', '± se']
      this.log(renderTable(header, Object.entries(report.policies).map(([name, p]) => [name, fixed(p.before_shift.quality_mean, 3), ...p.after_shift.map((w) => fixed(w.quality_mean, 3)), fixed(p.regret_after_shift_mean, 0), fixed(p.regret_after_shift_se, 0)])))
      this.log('\nvalues believed best at the end (run 1):')
      const keys = Object.keys(first.final_best)
      this.log(renderTable(['policy', ...keys], Object.entries(report.policies).map(([name, p]) => [name, ...keys.map((k) => {
        const v = p.final_best[k]
        return typeof v === 'number' ? String(Number(v.toPrecision(3))) : String(v)
      })])))
    }
    return report
  }
}
