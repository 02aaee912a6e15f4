/**
 * The bandit simulator behind `kt online simulate`: ten-armed environments from the issue, the
 * three Thompson-sampling variants (no forgetting, scheduled decay, adaptive) built from the same
 * posterior and forgetting code the tenants use, and UCB1 and epsilon-greedy as baselines.
 *
 * Reported per algorithm: cumulative pseudo-regret sum_t (mu*_t - mu_{a_t}) (mean and standard
 * error over runs), the share of optimal pulls in the last 10% of steps, and, for the switch
 * environments, the steps to recover (definition at `recoverySteps`).
 *
 * Runs use common random numbers: in a run every algorithm faces the same environment and the
 * same uniform draw per step (reward = level of that draw for the pulled arm), so differences
 * between algorithms are not noise from different reward sequences.
 */
import {Rng} from '../util/rng.js'
import {mean, median, standardError} from '../stats/summary.js'
import {bootstrapCI} from '../stats/bootstrap.js'
import {ArmPosteriors} from './posterior.js'
import {type Forgetting, type ForgettingSettings, forgettingDefaults, makeForgetting} from './forgetting.js'
import {type SamplerKind, DrawStream, streamSeed} from './sampling.js'

/** Arms in every simulated environment (the issue). */
const SIM_ARMS = 10
/** lin: arm k has Bernoulli mean LIN_BASE + LIN_STEP k (the issue: 0.10 + 0.08k). */
const LIN_BASE = 0.1
const LIN_STEP = 0.08
/** hard: one arm at HARD_BEST, the other nine at HARD_OTHER (the issue). */
const HARD_BEST = 0.5
const HARD_OTHER = 0.45
/** cat5: rewards on CAT5_LEVELS levels {0, .25, .5, .75, 1} (the issue). */
const CAT5_LEVELS = 5
/** switch-rise: the worst arm jumps to this mean at T/2 (the issue). */
const RISE_TO = 0.95
/** switch-drop: the best arm drops to this mean at T/2 (the issue). */
const DROP_TO = 0.05
/** eps-greedy's exploration rate (the issue: 0.1). */
const EPSILON = 0.1
/** Share of the final steps over which the optimal-pull share is reported (the issue: last 10%). */
const LAST_SHARE = 0.1
/**
 * Recovery after a switch: W = RECOVERY_WINDOW steps of trailing window, threshold
 * RECOVERY_SHARE of optimal pulls in it. A run recovers at the first step after the switch from
 * which the trailing share stays at or above the threshold until the end of the run; recovery
 * that happens less than one window before the end is not counted (too little left to judge).
 * The window counts only steps after the switch (it is shorter for the first W steps).
 * 0.5 = most pulls go to the new optimum; 0.8 is out of reach for `switch-drop`, whose new best
 * (0.74) is only 0.08 above the next arm, for every algorithm that keeps exploring.
 */
export const RECOVERY_WINDOW = 100
export const RECOVERY_SHARE = 0.5
/**
 * Regret is also reported at the steps of a 1-2-5 series from REGRET_CURVE_FIRST up to T: Thompson
 * sampling's regret grows like log T and epsilon-greedy's linearly (a fixed exploration rate pays
 * for every step), so which is lower depends on the horizon; one run shows the whole curve.
 */
const REGRET_CURVE_FIRST = 100
const ONE_TWO_FIVE = [1, 2, 5] as const
/** The algorithm the comparisons are about; every other simulated algorithm is its baseline. */
const COMPARED = 'ts'
/** Bootstrap resamples (over runs) of the comparisons' intervals. */
const COMPARISON_RESAMPLES = 2000

export type EnvironmentName = 'lin' | 'hard' | 'rand' | 'cat5' | 'switch-rise' | 'switch-drop' | 'switch-reverse'
const ALGORITHMS = ['ts', 'ts-decay', 'ts-adaptive', 'ucb1', 'eps-greedy'] as const
type AlgorithmName = (typeof ALGORITHMS)[number]

/** One run of an environment: reward levels and, per phase, the level probabilities of every arm. */
export interface EnvironmentRun {
  readonly levels: number
  /** Step at which the second phase starts (no switch: Infinity). */
  readonly switchAt: number
  /** Cumulative level probabilities per phase: phases[p][arm * levels + l] = P(level <= l). */
  readonly phases: Float64Array[]
  /** Expected reward of every arm per phase. */
  readonly means: Float64Array[]
}

