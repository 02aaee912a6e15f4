import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'
import {InputError} from '../../util/errors.js'

export default class OnlineWorkload extends KtCommand {
  static override summary =
    'Simulate a tenant whose queries shift from entity lookups to temporal questions, and the bandits retuning the retrieval engine.'
  static override description = [
    "90% entity lookups until T/2, then 90% temporal questions; one query per second, the tenant's own bandits choose the retrieval",
    'parameters (its real code path: sampled arms, the 5-minute implicit-feedback window), uses reported 1-30 s after the query, unused',
    'queries count as reward 0 when their window closes. Policies: the deployed profile unchanged, Thompson sampling without forgetting',
    '(ts), with the scheduled decay (ts-decay), with change detection (ts-adaptive), and a reference.',
    'Without --data the reward is a SYNTHETIC model of answer quality per query type (src/online/workload.ts, IDEALS); the reference is',
    'the oracle (the best bins for the current mix, coordinate ascent) and quality is the expected quality under the mix.',
    'With --data the reward is the REAL ENGINE on a memory dataset (any format kt eval reads), built once per conversation: entity',
    'lookups are drawn from its single-hop questions, temporal ones from its temporal questions (uniformly, with replacement, the same',
    'questions for every policy of a run); a query is used when an evidence turn is in the top --k. The reference "tuned" is the best bins',
    'per phase by coordinate ascent on the pool hit rate, tuned IN-SAMPLE on the very questions it is scored on (an upper reference, not an',
    "oracle). Quality is the hit rate; regret after the shift counts, query by query, the tuned reference's hits minus the policy's.",
    'Reports quality before the shift and in windows after it, the regret after the shift, and the values the bandits believe best at the end.',
  ].join(' ')

  static override examples = [
    '<%= config.bin %> online workload --steps 5000',
    '<%= config.bin %> online workload --steps 4000 --runs 1 --json',
    '<%= config.bin %> online workload --data fixtures/memory_small.json --steps 2000 --window 500 --k 5',
  ]

  static override flags = {
    data: Flags.string({
      description:
        'Memory dataset (LoCoMo .json, kt .jsonl or .csv turns): run the real engine as the reward model instead of the synthetic one.',
    }),
    format: Flags.string({
      description: 'With --data: input format (default: from the file extension).',
      options: ['locomo', 'jsonl', 'csv'],
    }),
    questions: Flags.string({
      description: 'With --data: JSONL questions {question, evidence, category, conversation?} for JSONL/CSV turns.',
    }),
    k: Flags.integer({
      description: `With --data: a query is used when an evidence turn is in the engine's top k (default 10).`,
      min: 1,
    }),
    steps: Flags.integer({description: 'Queries per run (the mix shifts at steps/2). Default 20000.', min: 100}),
    runs: Flags.integer({description: 'Independent runs.', default: 3, min: 1}),
    window: Flags.integer({
      description: 'Width of the reporting windows after the shift, in queries.',
      default: 2000,
      min: 10,
    }),
    seed: Flags.integer({description: 'Seed of every random choice.', default: 42}),
    sampler: Flags.string({
      description: "Posterior draw (default the tenants' DEFAULT_SAMPLER).",
      options: ['logit', 'gaussian', 'exact'],
    }),
    'per-type': Flags.boolean({
      description:
        'Also run each learner with one set of bandits per query type (ts-per-type, ts-decay-per-type, ts-adaptive-per-type: init --per-type, each query naming its type).',
    }),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(OnlineWorkload)
    const {DEFAULT_SAMPLER} = await import('../../online/bandit.js')
    const sampler = (flags.sampler ?? DEFAULT_SAMPLER) as 'logit' | 'gaussian' | 'exact'
    if (flags.data === undefined) {
      for (const flag of ['k', 'format', 'questions'] as const)
        if (flags[flag] !== undefined)
          throw new InputError(
            `--${flag}`,
            'to be given only with --data (the synthetic reward model runs no engine)',
            String(flags[flag]),
          )
      return this.synthetic({
        steps: flags.steps ?? 20000,
        runs: flags.runs,
        seed: flags.seed,
        window: flags.window,
        sampler,
        perType: flags['per-type'],
      })
    }
    const {ENGINE_WORKLOAD_STEPS, DEFAULT_WORKLOAD_K} = await import('../../online/engine-workload.js')
    const {loadMemoryDataset} = await import('../../data/conversations/index.js')
    const dataset = loadMemoryDataset(flags.data, {
      format: flags.format as 'locomo' | 'jsonl' | 'csv' | undefined,
      questions: flags.questions,
    })
    return this.engine(dataset, {
      steps: flags.steps ?? ENGINE_WORKLOAD_STEPS,
      runs: flags.runs,
      seed: flags.seed,
      window: flags.window,
      sampler,
      k: flags.k ?? DEFAULT_WORKLOAD_K,
      perType: flags['per-type'],
    })
  }

