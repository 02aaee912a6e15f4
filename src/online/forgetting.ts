/**
 * Forgetting: how old evidence loses weight so the bandits follow a changing workload.
 *
 * - periodic (the default): every DECAY_EVERY_QUERIES queries every arm's evidence
 *   shrinks toward the prior by DECAY_FRACTION. Cheap and harmless, but slow: half the evidence
 *   goes only after ln 2 / 0.05 * 500 ~ 6,800 queries.
 * - adaptive (ours): change detection on the tenant's reward stream, a one-sided Page-Hinkley
 *   test for a fall of the mean (Page 1954; Hinkley 1971; used with bandits by Hartland et al.
 *   2006, "Multi-armed bandit, dynamic environments and meta-bandits"). An alarm resets the
 *   incumbent arm of every dimension (the bin with the best posterior mean, the one being
 *   played) to its prior and shrinks the other arms to ALARM_KEEP_OTHERS of their evidence;
 *   a slow background half-life (ADAPTIVE_HALF_LIFE_QUERIES) lets bins that were bad and are
 *   never played be re-tried eventually.
 *
 * Why this design. The test watches what the tenant actually gets, one outcome per query, so it
 * reacts within tens of queries when the played configuration gets worse, the usual symptom of
 * a workload shift, and costs nothing while nothing changes. We first tried one two-sided test
 * per arm: it works for a single bandit, but with a dozen coupled dimensions every arm's reward
 * drifts while the other dimensions learn, and the per-arm tests kept firing during ordinary
 * learning. Rises are not tested for: the tenant's reward rises whenever learning works. The
 * reference mean is an exponentially weighted mean over about PH_REFERENCE_WINDOW outcomes, not
 * the mean since the last reset, so that after a long learning phase a fall is measured from
 * the recent level. What no test on played outcomes can see is an unplayed bin getting better
 * (`switch-rise`): only re-trying bins finds that, which the background half-life pays for in
 * regret when nothing changes.
 */
import type {ArmPosteriors} from './posterior.js'

/** Default period of the scheduled decay, in queries (the issue: "5% every 500 queries"). */
export const DECAY_EVERY_QUERIES = 500
/** Default share of the evidence removed at each scheduled decay (the issue). */
export const DECAY_FRACTION = 0.05
/** Page-Hinkley tolerance delta: falls of the mean smaller than this are ignored (rewards in [0, 1]). */
export const PH_DELTA = 0.1
/**
 * Page-Hinkley alarm threshold lambda on the cumulative deviation: a fall of 0.4 in the mean is
 * caught after about 80 outcomes. 8 sufficed for one bandit (no false alarm on stationary `lin`)
 * but fired during ordinary learning in the 13-dimension workload simulation; 25 did not.
 */
export const PH_LAMBDA = 25
/** Outcomes needed since the last reset before an alarm may be raised (the reference mean is noise before that). */
export const PH_MIN_SAMPLES = 30
/** The reference mean is an exponentially weighted mean with weight 1/PH_REFERENCE_WINDOW (the running mean over the first outcomes). */
export const PH_REFERENCE_WINDOW = 500
/** Share of evidence the non-incumbent arms keep at an alarm (the incumbent keeps none). */
export const ALARM_KEEP_OTHERS = 0.3
/**
 * Background half-life of all evidence under the adaptive policy, in queries: the price paid so
 * that a bin that was bad and is never played can still be found when it gets better. Measured
 * in the simulator (100 runs x 5000 steps, logit sampler; `lin` regret, `switch-rise` median
 * steps to recover): none 68 / never (98% of runs), 5000: 83 / never (66%), 2000: 107 / 1280,
 * 1000: 148 / 741, 500: 214 / 448. Recovering from a rise within 500 steps costs three times
 * the regret when nothing changes; 5000 keeps that cost small and still re-tries stale bins
 * eventually. Falls (`switch-drop`, `switch-reverse`) are caught by the test at any half-life.
 */
export const ADAPTIVE_HALF_LIFE_QUERIES = 5000
/**
 * The background half-life is applied in steps of this many queries (factor 0.5^(25/H) each
 * time) rather than every query: the same decay to within a step, and the posteriors' cached
 * draw parameters are recomputed 25 times less often.
 */
export const ADAPTIVE_DISCOUNT_EVERY_QUERIES = 25

export type ForgettingSettings =
  | {kind: 'none'}
  | {kind: 'periodic'; every: number; fraction: number}
  | {kind: 'adaptive'; halfLife: number | null; delta: number; lambda: number; minSamples: number; referenceWindow: number; keepOthers: number}

