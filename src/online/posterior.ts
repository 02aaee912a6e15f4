/**
 * The posteriors of one bandit dimension: every arm has its own Dirichlet over the reward levels
 * (Beta when there are two levels, i.e. binary feedback). Level l is worth l / (levels - 1), so
 * the lowest level is reward 0 and the highest reward 1.
 *
 * Keeping one posterior per arm (not one Dirichlet over the arms) is what lets failures count:
 * an arm tried often with poor results has a posterior concentrated on low rewards.
 *
 * Change model (used by adaptive forgetting, see forgetting.ts). An arm may be *suspected of
 * having changed*: its posterior is then a two-component mixture,
 *   with probability 1 - w  "unchanged": Dirichlet(counts)           (all evidence),
 *   with probability w      "changed":   Dirichlet(prior + fresh)    (only evidence since the suspicion began),
 * where w is the change probability. Each settled result of the arm updates w by Bayes' rule with
 * the two components' predictive probabilities of the observed level, and multiplies the
 * suspicion's Bayes factor by their ratio (`updateChange`; results are credited to the counts at
 * once by `observe`, but reach the test in query order when settled, like the Page-Hinkley test:
 * delayed failures must not make early successes look like a change). When w reaches CHANGE_ACCEPT_PROB the change is
 * accepted: the old evidence is dropped (counts = prior + fresh). Without suspicion (w = 0,
 * the default) the arm is an ordinary Dirichlet posterior and nothing here costs anything.
 * A Thompson draw of a suspected arm first picks a component (probability w), then draws from it.
 */
import {
  type SamplerKind,
  type U32Source,
  LAYER_MASK,
  digamma,
  gammaMT,
  kn,
  wn,
  normalSlowPath,
  dirichletMoments,
  sampleMeanExact,
  trigamma,
} from './sampling.js'

/** Pseudo-count of every level in the base prior: Dirichlet(1, ..., 1), uniform over the simplex (Beta(1, 1) for binary). */
export const BASE_PRIOR_COUNT = 1
/** Change probability at which a suspected change is accepted and the arm's old evidence dropped. */
export const CHANGE_ACCEPT_PROB = 0.9
/**
 * Change probability below which a suspicion is settled at once as "unchanged" (an arm that keeps
 * being played is never idle, so this keeps its Bayes factor from underflowing).
 */
export const CHANGE_SETTLE_PROB = 1e-9
const INV_2_32 = 2 ** -32

/** Component indices of the cached draw parameters. */
const UNCHANGED = 0
const CHANGED = 1

export class ArmPosteriors {
  /** Dirichlet parameters, arm-major: counts[arm * levels + level] (the "unchanged" component). */
  readonly counts: Float64Array
  /** The prior the counts started from and decay back toward. */
  readonly prior: Float64Array
  /** Evidence since each arm's suspicion began, arm-major like counts (zero when not suspected). */
  readonly fresh: Float64Array
  /** Per arm, the probability that it changed (0 = not suspected). */
  readonly changeProb: Float64Array
  /** Per arm, the Bayes factor "changed" : "unchanged" of the fresh evidence (1 = none yet). */
  readonly changeFactor: Float64Array

  /**
   * Cached draw parameters per arm and component (index arm * 2 + component), for `cachedKind`:
   * location and scale (value = mu + sd z) for the Gaussian and logit samplers; for the exact
   * sampler, per level, the Marsaglia-Tsang constants (index (arm * 2 + component) * levels + level).
   * An arm whose state changed is recomputed before the next draw.
   */
  private readonly mu: Float64Array
  private readonly sd: Float64Array
  private readonly gd: Float64Array
  private readonly gc: Float64Array
  /** Per slot, 1 when a count is below 1 (Marsaglia-Tsang needs shape >= 1: such a draw takes the generic path). */
  private readonly smallShape: Uint8Array
  private readonly staleArm: Uint8Array
  private anyStale = true
  private cachedKind: SamplerKind | null = null
  /** prior + fresh of one arm (scratch). */
  private readonly scratch: Float64Array