function bernoulliPhase(means: ArrayLike<number>): {cumulative: Float64Array; means: Float64Array} {
  const cumulative = new Float64Array(SIM_ARMS * 2)
  for (let k = 0; k < SIM_ARMS; k++) {
    cumulative[k * 2] = 1 - means[k]
    cumulative[k * 2 + 1] = 1
  }
  return {cumulative, means: Float64Array.from(means)}
}

function linMeans(): Float64Array {
  return Float64Array.from({length: SIM_ARMS}, (_, k) => LIN_BASE + LIN_STEP * k)
}

/** Draws one run of an environment (random means for `rand`, random level distributions for `cat5`). */
export function makeEnvironment(name: EnvironmentName, steps: number, rng: Rng): EnvironmentRun {
  const bernoulli = (phases: Float64Array[], switchAt = Infinity): EnvironmentRun => {
    const built = phases.map(bernoulliPhase)
    return {levels: 2, switchAt, phases: built.map((b) => b.cumulative), means: built.map((b) => b.means)}
  }
  const half = Math.floor(steps / 2)
  switch (name) {
    case 'lin':
      return bernoulli([linMeans()])
    case 'hard':
      return bernoulli([Float64Array.from({length: SIM_ARMS}, (_, k) => (k === SIM_ARMS - 1 ? HARD_BEST : HARD_OTHER))])
    case 'rand':
      return bernoulli([Float64Array.from({length: SIM_ARMS}, () => rng.next())])
    case 'cat5': {
      const cumulative = new Float64Array(SIM_ARMS * CAT5_LEVELS)
      const means = new Float64Array(SIM_ARMS)
      const flat = new Float64Array(CAT5_LEVELS).fill(1)
      for (let k = 0; k < SIM_ARMS; k++) {
        const p = rng.dirichlet(flat)
        let c = 0
        for (let l = 0; l < CAT5_LEVELS; l++) {
          c += p[l]
          cumulative[k * CAT5_LEVELS + l] = l === CAT5_LEVELS - 1 ? 1 : c
          means[k] += (p[l] * l) / (CAT5_LEVELS - 1)
        }
      }
      return {levels: CAT5_LEVELS, switchAt: Infinity, phases: [cumulative], means: [means]}
    }
    case 'switch-rise': {
      const after = linMeans()
      after[0] = RISE_TO
      return bernoulli([linMeans(), after], half)
    }
    case 'switch-drop': {
      const after = linMeans()
      after[SIM_ARMS - 1] = DROP_TO
      return bernoulli([linMeans(), after], half)
    }
    case 'switch-reverse':
      return bernoulli([linMeans(), linMeans().reverse()], half)
  }
}

/** A bandit algorithm as the simulator drives it. */
export interface Policy {
  select(rng: Rng): number
  /** Reward level observed for `arm` (reward = level / (levels - 1)). */
  update(arm: number, level: number): void
}

/** Thompson sampling on one dimension with a forgetting policy: exactly the tenant code path. */
class ThompsonPolicy implements Policy {
  readonly posterior: ArmPosteriors
  private readonly forgetting: Forgetting
  private steps = 0
  private readonly played = new Uint8Array(1)
  /** Draw bits: seeded from the policy's Rng at the first selection (a run gives each policy its own Rng). */
  private stream: DrawStream | null = null

  constructor(
    arms: number,
    levels: number,
    settings: ForgettingSettings,
    private readonly sampler: SamplerKind,
  ) {
    this.posterior = new ArmPosteriors(arms, levels)
    this.forgetting = makeForgetting(settings)
  }

  select(rng: Rng): number {
    this.stream ??= new DrawStream(rng)
    return this.posterior.sampleBest(this.stream, this.sampler)
  }

  update(arm: number, level: number): void {
    this.steps++
    this.played[0] = arm
    this.forgetting.onQuery(this.steps, [this.posterior], this.played)
    this.posterior.observe(arm, level)
    this.forgetting.onOutcome(level, [this.posterior], this.played, this.steps)
  }

  get alarms(): number {
    return this.forgetting.alarms
  }
}

/** Running means of rewards per arm (shared by UCB1 and epsilon-greedy). */
class EmpiricalMeans {
  readonly pulls: Float64Array
  readonly means: Float64Array
  total = 0
  constructor(
    arms: number,
    private readonly levels: number,
  ) {
    this.pulls = new Float64Array(arms)
    this.means = new Float64Array(arms)
  }
  update(arm: number, level: number): void {
    const reward = level / (this.levels - 1)
    this.total++
    this.pulls[arm]++
    this.means[arm] += (reward - this.means[arm]) / this.pulls[arm]
  }
  /** First arm never pulled, or -1. */
  unpulled(): number {
    for (let k = 0; k < this.pulls.length; k++) if (this.pulls[k] === 0) return k
    return -1
  }
}

