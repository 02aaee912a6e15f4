import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'

export default class OnlineSimulate extends KtCommand {
  static override summary =
    'Simulate the bandits on ten-armed environments: Thompson sampling (plain, scheduled decay, adaptive) against UCB1 and epsilon-greedy.'
  static override description = [
    'Environments (10 arms): lin = Bernoulli means 0.10 + 0.08k; hard = one arm 0.50, nine 0.45; rand = means U(0,1) per run;',
    'cat5 = rewards {0,.25,.5,.75,1} with level probabilities from a flat Dirichlet per arm; switch-rise / switch-drop / switch-reverse',
    'run lin and at T/2 the worst arm jumps to 0.95, the best drops to 0.05, or all means reverse.',
    'Reports cumulative pseudo-regret (mean and standard error over runs; also at the steps of a 1-2-5 series up to T, since',
    "Thompson sampling's regret grows like log T and epsilon-greedy's linearly), Thompson sampling's final regret against every other",
    'algorithm paired by run (absolute and relative deltas with bootstrap intervals), the share of optimal pulls in the last 10% of steps and,',
    'for switches, the steps to recover: the first step after the switch from which the share of optimal pulls in the trailing',
    '100 post-switch steps stays >= 0.5 to the end of the run (a run that gets there less than 100 steps before the end never recovered);',
    'the median counts never-recovered runs as infinitely slow (null when half or more never recovered).',
    'All algorithms in a run face the same environment and the same reward draws (common random numbers).',
    "ts-adaptive is the tenants' adaptive forgetting: a Page-Hinkley test for falls of the reward plus a per-arm change model that",
    're-tries long-idle arms (src/online/README.md); the --*-half-life flags override its settings for trade-off studies.',
  ].join(' ')

  static override examples = [
    '<%= config.bin %> online simulate --env lin --runs 100 --steps 5000',
    '<%= config.bin %> online simulate --env switch-rise --runs 50 --steps 5000 --json',
    '<%= config.bin %> online simulate --env switch-drop --runs 50 --steps 5000 --sampler exact --half-life 1000',
    '<%= config.bin %> online simulate --env lin --change-half-life 0 --stale-half-life 500',
  ]