  constructor(
    readonly arms: number,
    readonly levels: number,
    prior?: Float64Array,
  ) {
    if (!(Number.isInteger(arms) && arms >= 1)) throw new RangeError(`arms must be a positive integer, got ${arms}`)
    if (!(Number.isInteger(levels) && levels >= 2))
      throw new RangeError(`levels must be an integer >= 2, got ${levels}`)
    this.prior = prior ? Float64Array.from(prior) : new Float64Array(arms * levels).fill(BASE_PRIOR_COUNT)
    if (this.prior.length !== arms * levels)
      throw new RangeError(`prior must hold ${arms * levels} counts, got ${this.prior.length}`)
    for (const a of this.prior) if (!(a > 0)) throw new RangeError(`prior counts must be positive, got ${a}`)
    this.counts = Float64Array.from(this.prior)
    this.fresh = new Float64Array(arms * levels)
    this.changeProb = new Float64Array(arms)
    this.changeFactor = new Float64Array(arms).fill(1)
    this.mu = new Float64Array(arms * 2)
    this.sd = new Float64Array(arms * 2)
    this.gd = new Float64Array(arms * 2 * levels)
    this.gc = new Float64Array(arms * 2 * levels)
    this.smallShape = new Uint8Array(arms * 2)
    this.staleArm = new Uint8Array(arms).fill(1)
    this.scratch = new Float64Array(levels)
  }

  private markArm(arm: number): void {
    this.staleArm[arm] = 1
    this.anyStale = true
  }

  private markAll(): void {
    this.staleArm.fill(1)
    this.anyStale = true
  }

  /** Adds an observation of `level` on `arm` (weight 1 = one observation) to the counts. */
  observe(arm: number, level: number, weight = 1): void {
    this.counts[arm * this.levels + level] += weight
    this.markArm(arm)
  }

  /**
   * The change test's update for one settled result `level` of `arm`, already credited to the
   * counts by `observe` (a no-op when the arm is not suspected). With p_u the unchanged
   * component's predictive probability of the level without this result (alpha_l - 1) /
   * (alpha_0 - 1), and p_c the changed component's (prior_l + fresh_l) / (prior_0 + fresh_0),
   * the change probability becomes w' = w r / (w r + 1 - w), r = p_c / p_u; the Bayes factor is
   * multiplied by r and the result joins the fresh evidence. At CHANGE_ACCEPT_PROB the change is
   * accepted; below CHANGE_SETTLE_PROB the suspicion is settled.
   */
  updateChange(arm: number, level: number): void {
    const w = this.changeProb[arm]
    if (w === 0) return
    const ratio = this.changedPredictive(arm, level) / this.unchangedPredictive(arm, level)
    this.changeProb[arm] = (w * ratio) / (w * ratio + 1 - w)
    this.changeFactor[arm] *= ratio
    this.fresh[arm * this.levels + level] += 1
    if (this.changeProb[arm] >= CHANGE_ACCEPT_PROB) this.acceptChange(arm)
    else if (this.changeProb[arm] < CHANGE_SETTLE_PROB) this.settleChange(arm)
    else this.markArm(arm)
  }

  /**
   * Predictive probability of `level` under the unchanged component before one credited result
   * of that level: (alpha_l - 1) / (alpha_0 - 1), the level's count kept at or above its prior
   * (decay may already have shrunk the result).
   */
  private unchangedPredictive(arm: number, level: number): number {
    const o = arm * this.levels
    let total = 0
    for (let l = 0; l < this.levels; l++) total += this.counts[o + l]
    const count = this.counts[o + level]
    const without = Math.max(count - 1, this.prior[o + level])
    return without / (total - (count - without))
  }

  /** Predictive probability of `level` under the changed component (prior + fresh). */
  private changedPredictive(arm: number, level: number): number {
    const o = arm * this.levels
    let total = 0
    for (let l = 0; l < this.levels; l++) total += this.prior[o + l] + this.fresh[o + l]
    return (this.prior[o + level] + this.fresh[o + level]) / total
  }

  /** Raises an arm's change probability for a period with hazard: w = 1 - (1 - w) keep. */
  raiseChangeProb(arm: number, keep: number): void {
    this.changeProb[arm] = 1 - (1 - this.changeProb[arm]) * keep
    this.markArm(arm)
  }

  /** Evidence gathered since the arm's suspicion began. */
  freshEvidence(arm: number): number {
    let e = 0
    for (let l = 0; l < this.levels; l++) e += this.fresh[arm * this.levels + l]
    return e
  }

  /** Ends a suspicion as "unchanged": the fresh evidence stays in the counts, w = 0. */
  settleChange(arm: number): void {
    this.fresh.fill(0, arm * this.levels, (arm + 1) * this.levels)
    this.changeProb[arm] = 0
    this.changeFactor[arm] = 1
    this.markArm(arm)
  }

  /** Ends a suspicion by its more probable side: "changed" when w >= 1/2, else "unchanged". */
  decideChange(arm: number): void {
    if (this.changeProb[arm] >= 0.5) this.acceptChange(arm)
    else this.settleChange(arm)
  }