/** UCB1 (Auer, Cesa-Bianchi & Fischer 2002): each arm once, then the largest mean + sqrt(2 ln t / n). */
export class Ucb1Policy implements Policy {
  private readonly stats: EmpiricalMeans
  constructor(arms: number, levels: number) {
    this.stats = new EmpiricalMeans(arms, levels)
  }
  select(): number {
    const first = this.stats.unpulled()
    if (first >= 0) return first
    const logT = Math.log(this.stats.total)
    let best = 0
    let bestIndex = -Infinity
    for (let k = 0; k < this.stats.pulls.length; k++) {
      const index = this.stats.means[k] + Math.sqrt((2 * logT) / this.stats.pulls[k])
      if (index > bestIndex) {
        bestIndex = index
        best = k
      }
    }
    return best
  }
  update(arm: number, level: number): void {
    this.stats.update(arm, level)
  }
}

/** Epsilon-greedy: each arm once, then with probability EPSILON a uniform arm, else the best mean (ties to the lowest index). */
export class EpsilonGreedyPolicy implements Policy {
  private readonly stats: EmpiricalMeans
  constructor(
    arms: number,
    levels: number,
    private readonly epsilon = EPSILON,
  ) {
    this.stats = new EmpiricalMeans(arms, levels)
  }
  select(rng: Rng): number {
    const first = this.stats.unpulled()
    if (first >= 0) return first
    if (rng.next() < this.epsilon) return rng.int(this.stats.pulls.length)
    let best = 0
    for (let k = 1; k < this.stats.means.length; k++) if (this.stats.means[k] > this.stats.means[best]) best = k
    return best
  }
  update(arm: number, level: number): void {
    this.stats.update(arm, level)
  }
}

export interface SimulateOptions {
  env: EnvironmentName
  runs: number
  steps: number
  seed: number
  sampler: SamplerKind
  /** Override of the adaptive policy's settings (the trade-off study); default ADAPTIVE_DEFAULTS. */
  adaptive?: ForgettingSettings
  algorithms?: readonly AlgorithmName[]
}

function makePolicy(
  name: AlgorithmName,
  levels: number,
  options: Pick<SimulateOptions, 'sampler' | 'adaptive'>,
): Policy {
  switch (name) {
    case 'ts':
      return new ThompsonPolicy(SIM_ARMS, levels, {kind: 'none'}, options.sampler)
    case 'ts-decay':
      return new ThompsonPolicy(SIM_ARMS, levels, forgettingDefaults('periodic'), options.sampler)
    case 'ts-adaptive':
      return new ThompsonPolicy(SIM_ARMS, levels, options.adaptive ?? forgettingDefaults('adaptive'), options.sampler)
    case 'ucb1':
      return new Ucb1Policy(SIM_ARMS, levels)
    case 'eps-greedy':
      return new EpsilonGreedyPolicy(SIM_ARMS, levels)
  }
}

/** What one run of one algorithm produced. */
export interface RunOutcome {
  regret: number
  /** Cumulative regret after each checkpoint step (same order as the checkpoints given to playRun). */
  regretAt: Float64Array
  optimalShareLast: number
  /** Steps to recover after the switch; null = never (switch environments only; undefined otherwise). */
  recovery?: number | null
}

/** The level of arm `arm` for uniform draw u, from the cumulative level probabilities. */
function levelOf(cumulative: Float64Array, arm: number, levels: number, u: number): number {
  const o = arm * levels
  for (let l = 0; l < levels - 1; l++) if (u < cumulative[o + l]) return l
  return levels - 1
}

/** Arms whose mean is the largest (within floating tolerance). */
function optimalMask(means: Float64Array): Uint8Array {
  let best = -Infinity
  for (const m of means) if (m > best) best = m
  return Uint8Array.from(means, (m) => (m >= best - 1e-12 ? 1 : 0))
}

/** The 1-2-5 series of steps from REGRET_CURVE_FIRST below T, then T itself. */
export function regretCheckpoints(steps: number): number[] {
  const out: number[] = []
  for (let scale = REGRET_CURVE_FIRST; scale < steps; scale *= 10) {
    for (const m of ONE_TWO_FIVE) if (m * scale < steps) out.push(m * scale)
  }
  out.push(steps)
  return out
}

