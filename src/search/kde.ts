/**
 * The product-kernel density estimator BOHB models each budget with, as hpbandster builds it with
 * statsmodels' KDEMultivariate: a Gaussian kernel on continuous coordinates and the
 * Aitchison-Aitken kernel on unordered categorical ones, bandwidths by the normal reference rule,
 * clipped below at a minimum bandwidth.
 */
import type {Rng} from '../util/rng.js'

/**
 * Scott/Silverman normal-reference factor statsmodels uses for every variable:
 * bw_j = 1.06 * sd_j * n^(-1 / (4 + d)) (statsmodels.nonparametric._kernel_base, _normal_reference).
 */
export const NORMAL_REFERENCE_FACTOR = 1.06

const LOG_SQRT_2PI = 0.5 * Math.log(2 * Math.PI)

/** Attempts at drawing a truncated normal by rejection before falling back to the centre. */
const TRUNCNORM_MAX_TRIES = 64

export class Kde {
  /** Row-major data, n rows of d coordinates, each in [0, 1] (categoricals: index). */
  readonly data: Float64Array
  readonly n: number
  readonly d: number
  /** Bandwidth per coordinate (Aitchison-Aitken lambda for categoricals). */
  readonly bw: Float64Array
  /** log of the normalising constant prod(1 / (h sqrt(2 pi))) over continuous coordinates. */
  private readonly logNorm: number
  private readonly logMatch: Float64Array
  private readonly logMismatch: Float64Array
  private readonly scratch: Float64Array

  constructor(rows: readonly ArrayLike<number>[], readonly vartypes: Int32Array, minBandwidth: number) {
    this.n = rows.length
    this.d = vartypes.length
    if (this.n === 0) throw new RangeError('Kde: no data')
    this.data = new Float64Array(this.n * this.d)
    rows.forEach((row, i) => this.data.set(Array.from(row), i * this.d))
    this.bw = normalReferenceBandwidths(this.data, this.n, this.d)
    this.logMatch = new Float64Array(this.d)
    this.logMismatch = new Float64Array(this.d)
    let logNorm = 0
    for (let j = 0; j < this.d; j++) {
      let h = Math.max(this.bw[j], minBandwidth)
      const levels = vartypes[j]
      if (levels > 0) {
        // A lambda past (c - 1) / c would weight other categories above the observed one (and
        // past 1 make the density negative); statsmodels does not guard this, we cap at the
        // uniform kernel.
        h = Math.min(h, (levels - 1) / levels)
        this.logMatch[j] = Math.log(1 - h)
        this.logMismatch[j] = Math.log(h / (levels - 1))
      } else {
        logNorm -= Math.log(h) + LOG_SQRT_2PI
      }
      this.bw[j] = h
    }
    this.logNorm = logNorm
    this.scratch = new Float64Array(this.n)
  }

  /** log density at x (log-sum-exp over the data, so 16-D products never underflow). */
  logPdf(x: ArrayLike<number>): number {
    const {n, d, data, bw, vartypes, scratch} = this
    let maxTerm = -Infinity
    for (let i = 0; i < n; i++) {
      const base = i * d
      let term = 0
      for (let j = 0; j < d; j++) {
        const v = data[base + j]
        if (vartypes[j] > 0) term += v === x[j] ? this.logMatch[j] : this.logMismatch[j]
        else {
          const z = (x[j] - v) / bw[j]
          term -= 0.5 * z * z
        }
      }
      scratch[i] = term
      if (term > maxTerm) maxTerm = term
    }
    let total = 0
    for (let i = 0; i < n; i++) total += Math.exp(scratch[i] - maxTerm)
    return maxTerm + Math.log(total) - Math.log(n) + this.logNorm
  }

  /** The density itself (may underflow to 0 in many dimensions; prefer logPdf). */
  pdf(x: ArrayLike<number>): number {
    return Math.exp(this.logPdf(x))
  }

  row(i: number): Float64Array {
    return this.data.subarray(i * this.d, (i + 1) * this.d)
  }
}

/**
 * Normal-reference bandwidths: 1.06 * sd * n^(-1/(4+d)) per column, with the population sd
 * (numpy's default ddof = 0, as statsmodels computes it).
 */
export function normalReferenceBandwidths(data: Float64Array, n: number, d: number): Float64Array {
  const bw = new Float64Array(d)
  const shrink = Math.pow(n, -1 / (4 + d))
  for (let j = 0; j < d; j++) {
    let mean = 0
    for (let i = 0; i < n; i++) mean += data[i * d + j]
    mean /= n
    let ss = 0
    for (let i = 0; i < n; i++) {
      const e = data[i * d + j] - mean
      ss += e * e
    }
    bw[j] = NORMAL_REFERENCE_FACTOR * Math.sqrt(ss / n) * shrink
  }
  return bw
}

/**
 * A draw from Normal(mean, sd) truncated to [0, 1] by rejection (hpbandster uses scipy's
 * truncnorm). The mean lies in [0, 1], so at least a quarter of the draws land inside for any sd
 * BOHB uses; after TRUNCNORM_MAX_TRIES misses the mean itself is returned.
 */
export function truncatedNormal01(rng: Rng, mean: number, sd: number): number {
  for (let t = 0; t < TRUNCNORM_MAX_TRIES; t++) {
    const x = rng.normal(mean, sd)
    if (x >= 0 && x <= 1) return x
  }
  return mean
}