  /** Ends a suspicion as "changed": the counts become prior + fresh, w = 0. */
  acceptChange(arm: number): void {
    for (let l = 0; l < this.levels; l++) {
      const i = arm * this.levels + l
      this.counts[i] = this.prior[i] + this.fresh[i]
    }
    this.settleChange(arm)
  }

  /**
   * The Beta(a, b) the logit sampler approximates: exactly Beta(alpha_1, alpha_0) for two levels;
   * otherwise the Beta with the expected reward's mean and variance (a + b = mu (1 - mu) / var - 1).
   */
  private betaOf(alpha: Float64Array, o: number): {a: number; b: number} {
    if (this.levels === 2) return {a: alpha[o + 1], b: alpha[o]}
    const {mean, variance} = dirichletMoments(alpha, o, this.levels)
    const size = (mean * (1 - mean)) / variance - 1
    return {a: mean * size, b: (1 - mean) * size}
  }

  /** Caches one component's draw parameters (slot = arm * 2 + component) from its Dirichlet alpha[o ..]. */
  private cacheComponent(kind: SamplerKind, slot: number, alpha: Float64Array, o: number): void {
    if (kind === 'logit') {
      const {a, b} = this.betaOf(alpha, o)
      this.mu[slot] = digamma(a) - digamma(b)
      this.sd[slot] = Math.sqrt(trigamma(a) + trigamma(b))
      return
    }
    const {mean, variance} = dirichletMoments(alpha, o, this.levels)
    this.mu[slot] = mean
    this.sd[slot] = Math.sqrt(variance)
    if (kind !== 'exact') return
    this.smallShape[slot] = 0
    for (let l = 0; l < this.levels; l++) {
      const d = alpha[o + l] - 1 / 3
      if (alpha[o + l] < 1) this.smallShape[slot] = 1
      this.gd[slot * this.levels + l] = d
      this.gc[slot * this.levels + l] = 1 / Math.sqrt(9 * d)
    }
  }

  private refresh(kind: SamplerKind): void {
    if (kind !== this.cachedKind) {
      this.staleArm.fill(1)
      this.cachedKind = kind
    }
    const levels = this.levels
    for (let arm = 0; arm < this.arms; arm++) {
      if (this.staleArm[arm] === 0) continue
      this.cacheComponent(kind, arm * 2 + UNCHANGED, this.counts, arm * levels)
      if (this.changeProb[arm] > 0) {
        for (let l = 0; l < levels; l++) this.scratch[l] = this.prior[arm * levels + l] + this.fresh[arm * levels + l]
        this.cacheComponent(kind, arm * 2 + CHANGED, this.scratch, 0)
      }
      this.staleArm[arm] = 0
    }
    this.anyStale = false
  }

  /** Posterior mean reward of an arm's unchanged component: sum_l r_l alpha_l / alpha_0. */
  meanReward(arm: number): number {
    let total = 0
    let weighted = 0
    for (let l = 0; l < this.levels; l++) {
      const a = this.counts[arm * this.levels + l]
      total += a
      weighted += a * l
    }
    return weighted / (total * (this.levels - 1))
  }

  /** Observations an arm holds beyond its prior (after decay: the effective number). */
  evidence(arm: number): number {
    let e = 0
    for (let l = 0; l < this.levels; l++) e += this.counts[arm * this.levels + l] - this.prior[arm * this.levels + l]
    return e
  }

  /** The component a draw of `arm` comes from: CHANGED with probability w (one uniform, only when suspected). */
  private pickComponent(source: U32Source, arm: number): number {
    const w = this.changeProb[arm]
    return w > 0 && (source.nextU32() + 0.5) * INV_2_32 < w ? CHANGED : UNCHANGED
  }

  /** Thompson sampling: one draw of each arm's expected reward (see SamplerKind), the arm with the largest draw. */
  sampleBest(source: U32Source, sampler: SamplerKind): number {
    if (this.anyStale || sampler !== this.cachedKind) this.refresh(sampler)
    return sampler === 'exact' ? this.sampleBestExact(source) : this.sampleBestApprox(source)
  }

  private sampleBestExact(source: U32Source): number {
    let best = 0
    let bestValue = -Infinity
    for (let arm = 0; arm < this.arms; arm++) {
      const value = this.drawExact(source, (arm << 1) | this.pickComponent(source, arm))
      if (value > bestValue) {
        bestValue = value
        best = arm
      }
    }
    return best
  }

