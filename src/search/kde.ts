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
const NORMAL_REFERENCE_FACTOR = 1.06

const LOG_SQRT_2PI = 0.5 * Math.log(2 * Math.PI)

/** Kernel terms this far (in log) below the largest add less than 1e-17 of it: skipped. */
const NEGLIGIBLE_LOG_TERM = 40

/** Optuna's magic clip divides the range by at most this (optuna/samplers/_tpe/parzen_estimator.py). */
const MAGIC_CLIP_MAX_DIVISOR = 100

export interface KdeOptions {
  /** Floor continuous bandwidths at 1 / min(100, 1 + n) (Optuna's consider_magic_clip). */
  readonly magicClip?: boolean
  /** Weight, in data points, of a uniform prior mixed into the density (Optuna's consider_prior). */
  readonly priorWeight?: number
}

/** Attempts at drawing a truncated normal by rejection before falling back to the centre. */
const TRUNCNORM_MAX_TRIES = 64

export class Kde {
  readonly d: number
  /** Number of data points of the current fit. */
  n = 0
  /** Row-major data, n rows of d coordinates, each in [0, 1] (categoricals: index). */
  data: Float64Array
  /** Bandwidth per coordinate (Aitchison-Aitken lambda for categoricals). */
  readonly bw: Float64Array
  /** log of the normalising constant prod(1 / (h sqrt(2 pi))) over continuous coordinates. */
  private logNorm = 0
  private readonly logMatch: Float64Array
  private readonly logMismatch: Float64Array
  private scratch: Float64Array
  /** Continuous coordinates, and the data there divided by the bandwidth (row-major, n x nc). */
  private readonly contDims: Int32Array
  private contScaled: Float64Array
  private readonly invBw: Float64Array
  /** Categorical coordinates and the data there (row-major, n x nk). */
  private readonly catDims: Int32Array
  private catData: Float64Array
  /** logMatch and logMismatch of each categorical coordinate, indexed like catDims (no indirection per row). */
  private readonly catLogMatch: Float64Array
  private readonly catLogMismatch: Float64Array
  private readonly xScaled: Float64Array
  /** x at the categorical coordinates, gathered once per evaluation. */
  private readonly xCat: Float64Array
  /** log density of the uniform prior component (categoricals only; continuous coordinates are 1). */
  private readonly logPrior: number

  /**
   * An estimator over coordinates of the given vartypes (0 continuous, c categories). Buffers are
   * kept between fits, so refitting after every result allocates nothing once they are big enough.
   */
  constructor(
    readonly vartypes: Int32Array,
    private readonly minBandwidth: number,
    private readonly options: KdeOptions = {},
  ) {
    this.d = vartypes.length
    this.bw = new Float64Array(this.d)
    this.logMatch = new Float64Array(this.d)
    this.logMismatch = new Float64Array(this.d)
    const cont: number[] = []
    const cat: number[] = []
    for (let j = 0; j < this.d; j++) (vartypes[j] > 0 ? cat : cont).push(j)
    this.contDims = Int32Array.from(cont)
    this.catDims = Int32Array.from(cat)
    this.invBw = new Float64Array(cont.length)
    this.xScaled = new Float64Array(cont.length)
    this.catLogMatch = new Float64Array(cat.length)
    this.catLogMismatch = new Float64Array(cat.length)
    this.xCat = new Float64Array(cat.length)
    this.logPrior = cat.reduce((sum, j) => sum - Math.log(vartypes[j]), 0)
    this.data = new Float64Array(0)
    this.contScaled = new Float64Array(0)
    this.catData = new Float64Array(0)
    this.scratch = new Float64Array(0)
  }

  /** A fitted estimator in one call. */
  static fit(
    rows: readonly ArrayLike<number>[],
    vartypes: Int32Array,
    minBandwidth: number,
    options: KdeOptions = {},
  ): Kde {
    return new Kde(vartypes, minBandwidth, options).fit(rows)
  }

  /** Fits to the rows: normal-reference bandwidths, clipped below (and categoricals above). */
  fit(rows: readonly ArrayLike<number>[]): this {
    const n = rows.length
    const d = this.d
    if (n === 0) throw new RangeError('Kde: no data')
    this.n = n
    const nc = this.contDims.length
    const nk = this.catDims.length
    if (this.data.length < n * d) {
      const capacity = Math.max(n, 2 * (this.data.length / Math.max(1, d)))
      this.data = new Float64Array(capacity * d)
      this.contScaled = new Float64Array(capacity * nc)
      this.catData = new Float64Array(capacity * nk)
      this.scratch = new Float64Array(capacity)
    }
    for (let i = 0; i < n; i++) this.data.set(rows[i], i * d)
    normalReferenceBandwidths(this.data, n, d, this.bw)
    // Optuna's "magic clip" (Watanabe 2023, "Tree-structured Parzen estimator: understanding its
    // algorithm components", section 3.4): no continuous bandwidth below range / min(100, 1 + n),
    // so a tight cluster of good points keeps exploring around itself instead of collapsing.
    const magicFloor = this.options.magicClip ? 1 / Math.min(MAGIC_CLIP_MAX_DIVISOR, 1 + n) : 0
    let logNorm = 0
    for (let j = 0; j < d; j++) {
      let h = Math.max(this.bw[j], this.minBandwidth)
      const levels = this.vartypes[j]
      if (levels > 0) {
        // A lambda past (c - 1) / c would weight other categories above the observed one (and
        // past 1 make the density negative); statsmodels does not guard this, we cap at the
        // uniform kernel.
        h = Math.min(h, (levels - 1) / levels)
        this.logMatch[j] = Math.log(1 - h)
        this.logMismatch[j] = Math.log(h / (levels - 1))
      } else {
        h = Math.max(h, magicFloor)
        logNorm -= Math.log(h) + LOG_SQRT_2PI
      }
      this.bw[j] = h
    }
    this.logNorm = logNorm
    for (let k = 0; k < nc; k++) this.invBw[k] = 1 / this.bw[this.contDims[k]]
    for (let k = 0; k < nk; k++) {
      this.catLogMatch[k] = this.logMatch[this.catDims[k]]
      this.catLogMismatch[k] = this.logMismatch[this.catDims[k]]
    }
    for (let i = 0; i < n; i++) {
      for (let k = 0; k < nc; k++) this.contScaled[i * nc + k] = this.data[i * d + this.contDims[k]] * this.invBw[k]
      for (let k = 0; k < nk; k++) this.catData[i * nk + k] = this.data[i * d + this.catDims[k]]
    }
    return this
  }