/**
 * Plays one algorithm through one run of an environment; `noiseSeed` fixes the reward draws.
 * `checkpoints` (ascending steps in 1..steps) are where the cumulative regret is recorded.
 */
export function playRun(
  env: EnvironmentRun,
  policy: Policy,
  steps: number,
  policyRng: Rng,
  noiseSeed: number,
  checkpoints: readonly number[] = [steps],
): RunOutcome {
  const noise = new Rng(noiseSeed)
  const optimal = env.means.map(optimalMask)
  const best = env.means.map((m) => Math.max(...m))
  const optimalPulls = new Uint8Array(steps)
  const regretAt = new Float64Array(checkpoints.length)
  let next = 0
  let regret = 0
  for (let t = 0; t < steps; t++) {
    const phase = t < env.switchAt ? 0 : 1
    const arm = policy.select(policyRng)
    const level = levelOf(env.phases[phase], arm, env.levels, noise.next())
    policy.update(arm, level)
    regret += best[phase] - env.means[phase][arm]
    optimalPulls[t] = optimal[phase][arm]
    while (next < checkpoints.length && checkpoints[next] === t + 1) regretAt[next++] = regret
  }
  const lastFrom = steps - Math.max(1, Math.ceil(steps * LAST_SHARE))
  let lastOptimal = 0
  for (let t = lastFrom; t < steps; t++) lastOptimal += optimalPulls[t]
  const outcome: RunOutcome = {regret, regretAt, optimalShareLast: lastOptimal / (steps - lastFrom)}
  if (Number.isFinite(env.switchAt)) outcome.recovery = recoverySteps(optimalPulls, env.switchAt)
  return outcome
}

/**
 * Steps to recover after a switch at step `switchAt`: the smallest d such that, for every step t
 * from switchAt + d to the end, the share of optimal pulls over the trailing window (the last
 * RECOVERY_WINDOW steps up to t, counting only steps at or after the switch) is at least
 * RECOVERY_SHARE. Null (never) when that point is less than RECOVERY_WINDOW steps before the end.
 */
export function recoverySteps(
  optimalPulls: Uint8Array,
  switchAt: number,
  window = RECOVERY_WINDOW,
  share = RECOVERY_SHARE,
): number | null {
  const steps = optimalPulls.length
  let inWindow = 0
  let lastBelow = switchAt - 1
  for (let t = switchAt; t < steps; t++) {
    inWindow += optimalPulls[t]
    if (t - window >= switchAt) inWindow -= optimalPulls[t - window]
    const length = Math.min(window, t - switchAt + 1)
    if (inWindow < share * length) lastBelow = t
  }
  const recoveredAt = lastBelow + 1
  return recoveredAt <= steps - window ? recoveredAt - switchAt : null
}

export interface AlgorithmSummary {
  regret_mean: number
  regret_se: number
  optimal_share_last10: number
  recovery_steps_median: number | null
  never_recovered_share: number | null
  /** Cumulative regret (mean and standard error over runs) at the report's checkpoints. */
  regret_at: {step: number; mean: number; se: number}[]
}

/** An interval estimate: which kind of delta it is is named by the field holding it. */
interface Estimate {
  estimate: number
  low: number | null
  high: number | null
}

/**
 * COMPARED's final regret against one baseline, paired by run (both faced the same environment
 * and reward draws): absolute = mean regret difference (COMPARED - baseline, in regret units);
 * relative = mean(COMPARED) / mean(baseline) - 1. Percentile intervals from one set of bootstrap
 * resamples of the runs.
 */
export interface Comparison {
  algorithm: string
  baseline: string
  delta_absolute: Estimate
  delta_relative: Estimate
  confidence: number
}

export interface SimulationReport {
  env: EnvironmentName
  runs: number
  steps: number
  algorithms: Record<string, AlgorithmSummary>
  comparisons: Comparison[]
}

/**
 * Median steps to recover over all runs, counting a run that never recovered as infinitely slow:
 * null when at least half the runs never recovered (the median is then not a number of steps).
 */
export function recoveryMedian(recoveries: readonly (number | null)[]): number | null {
  const never = recoveries.filter((r) => r === null).length
  if (recoveries.length === 0 || 2 * never >= recoveries.length) return null
  // With fewer than half never recovered the middle order statistics are real step counts; a
  // finite stand-in for "never" keeps the interpolation free of Infinity arithmetic.
  return median(recoveries.map((r) => (r === null ? Number.MAX_VALUE : r)))
}

