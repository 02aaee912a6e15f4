/**
 * Forgetting: how old evidence loses weight so the bandits follow a changing workload.
 *
 * - periodic (the issue's default): every DECAY_EVERY_QUERIES queries every arm's evidence
 *   shrinks toward the prior by DECAY_FRACTION. Cheap and harmless, but slow: half the evidence
 *   goes only after ln 2 / 0.05 * 500 ~ 6,800 queries.
 * - adaptive (ours): a two-sided Page-Hinkley test on every arm's reward stream (Page 1954;
 *   Hinkley 1971; used with bandits by Hartland et al. 2006, "Multi-armed bandit, dynamic
 *   environments and meta-bandits"). An alarm resets the arm that changed and shrinks its sibling
 *   arms to ALARM_KEEP_OTHERS of their evidence (a change on one bin usually means the workload
 *   moved, so the others' evidence is suspect too). The test sees only arms that are played, so
 *   it cannot notice an unplayed bin getting better; a slow background half-life
 *   (ADAPTIVE_HALF_LIFE_QUERIES) lets such bins be re-tried eventually. Why this choice: the test
 *   costs nothing while nothing changes (no false alarms at these thresholds in the simulator),
 *   it reacts within tens of pulls when the played configuration gets worse (the usual symptom
 *   of a workload shift), and it is O(1) per observation with six numbers per arm.
 */
import type {ArmPosteriors} from './posterior.js'

/** Default period of the scheduled decay, in queries (the issue: "5% every 500 queries"). */
export const DECAY_EVERY_QUERIES = 500
/** Default share of the evidence removed at each scheduled decay (the issue). */
export const DECAY_FRACTION = 0.05
/**
 * Page-Hinkley tolerance delta: drifts of the mean smaller than this are ignored. 0.1 on rewards
 * in [0, 1]; tuned in the simulator (delta 0.05 gave false alarms on stationary `lin`).
 */
export const PH_DELTA = 0.1
/** Page-Hinkley alarm threshold lambda (cumulative deviation); 8 gave no false alarm on stationary `lin` over 5,000 steps where 5 gave 1.5 per run. */
export const PH_LAMBDA = 8
/** Observations an arm needs since its last reset before it may raise an alarm (its running mean is noise before that). */
export const PH_MIN_SAMPLES = 20
/** Share of evidence the other arms of a dimension keep when one arm raises an alarm. */
export const ALARM_KEEP_OTHERS = 0.3
/**
 * Background half-life of all evidence under the adaptive policy, in queries: the price paid so
 * that a bin that was bad and is never played can still be found when it gets better. Shorter
 * recovers faster from such changes and costs more regret when nothing changes (see
 * `kt online simulate --env switch-rise` and docs/online.md for the trade-off).
 */
export const ADAPTIVE_HALF_LIFE_QUERIES = 2000
/**
 * The background half-life is applied in steps of this many queries (factor 0.5^(25/H) each
 * time) rather than every query: the same decay to within a step, and the posteriors' cached
 * draw parameters are recomputed 25 times less often.
 */
export const ADAPTIVE_DISCOUNT_EVERY_QUERIES = 25

export type ForgettingSettings =
  | {kind: 'none'}
  | {kind: 'periodic'; every: number; fraction: number}
  | {kind: 'adaptive'; halfLife: number | null; delta: number; lambda: number; minSamples: number; keepOthers: number}

export const PERIODIC_DEFAULTS: ForgettingSettings = {kind: 'periodic', every: DECAY_EVERY_QUERIES, fraction: DECAY_FRACTION}
export const ADAPTIVE_DEFAULTS: ForgettingSettings = {
  kind: 'adaptive',
  halfLife: ADAPTIVE_HALF_LIFE_QUERIES,
  delta: PH_DELTA,
  lambda: PH_LAMBDA,
  minSamples: PH_MIN_SAMPLES,
  keepOthers: ALARM_KEEP_OTHERS,
}

export function forgettingDefaults(kind: ForgettingSettings['kind']): ForgettingSettings {
  return kind === 'periodic' ? {...PERIODIC_DEFAULTS} : kind === 'adaptive' ? {...ADAPTIVE_DEFAULTS} : {kind: 'none'}
}

/** Persistable state of a forgetting policy (plain numbers only). */
export type ForgettingState = {alarms: number; detectors?: number[][]}

/** What a policy does to the posteriors as queries and observations arrive. */
export interface Forgetting {
  /** After the query counter was incremented to `counter`. */
  onQuery(counter: number, posteriors: readonly ArmPosteriors[]): void
  /** After an observation of `reward` in [0, 1] on `arm` of dimension `dim`; true when it raised an alarm. */
  onObserve(dim: number, arm: number, reward: number, posteriors: readonly ArmPosteriors[]): boolean
  /** Alarms raised so far. */
  readonly alarms: number
  save(): ForgettingState
  load(state: ForgettingState): void
}

class NoForgetting implements Forgetting {
  alarms = 0
  onQuery(): void {}
  onObserve(): boolean {
    return false
  }
  save(): ForgettingState {
    return {alarms: 0}
  }
  load(): void {}
}