export const PERIODIC_DEFAULTS: ForgettingSettings = {kind: 'periodic', every: DECAY_EVERY_QUERIES, fraction: DECAY_FRACTION}
export const ADAPTIVE_DEFAULTS: ForgettingSettings = {
  kind: 'adaptive',
  halfLife: ADAPTIVE_HALF_LIFE_QUERIES,
  delta: PH_DELTA,
  lambda: PH_LAMBDA,
  minSamples: PH_MIN_SAMPLES,
  referenceWindow: PH_REFERENCE_WINDOW,
  keepOthers: ALARM_KEEP_OTHERS,
}

export function forgettingDefaults(kind: ForgettingSettings['kind']): ForgettingSettings {
  return kind === 'periodic' ? {...PERIODIC_DEFAULTS} : kind === 'adaptive' ? {...ADAPTIVE_DEFAULTS} : {kind: 'none'}
}

/** Persistable state of a forgetting policy (plain numbers only). */
export type ForgettingState = {alarms: number; detector?: number[]}

/** What a policy does to the posteriors as queries and observations arrive. */
export interface Forgetting {
  /** After the query counter was incremented to `counter`. */
  onQuery(counter: number, posteriors: readonly ArmPosteriors[]): void
  /** After the settled outcome (reward in [0, 1]) of one query, in query order; true when it raised an alarm. */
  onOutcome(reward: number, posteriors: readonly ArmPosteriors[]): boolean
  /** Alarms raised so far. */
  readonly alarms: number
  save(): ForgettingState
  load(state: ForgettingState): void
}

class NoForgetting implements Forgetting {
  alarms = 0
  onQuery(): void {}
  onOutcome(): boolean {
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

  onOutcome(): boolean {
    return false
  }

  save(): ForgettingState {
    return {alarms: 0}
  }

  load(): void {}
}

/**
 * One-sided Page-Hinkley test for a fall of the mean, against an exponentially weighted
 * reference: with x_t the outcomes and m_t the reference mean after x_t,
 * down_t = sum (x - m + delta), alarm when max(down) - down_t > lambda.
 * State: [n, reference mean, down, max down].
 */
export class PageHinkley {
  readonly stats = new Float64Array(4)

  constructor(
    private readonly delta: number,
    private readonly lambda: number,
    private readonly minSamples: number,
    private readonly referenceWindow: number,
  ) {}

  /** Feeds one outcome; true when the mean has fallen (the test then restarts). */
  update(x: number): boolean {
    const s = this.stats
    s[0] += 1
    s[1] += (x - s[1]) / Math.min(s[0], this.referenceWindow)
    s[2] += x - s[1] + this.delta
    if (s[2] > s[3]) s[3] = s[2]
    if (s[0] < this.minSamples || s[3] - s[2] <= this.lambda) return false
    this.stats.fill(0)
    return true
  }
}

/** Change detection with a partial restart plus a slow background half-life (see the file comment and src/online/README.md). */
class AdaptiveForgetting implements Forgetting {
  alarms = 0
  private readonly detector: PageHinkley
  /** Share of evidence kept at each discount step. */
  private readonly stepKeep: number

  constructor(private readonly settings: Extract<ForgettingSettings, {kind: 'adaptive'}>) {
    this.detector = new PageHinkley(settings.delta, settings.lambda, settings.minSamples, settings.referenceWindow)
    this.stepKeep = settings.halfLife === null ? 1 : Math.pow(0.5, ADAPTIVE_DISCOUNT_EVERY_QUERIES / settings.halfLife)
  }

  onQuery(counter: number, posteriors: readonly ArmPosteriors[]): void {
    if (this.stepKeep === 1 || counter % ADAPTIVE_DISCOUNT_EVERY_QUERIES !== 0) return
    for (const p of posteriors) p.shrinkAll(this.stepKeep)
  }

  onOutcome(reward: number, posteriors: readonly ArmPosteriors[]): boolean {
    if (!this.detector.update(reward)) return false
    this.alarms++
    for (const post of posteriors) {
      let incumbent = 0
      for (let a = 1; a < post.arms; a++) if (post.meanReward(a) > post.meanReward(incumbent)) incumbent = a
      for (let a = 0; a < post.arms; a++) post.shrinkArm(a, a === incumbent ? 0 : this.settings.keepOthers)
    }
    return true
  }

  save(): ForgettingState {
    return {alarms: this.alarms, detector: Array.from(this.detector.stats)}
  }

  load(state: ForgettingState): void {
    this.alarms = state.alarms
    const stats = state.detector ?? []
    if (stats.length !== this.detector.stats.length) throw new RangeError(`expected ${this.detector.stats.length} detector numbers, got ${stats.length}`)
    this.detector.stats.set(stats)
  }
}

/** The policy for some settings. */
export function makeForgetting(settings: ForgettingSettings): Forgetting {
  if (settings.kind === 'periodic') return new PeriodicDecay(settings)
  if (settings.kind === 'adaptive') return new AdaptiveForgetting(settings)
  return new NoForgetting()
}
