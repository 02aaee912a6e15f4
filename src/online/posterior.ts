/**
 * The posteriors of one bandit dimension: every arm has its own Dirichlet over the reward levels
 * (Beta when there are two levels, i.e. binary feedback). Level l is worth l / (levels - 1), so
 * the lowest level is reward 0 and the highest reward 1.
 *
 * Keeping one posterior per arm (not one Dirichlet over the arms) is what lets failures count:
 * an arm tried often with poor results has a posterior concentrated on low rewards.
 */
import type {Rng} from '../util/rng.js'
import {type SamplerKind, LAYER_MASK, digamma, kn, wn, normalSlowPath, sampleMeanExact, trigamma} from './sampling.js'

/** Pseudo-count of every level in the base prior: Dirichlet(1, ..., 1), uniform over the simplex (Beta(1, 1) for binary). */
export const BASE_PRIOR_COUNT = 1

export class ArmPosteriors {
  /** Dirichlet parameters, arm-major: counts[arm * levels + level]. */
  readonly counts: Float64Array
  /** The prior the counts started from and decay back toward. */
  readonly prior: Float64Array
  /**
   * Location and scale of each arm's approximate draw (value = mu + sd z): the expected reward's
   * mean and sd for the Gaussian sampler, the logit's mean and sd for the logit sampler. Cached
   * for `cachedKind`; an arm whose counts changed is recomputed before the next draw.
   */
  private readonly mu: Float64Array
  private readonly sd: Float64Array
  private readonly staleArm: Uint8Array
  private anyStale = true
  private cachedKind: SamplerKind | null = null

  constructor(
    readonly arms: number,
    readonly levels: number,
    prior?: Float64Array,
  ) {
    if (!(Number.isInteger(arms) && arms >= 1)) throw new RangeError(`arms must be a positive integer, got ${arms}`)
    if (!(Number.isInteger(levels) && levels >= 2)) throw new RangeError(`levels must be an integer >= 2, got ${levels}`)
    this.prior = prior ? Float64Array.from(prior) : new Float64Array(arms * levels).fill(BASE_PRIOR_COUNT)
    if (this.prior.length !== arms * levels) throw new RangeError(`prior must hold ${arms * levels} counts, got ${this.prior.length}`)
    for (const a of this.prior) if (!(a > 0)) throw new RangeError(`prior counts must be positive, got ${a}`)
    this.counts = Float64Array.from(this.prior)
    this.mu = new Float64Array(arms)
    this.sd = new Float64Array(arms)
    this.staleArm = new Uint8Array(arms).fill(1)
  }

  private markArm(arm: number): void {
    this.staleArm[arm] = 1
    this.anyStale = true
  }

  private markAll(): void {
    this.staleArm.fill(1)
    this.anyStale = true
  }

  /** Adds an observation of `level` on `arm` (weight 1 = one observation). */
  observe(arm: number, level: number, weight = 1): void {
    this.counts[arm * this.levels + level] += weight
    this.markArm(arm)
  }

  /**
   * Mean mu = sum r_l alpha_l / alpha_0 and variance (sum r_l^2 alpha_l / alpha_0 - mu^2) / (alpha_0 + 1)
   * of an arm's expected reward under its Dirichlet (the exact moments).
   */
  private rewardMoments(arm: number): {mean: number; variance: number} {
    const top = this.levels - 1
    let total = 0, m1 = 0, m2 = 0
    for (let l = 0; l < this.levels; l++) {
      const a = this.counts[arm * this.levels + l]
      const r = l / top
      total += a
      m1 += a * r
      m2 += a * r * r
    }
    const mean = m1 / total
    const variance = (m2 / total - mean * mean) / (total + 1)
    return {mean, variance: variance > 0 ? variance : 0}
  }

  /**
   * The Beta(a, b) the logit sampler approximates: exactly Beta(alpha_1, alpha_0) for two levels;
   * otherwise the Beta with the expected reward's mean and variance (a + b = mu (1 - mu) / var - 1).
   */
  private betaOf(arm: number): {a: number; b: number} {
    if (this.levels === 2) return {a: this.counts[arm * 2 + 1], b: this.counts[arm * 2]}
    const {mean, variance} = this.rewardMoments(arm)
    const size = (mean * (1 - mean)) / variance - 1
    return {a: mean * size, b: (1 - mean) * size}
  }

  private refresh(kind: SamplerKind): void {
    if (kind !== this.cachedKind) {
      this.staleArm.fill(1)
      this.cachedKind = kind
    }
    for (let arm = 0; arm < this.arms; arm++) {
      if (this.staleArm[arm] === 0) continue
      if (kind === 'logit') {
        const {a, b} = this.betaOf(arm)
        this.mu[arm] = digamma(a) - digamma(b)
        this.sd[arm] = Math.sqrt(trigamma(a) + trigamma(b))
      } else {
        const {mean, variance} = this.rewardMoments(arm)
        this.mu[arm] = mean
        this.sd[arm] = Math.sqrt(variance)
      }
      this.staleArm[arm] = 0
    }
    this.anyStale = false
  }

  /** Posterior mean reward of an arm: sum_l r_l alpha_l / alpha_0. */
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

  /** Thompson sampling: one draw of each arm's expected reward, the arm with the largest draw. */
  sampleBest(rng: Rng, sampler: SamplerKind): number {
    return sampler === 'exact' ? this.sampleBestExact(rng) : this.sampleBestApprox(rng, sampler)
  }

  private sampleBestExact(rng: Rng): number {
    let best = 0
    let bestValue = -Infinity
    for (let arm = 0; arm < this.arms; arm++) {
      const value = sampleMeanExact(rng, this.counts, arm * this.levels, this.levels)
      if (value > bestValue) {
        bestValue = value
        best = arm
      }
    }
    return best
  }

  /** The Gaussian or logit-normal draw (see SamplerKind) with the ziggurat's fast path inlined. */
  private sampleBestApprox(rng: Rng, kind: SamplerKind): number {
    if (this.anyStale || kind !== this.cachedKind) this.refresh(kind)
    let best = 0
    let bestValue = -Infinity
    for (let arm = 0; arm < this.arms; arm++) {
      const u = rng.nextU32()
      const layer = u & LAYER_MASK
      const hz = (u | 0) >> 7
      const z = Math.abs(hz) < kn[layer] ? hz * wn[layer] : normalSlowPath(rng, hz, layer)
      const value = this.mu[arm] + this.sd[arm] * z
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

  /** Replaces the counts (restoring persisted state); lengths must match. */
  restore(counts: ArrayLike<number>): void {
    if (counts.length !== this.counts.length) throw new RangeError(`expected ${this.counts.length} counts, got ${counts.length}`)
    for (let i = 0; i < counts.length; i++) {
      if (!(counts[i] > 0) || !Number.isFinite(counts[i])) throw new RangeError(`counts must be positive and finite, got ${counts[i]}`)
      this.counts[i] = counts[i]
    }
    this.markAll()
  }
}