/** The scheduled decay: in phase with the persisted query counter. */
class PeriodicDecay implements Forgetting {
  alarms = 0
  constructor(private readonly settings: {every: number; fraction: number}) {}

  onQuery(counter: number, posteriors: readonly ArmPosteriors[]): void {
    if (counter % this.settings.every !== 0) return
    for (const p of posteriors) p.shrinkAll(1 - this.settings.fraction)
  }

  onObserve(): boolean {
    return false
  }

  save(): ForgettingState {
    return {alarms: 0}
  }

  load(): void {}
}

/** Number of statistics a Page-Hinkley detector keeps per arm. */
const PH_FIELDS = 6
const N = 0, MEAN = 1, UP = 2, UP_MIN = 3, DOWN = 4, DOWN_MAX = 5

/**
 * Two-sided Page-Hinkley detectors, one per arm of one dimension. With x_t the arm's rewards and
 * xbar_t their running mean: down_t = sum (x - xbar + delta) alarms when max(down) - down_t > lambda
 * (the mean fell); up_t = sum (x - xbar - delta) alarms when up_t - min(up) > lambda (it rose).
 */
export class PageHinkley {
  readonly stats: Float64Array

  constructor(
    readonly arms: number,
    private readonly delta: number,
    private readonly lambda: number,
    private readonly minSamples: number,
  ) {
    this.stats = new Float64Array(arms * PH_FIELDS)
  }

  /** Feeds one reward; true when the arm's mean has changed (the arm's detector is then reset). */
  update(arm: number, x: number): boolean {
    const s = this.stats
    const o = arm * PH_FIELDS
    s[o + N] += 1
    s[o + MEAN] += (x - s[o + MEAN]) / s[o + N]
    const deviation = x - s[o + MEAN]
    s[o + DOWN] += deviation + this.delta
    if (s[o + DOWN] > s[o + DOWN_MAX]) s[o + DOWN_MAX] = s[o + DOWN]
    s[o + UP] += deviation - this.delta
    if (s[o + UP] < s[o + UP_MIN]) s[o + UP_MIN] = s[o + UP]
    if (s[o + N] < this.minSamples) return false
    if (s[o + DOWN_MAX] - s[o + DOWN] > this.lambda || s[o + UP] - s[o + UP_MIN] > this.lambda) {
      this.reset(arm)
      return true
    }
    return false
  }

  reset(arm: number): void {
    this.stats.fill(0, arm * PH_FIELDS, (arm + 1) * PH_FIELDS)
  }
}

/** Change detection with local restarts plus a slow background half-life (see the file comment). */
class AdaptiveForgetting implements Forgetting {
  alarms = 0
  private readonly detectors: PageHinkley[]
  /** Share of evidence kept at each discount step. */
  private readonly stepKeep: number

  constructor(
    private readonly settings: Extract<ForgettingSettings, {kind: 'adaptive'}>,
    armsPerDimension: readonly number[],
  ) {
    this.detectors = armsPerDimension.map((arms) => new PageHinkley(arms, settings.delta, settings.lambda, settings.minSamples))
    this.stepKeep = settings.halfLife === null ? 1 : Math.pow(0.5, ADAPTIVE_DISCOUNT_EVERY_QUERIES / settings.halfLife)
  }

  onQuery(counter: number, posteriors: readonly ArmPosteriors[]): void {
    if (this.stepKeep === 1 || counter % ADAPTIVE_DISCOUNT_EVERY_QUERIES !== 0) return
    for (const p of posteriors) p.shrinkAll(this.stepKeep)
  }

  onObserve(dim: number, arm: number, reward: number, posteriors: readonly ArmPosteriors[]): boolean {
    if (!this.detectors[dim].update(arm, reward)) return false
    this.alarms++
    const post = posteriors[dim]
    for (let a = 0; a < post.arms; a++) post.shrinkArm(a, a === arm ? 0 : this.settings.keepOthers)
    return true
  }

  save(): ForgettingState {
    return {alarms: this.alarms, detectors: this.detectors.map((d) => Array.from(d.stats))}
  }

  load(state: ForgettingState): void {
    this.alarms = state.alarms
    const detectors = state.detectors ?? []
    if (detectors.length !== this.detectors.length) throw new RangeError(`expected ${this.detectors.length} detectors, got ${detectors.length}`)
    detectors.forEach((stats, d) => {
      if (stats.length !== this.detectors[d].stats.length) throw new RangeError(`detector ${d}: expected ${this.detectors[d].stats.length} numbers, got ${stats.length}`)
      this.detectors[d].stats.set(stats)
    })
  }
}

/** The policy for some settings over dimensions with the given numbers of arms. */
export function makeForgetting(settings: ForgettingSettings, armsPerDimension: readonly number[]): Forgetting {
  if (settings.kind === 'periodic') return new PeriodicDecay(settings)
  if (settings.kind === 'adaptive') return new AdaptiveForgetting(settings, armsPerDimension)
  return new NoForgetting()
}