  /** log density at x (log-sum-exp over the data, so 16-D products never underflow). */
  logPdf(x: ArrayLike<number>): number {
    return this.evaluate(x, false, 0, 0)
  }

  /**
   * logPdf(x), or, as soon as the data prove that logPdf(x) - minus >= atLeast (the floating-point
   * subtraction a caller comparing against a best value makes), a lower bound L of logPdf(x) with
   * L - minus >= atLeast. A caller that keeps only values below atLeast gets the same answer as
   * with logPdf and skips the rest of the data. Exact with a uniform prior (no bound is taken then).
   */
  logPdfUnlessAtLeast(x: ArrayLike<number>, minus: number, atLeast: number): number {
    return this.evaluate(x, !((this.options.priorWeight ?? 0) > 0), minus, atLeast)
  }

  private evaluate(x: ArrayLike<number>, bounded: boolean, minus: number, atLeast: number): number {
    const {
      n,
      scratch,
      contDims,
      contScaled,
      invBw,
      catDims,
      catData,
      catLogMatch,
      catLogMismatch,
      xScaled,
      xCat,
      logNorm,
    } = this
    if (n === 0) throw new RangeError('Kde: not fitted')
    const nc = contDims.length
    const nk = catDims.length
    for (let k = 0; k < nc; k++) xScaled[k] = x[contDims[k]] * invBw[k]
    for (let k = 0; k < nk; k++) xCat[k] = x[catDims[k]]
    const logN = Math.log(n)
    let maxTerm = -Infinity
    for (let i = 0; i < n; i++) {
      let squares = 0
      const base = i * nc
      for (let k = 0; k < nc; k++) {
        const z = xScaled[k] - contScaled[base + k]
        squares += z * z
      }
      let term = -0.5 * squares
      const catBase = i * nk
      for (let k = 0; k < nk; k++) term += catData[catBase + k] === xCat[k] ? catLogMatch[k] : catLogMismatch[k]
      scratch[i] = term
      if (term > maxTerm) {
        maxTerm = term
        // The sum below holds exp(0) = 1 for the largest term and nothing negative, so its log is
        // >= 0 and, rounding being monotonic, the density's log below is >= this bound, evaluated
        // in the same order, whatever the remaining rows hold.
        if (bounded) {
          const bound = maxTerm - logN + logNorm
          if (bound - minus >= atLeast) return bound
        }
      }
    }
    let total = 0
    const cutoff = maxTerm - NEGLIGIBLE_LOG_TERM
    for (let i = 0; i < n; i++) if (scratch[i] > cutoff) total += Math.exp(scratch[i] - maxTerm)
    const logKde = maxTerm + Math.log(total) - logN + logNorm
    const priorWeight = this.options.priorWeight ?? 0
    if (!(priorWeight > 0)) return logKde
    // Mixture (n * kde + w * uniform) / (n + w), in log space.
    const a = logN + logKde
    const b = Math.log(priorWeight) + this.logPrior
    const m = Math.max(a, b)
    return m + Math.log(Math.exp(a - m) + Math.exp(b - m)) - Math.log(n + priorWeight)
  }

  /** The density itself (may underflow to 0 in many dimensions; prefer logPdf). */
  pdf(x: ArrayLike<number>): number {
    return Math.exp(this.logPdf(x))
  }

  row(i: number): Float64Array {
    return this.data.subarray(i * this.d, (i + 1) * this.d)
  }

  /** Copies data point i into `out` (no view allocated, for the candidate loop). */
  copyRow(i: number, out: Float64Array): Float64Array {
    const {data, d} = this
    const base = i * d
    for (let j = 0; j < d; j++) out[j] = data[base + j]
    return out
  }
}

/**
 * Normal-reference bandwidths: 1.06 * sd * n^(-1/(4+d)) per column, with the population sd
 * (numpy's default ddof = 0, as statsmodels computes it).
 */
export function normalReferenceBandwidths(
  data: Float64Array,
  n: number,
  d: number,
  bw: Float64Array = new Float64Array(d),
): Float64Array {
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