  /** One exact draw of the expected reward of a component (slot = arm * 2 + component): gammas normalised. */
  private drawExact(source: U32Source, slot: number): number {
    if (this.smallShape[slot] === 1) return this.drawExactGeneric(source, slot)
    const levels = this.levels
    const gd = this.gd
    const gc = this.gc
    const o = slot * levels
    if (levels === 2) {
      const g1 = gammaMT(source, gd[o + 1], gc[o + 1])
      return g1 / (g1 + gammaMT(source, gd[o], gc[o]))
    }
    let total = 0
    let weighted = 0
    for (let l = 0; l < levels; l++) {
      const g = gammaMT(source, gd[o + l], gc[o + l])
      total += g
      weighted += g * l
    }
    return weighted / (total * (levels - 1))
  }

  /** The same draw for a component with a count below 1 (not cached: Marsaglia-Tsang needs shape >= 1). */
  private drawExactGeneric(source: U32Source, slot: number): number {
    const arm = slot >> 1
    if ((slot & 1) === UNCHANGED) return sampleMeanExact(source, this.counts, arm * this.levels, this.levels)
    for (let l = 0; l < this.levels; l++)
      this.scratch[l] = this.prior[arm * this.levels + l] + this.fresh[arm * this.levels + l]
    return sampleMeanExact(source, this.scratch, 0, this.levels)
  }

  /** The Gaussian or logit-normal draw (see SamplerKind) with the ziggurat's fast path inlined. */
  private sampleBestApprox(source: U32Source): number {
    let best = 0
    let bestValue = -Infinity
    for (let arm = 0; arm < this.arms; arm++) {
      const slot = (arm << 1) | this.pickComponent(source, arm)
      const u = source.nextU32()
      const layer = u & LAYER_MASK
      const hz = (u | 0) >> 7
      const z = Math.abs(hz) < kn[layer] ? hz * wn[layer] : normalSlowPath(source, hz, layer)
      const value = this.mu[slot] + this.sd[slot] * z
      if (value > bestValue) {
        bestValue = value
        best = arm
      }
    }
    return best
  }

  /** Evidence of every arm shrunk toward the prior: alpha = prior + keep (alpha - prior). */
  shrinkAll(keep: number): void {
    const c = this.counts
    const p = this.prior
    for (let i = 0; i < c.length; i++) c[i] = p[i] + keep * (c[i] - p[i])
    this.markAll()
  }

  /** Evidence of one arm shrunk toward its prior (keep 0 resets it). */
  shrinkArm(arm: number, keep: number): void {
    for (let l = 0; l < this.levels; l++) {
      const i = arm * this.levels + l
      this.counts[i] = this.prior[i] + keep * (this.counts[i] - this.prior[i])
    }
    this.markArm(arm)
  }

  /** The change model's state, or undefined when no arm is suspected (plain numbers, for persistence). */
  saveChange(): ChangeState | undefined {
    if (this.changeProb.every((w) => w === 0)) return undefined
    return {fresh: Array.from(this.fresh), prob: Array.from(this.changeProb), factor: Array.from(this.changeFactor)}
  }

  /** Replaces the counts and the change model's state (restoring persisted state); lengths must match. */
  restore(counts: ArrayLike<number>, change?: ChangeState): void {
    if (counts.length !== this.counts.length)
      throw new RangeError(`expected ${this.counts.length} counts, got ${counts.length}`)
    for (let i = 0; i < counts.length; i++) {
      if (!(counts[i] > 0) || !Number.isFinite(counts[i]))
        throw new RangeError(`counts must be positive and finite, got ${counts[i]}`)
    }
    if (change) {
      if (
        change.fresh.length !== this.fresh.length ||
        change.prob.length !== this.arms ||
        change.factor.length !== this.arms
      )
        throw new RangeError(
          `change state must hold ${this.fresh.length} fresh counts and ${this.arms} probabilities and factors`,
        )
      for (const f of change.fresh)
        if (!(f >= 0 && Number.isFinite(f)))
          throw new RangeError(`fresh counts must be non-negative and finite, got ${f}`)
      for (const w of change.prob)
        if (!(w >= 0 && w <= 1)) throw new RangeError(`change probabilities must be in [0, 1], got ${w}`)
      for (const b of change.factor)
        if (!(b > 0 && Number.isFinite(b))) throw new RangeError(`Bayes factors must be positive and finite, got ${b}`)
    }
    this.counts.set(counts)
    this.fresh.fill(0)
    this.changeProb.fill(0)
    this.changeFactor.fill(1)
    if (change) {
      this.fresh.set(change.fresh)
      this.changeProb.set(change.prob)
      this.changeFactor.set(change.factor)
    }
    this.markAll()
  }
}

/** Persisted change-model state of one dimension (arm-major like the counts). */
export interface ChangeState {
  fresh: number[]
  prob: number[]
  factor: number[]
}