  private async synthetic(options: import('../../online/workload.js').WorkloadOptions): Promise<unknown> {
    const {simulateWorkload} = await import('../../online/workload.js')
    const {renderTable} = await import('../../online/format.js')
    const spinner = this.spinner('kt online workload')
    const report = simulateWorkload(options, (p) => {
      if (p.step === 0) spinner.update(`kt online workload: ${p.policy} run ${p.run + 1}/${options.runs}`)
    })
    await spinner.succeed('kt online workload: done')
    if (!this.jsonEnabled()) {
      this.log(
        `synthetic reward model; ${report.runs} runs x ${report.steps} queries, mix shifts at ${report.shift_at}; oracle quality ${report.oracle_quality.before.toFixed(3)} before, ${report.oracle_quality.after.toFixed(3)} after`,
      )
      this.log(renderTable(...(await this.qualityTable(report.policies, report.shift_at, options.window))))
      this.log('\nvalues believed best at the end (run 1):')
      const keys = Object.keys(Object.values(report.policies)[0].final_best)
      this.log(
        renderTable(
          ['policy', ...keys],
          Object.entries(report.policies).map(([name, p]) => [name, ...keys.map((k) => shortValue(p.final_best[k]))]),
        ),
      )
    }
    return report
  }

  private async engine(
    dataset: import('../../data/conversations/types.js').MemoryDataset,
    options: import('../../online/engine-workload.js').EngineWorkloadOptions,
  ): Promise<unknown> {
    const {simulateEngineWorkload} = await import('../../online/engine-workload.js')
    const {renderTable, fixed} = await import('../../online/format.js')
    const spinner = this.spinner('kt online workload')
    const report = simulateEngineWorkload(
      dataset,
      options,
      (message) => void spinner.update(`kt online workload: ${message}`),
    )
    await spinner.succeed('kt online workload: done')
    if (!this.jsonEnabled()) {
      const pools = Object.entries(report.pools)
        .map(([type, p]) => `${p.questions} ${p.category} (${type})`)
        .join(', ')
      this.log(
        `engine reward model: ${report.data}, hit@${report.k}; pools ${pools}; ${report.runs} runs x ${report.steps} queries, mix shifts at ${report.shift_at}, seed ${report.seed}`,
      )
      const rates = (label: string, r: typeof report.profile_hit_rate): string[] => [
        label,
        fixed(r.by_type.entity_lookup, 3),
        fixed(r.by_type.temporal, 3),
        fixed(r.before, 3),
        fixed(r.after, 3),
      ]
      this.log(`\npool hit@${report.k} (every question of the pools):`)
      this.log(
        renderTable(
          ['configuration', 'entity lookups', 'temporal', 'mix before', 'mix after'],
          [
            rates('profile (deployed)', report.profile_hit_rate),
            rates("profile's bins (bandits' start)", report.profile_bins_hit_rate),
            rates('tuned for before (in-sample)', report.tuned_reference.before.rates),
            rates('tuned for after (in-sample)', report.tuned_reference.after.rates),
          ],
        ),
      )
      this.log(`"tuned" is ${report.tuned_reference.note}.`)
      this.log(
        `\nhit rate of the simulated queries (same questions for every policy of a run); regret = tuned's hits - the policy's, after the shift:`,
      )
      this.log(renderTable(...(await this.qualityTable(report.policies, report.shift_at, options.window))))
      this.log(
        "\nvalues believed best at the end (run 1; profile: its bins), and the tuned reference's bins per phase; fusion members are arm values, played after projection onto the simplex:",
      )
      const names = Object.keys(report.policies).filter((n) => n !== 'tuned')
      const keys = Object.keys(report.tuned_reference.before.values)
      const tunedValues = [report.tuned_reference.before.values, report.tuned_reference.after.values]
      this.log(
        renderTable(
          ['parameter', 'deployed', ...names, 'tuned before', 'tuned after'],
          keys.map((k) => [
            k,
            shortValue(report.profile_values[k]),
            ...names.map((n) => shortValue(report.policies[n].final_best[k])),
            ...tunedValues.map((v) => shortValue(v[k])),
          ]),
        ),
      )
      const t = report.timing
      this.log(
        `\ntiming: ${t.simulated_queries} simulated queries in ${(t.simulation_ms / 1000).toFixed(1)} s (${Math.round(t.queries_per_second)} queries/s; ${t.engine_searches} engine searches, ${(100 * t.memoised_share).toFixed(0)}% of lookups memoised); engines built in ${(t.build_ms / 1000).toFixed(1)} s; reference tuned in ${(t.tuning_ms / 1000).toFixed(1)} s (${t.tuning_searches} searches)`,
      )
    }
    return report
  }

  /** Header and rows of the quality-over-time table both reward models print. */
  private async qualityTable(
    policies: Record<string, import('../../online/workload.js').WorkloadPolicyReport>,
    shiftAt: number,
    window: number,
  ): Promise<[string[], string[][]]> {
    const {fixed} = await import('../../online/format.js')
    const first = Object.values(policies)[0]
    const header = [
      'policy',
      `before (last ${window})`,
      ...first.after_shift.map((w) => `+${w.from - shiftAt}..${w.to - shiftAt}`),
      'regret after shift',
      '± se',
    ]
    const rows = Object.entries(policies).map(([name, p]) => [
      name,
      fixed(p.before_shift.quality_mean, 3),
      ...p.after_shift.map((w) => fixed(w.quality_mean, 3)),
      fixed(p.regret_after_shift_mean, 0),
      fixed(p.regret_after_shift_se, 0),
    ])
    return [header, rows]
  }
}

/** A parameter value in a table cell: numbers to three significant digits. */
function shortValue(v: string | number | boolean | undefined): string {
  return v === undefined ? '-' : typeof v === 'number' ? String(Number(v.toPrecision(3))) : String(v)
}