  static override flags = {
    env: Flags.string({
      description: 'Environment.',
      required: true,
      options: ['lin', 'hard', 'rand', 'cat5', 'switch-rise', 'switch-drop', 'switch-reverse'],
    }),
    runs: Flags.integer({
      description: 'Independent runs (regret standard errors are over runs).',
      default: 100,
      min: 1,
    }),
    steps: Flags.integer({description: 'Steps per run (T; switches happen at T/2).', default: 5000, min: 20}),
    seed: Flags.integer({
      description: 'Seed of every random choice (same seed and flags give the same numbers).',
      default: 42,
    }),
    sampler: Flags.string({
      description:
        "How Thompson sampling draws from an arm posterior: exact Beta/Dirichlet, moment-matched Gaussian, or logistic-normal; default the tenants' DEFAULT_SAMPLER.",
      options: ['exact', 'gaussian', 'logit'],
    }),
    'change-half-life': Flags.integer({
      description:
        "ts-adaptive's change model: idle steps after which an arm has changed with prior probability 1/2 (0 = no change model); default the tenants' CHANGE_HALF_LIFE_QUERIES.",
      min: 0,
    }),
    'stale-half-life': Flags.integer({
      description:
        "ts-adaptive: half-life of an arm's evidence while it is not played, in steps (0 = none, the default; for the trade-off study).",
      min: 0,
    }),
    'half-life': Flags.integer({
      description:
        'ts-adaptive: background half-life of all evidence in steps (0 = none, the default; for the trade-off study).',
      min: 0,
    }),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(OnlineSimulate)
    const {simulate, RECOVERY_SHARE, RECOVERY_WINDOW} = await import('../../online/simulate.js')
    const {ADAPTIVE_DEFAULTS} = await import('../../online/forgetting.js')
    const {DEFAULT_SAMPLER} = await import('../../online/bandit.js')
    const {renderTable, fixed} = await import('../../online/format.js')
    type Env = Parameters<typeof simulate>[0]['env']
    const sampler = (flags.sampler ?? DEFAULT_SAMPLER) as 'exact' | 'gaussian' | 'logit'
    if (ADAPTIVE_DEFAULTS.kind !== 'adaptive') throw new Error('ADAPTIVE_DEFAULTS must be adaptive')
    const override = (value: number | undefined, fallback: number | null | undefined): number | null =>
      value === undefined ? (fallback ?? null) : value === 0 ? null : value
    const adaptive = {
      ...ADAPTIVE_DEFAULTS,
      halfLife: override(flags['half-life'], ADAPTIVE_DEFAULTS.halfLife),
      changeHalfLife: override(flags['change-half-life'], ADAPTIVE_DEFAULTS.changeHalfLife),
      staleHalfLife: override(flags['stale-half-life'], ADAPTIVE_DEFAULTS.staleHalfLife),
    }
    const spinner = this.spinner(`kt online simulate ${flags.env}: run 0/${flags.runs}`)
    const report = simulate(
      {env: flags.env as Env, runs: flags.runs, steps: flags.steps, seed: flags.seed, sampler, adaptive},
      (run) => {
        void spinner.update(`kt online simulate ${flags.env}: run ${run + 1}/${flags.runs}`)
      },
    )
    await spinner.succeed(`kt online simulate ${flags.env}: ${flags.runs} runs x ${flags.steps} steps`)
    if (!this.jsonEnabled()) {
      const isSwitch = flags.env.startsWith('switch')
      const none = (v: number | null): string => (v === null ? 'none' : String(v))
      this.log(
        `env ${report.env}: 10 arms, ${report.runs} runs x ${report.steps} steps, sampler ${sampler}, seed ${flags.seed}`,
      )
      this.log(
        `ts-adaptive: Page-Hinkley on falls, change half-life ${none(adaptive.changeHalfLife)}, staleness half-life ${none(adaptive.staleHalfLife)}, background half-life ${none(adaptive.halfLife)}`,
      )
      const header = ['algorithm', 'regret mean', '± se', 'optimal share last 10%']
      if (isSwitch) header.push('recovery median', 'never recovered')
      const rows = Object.entries(report.algorithms).map(([name, s]) => {
        const row = [name, fixed(s.regret_mean, 1), fixed(s.regret_se, 1), fixed(s.optimal_share_last10, 3)]
        if (isSwitch)
          row.push(
            s.recovery_steps_median === null ? 'never' : String(s.recovery_steps_median),
            fixed(s.never_recovered_share, 2),
          )
        return row
      })
      this.log(renderTable(header, rows))
      if (isSwitch)
        this.log(
          `recovered = trailing ${RECOVERY_WINDOW}-step share of optimal pulls stays >= ${RECOVERY_SHARE} from that step to the end`,
        )
      const names = Object.keys(report.algorithms)
      const steps = report.algorithms[names[0]].regret_at.map((c) => c.step)
      this.log('')
      this.log('cumulative regret (mean) at step')
      this.log(
        renderTable(
          ['step', ...names],
          steps.map((step, c) => [String(step), ...names.map((n) => fixed(report.algorithms[n].regret_at[c].mean, 1))]),
        ),
      )
      if (report.comparisons.length > 0) {
        this.log('')
        const pct = (x: number | null): string => (x === null ? '-' : `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}%`)
        const abs = (x: number | null): string => (x === null ? '-' : `${x >= 0 ? '+' : ''}${x.toFixed(1)}`)
        const level = Math.round(100 * report.comparisons[0].confidence)
        this.log(`final regret, paired by run (bootstrap ${level}% intervals over runs)`)
        this.log(
          renderTable(
            ['comparison', 'absolute delta', `${level}% CI`, 'relative delta', `${level}% CI`],
            report.comparisons.map((c) => [
              `${c.algorithm} - ${c.baseline}`,
              abs(c.delta_absolute.estimate),
              `[${abs(c.delta_absolute.low)}, ${abs(c.delta_absolute.high)}]`,
              pct(c.delta_relative.estimate),
              `[${pct(c.delta_relative.low)}, ${pct(c.delta_relative.high)}]`,
            ]),
          ),
        )
      }
    }
    return report
  }
}