export function summarize(outcomes: readonly RunOutcome[], checkpoints: readonly number[] = []): AlgorithmSummary {
  const regrets = outcomes.map((o) => o.regret)
  const isSwitch = outcomes.length > 0 && outcomes[0].recovery !== undefined
  const recoveries = outcomes.map((o) => o.recovery ?? null)
  return {
    regret_mean: mean(regrets),
    regret_se: outcomes.length > 1 ? standardError(regrets) : NaN,
    optimal_share_last10: mean(outcomes.map((o) => o.optimalShareLast)),
    recovery_steps_median: isSwitch ? recoveryMedian(recoveries) : null,
    never_recovered_share: isSwitch ? recoveries.filter((r) => r === null).length / outcomes.length : null,
    regret_at: checkpoints.map((step, c) => {
      const at = outcomes.map((o) => o.regretAt[c])
      return {step, mean: mean(at), se: outcomes.length > 1 ? standardError(at) : NaN}
    }),
  }
}

/**
 * Paired comparison of two algorithms' final regrets over the same runs (see Comparison): the
 * absolute and relative deltas are evaluated on the same bootstrap resamples of the runs.
 */
export function compareRegrets(
  algorithm: string,
  a: readonly RunOutcome[],
  baseline: string,
  b: readonly RunOutcome[],
  seed: number,
  resamples = COMPARISON_RESAMPLES,
): Comparison {
  if (a.length !== b.length)
    throw new RangeError(`compareRegrets: ${a.length} runs of ${algorithm} vs ${b.length} of ${baseline}`)
  const meanAt = (outcomes: readonly RunOutcome[], indices: Int32Array): number => {
    let total = 0
    for (let i = 0; i < indices.length; i++) total += outcomes[indices[i]].regret
    return total / indices.length
  }
  // The two statistics see the same resamples: two generators from one seed.
  const absolute = bootstrapCI(a.length, (idx) => meanAt(a, idx) - meanAt(b, idx), {rng: new Rng(seed), resamples})
  const relative = bootstrapCI(
    a.length,
    (idx) => {
      const base = meanAt(b, idx)
      return base > 0 ? meanAt(a, idx) / base - 1 : null
    },
    {rng: new Rng(seed), resamples},
  )
  const estimate = (r: typeof absolute): Estimate => ({estimate: r.estimate ?? NaN, low: r.low, high: r.high})
  return {
    algorithm,
    baseline,
    delta_absolute: estimate(absolute),
    delta_relative: estimate(relative),
    confidence: absolute.confidence,
  }
}

/** Runs every algorithm on `runs` independent runs of the environment. */
export function simulate(options: SimulateOptions, onRun?: (run: number) => void): SimulationReport {
  const algorithms = options.algorithms ?? ALGORITHMS
  const outcomes = new Map<AlgorithmName, RunOutcome[]>(algorithms.map((a) => [a, []]))
  const checkpoints = regretCheckpoints(options.steps)
  for (let run = 0; run < options.runs; run++) {
    const env = makeEnvironment(
      options.env,
      options.steps,
      new Rng(streamSeed(options.seed, options.env, run, 'environment')),
    )
    const noiseSeed = streamSeed(options.seed, options.env, run, 'rewards')
    for (const name of algorithms) {
      const policy = makePolicy(name, env.levels, options)
      const rng = new Rng(streamSeed(options.seed, options.env, run, name))
      outcomes.get(name)!.push(playRun(env, policy, options.steps, rng, noiseSeed, checkpoints))
    }
    onRun?.(run)
  }
  const summaries: Record<string, AlgorithmSummary> = {}
  for (const name of algorithms) summaries[name] = summarize(outcomes.get(name)!, checkpoints)
  const comparisons: Comparison[] = []
  if (algorithms.includes(COMPARED) && options.runs > 1) {
    const seedOf = (baseline: string): number => streamSeed(options.seed, options.env, 0, `comparison:${baseline}`)
    for (const baseline of algorithms) {
      if (baseline === COMPARED) continue
      comparisons.push(
        compareRegrets(COMPARED, outcomes.get(COMPARED)!, baseline, outcomes.get(baseline)!, seedOf(baseline)),
      )
    }
  }
  return {env: options.env, runs: options.runs, steps: options.steps, algorithms: summaries, comparisons}
}
