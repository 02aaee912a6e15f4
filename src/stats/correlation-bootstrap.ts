/**
 * Bootstrap intervals of Pearson and Spearman correlations, fast enough to put an interval on
 * every number of a study: one fixed set of resamples per dataset, shared by every statistic on
 * that dataset (common random numbers, so intervals of competing configurations see the same
 * resamples), each resample stored as pick counts, and every resampled correlation computed in
 * O(n) from them (see ResampledCorrelation for the rank bookkeeping). The truth's ranks in each
 * resample are computed once and reused.
 *
 * Percentile intervals (Efron & Tibshirani 1993, ch. 13); the results have the same shape as
 * bootstrapCI and pairedBootstrapDelta, and equal them for the same resamples (tested).
 */
import type {Rng} from '../util/rng.js'
import {pearson, spearman} from './correlation.js'
import {percentileOver, type BootstrapResult, type PairedBootstrapResult} from './bootstrap.js'
import {checkConfidence} from './interval.js'

export type CorrelationKind = 'pearson' | 'spearman'

/** 2^32, to map a uniform 32-bit integer onto 0..n-1 with one draw. */
const TWO_POW_32 = 4294967296

export class ResampleCounts {
  /** counts[b * n + i]: how often resample b picks row i. */
  private readonly counts: Int32Array
  private readonly rankCache = new WeakMap<object, Float64Array>()
  private readonly scratch: Float64Array
  private readonly order = new WeakMap<object, Int32Array>()

  constructor(
    readonly n: number,
    readonly resamples: number,
    rng: Rng,
  ) {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`ResampleCounts: expected n >= 1, got ${n}`)
    if (!Number.isInteger(resamples) || resamples < 1)
      throw new RangeError(`ResampleCounts: expected resamples >= 1, got ${resamples}`)
    this.counts = new Int32Array(n * resamples)
    for (let b = 0; b < resamples; b++)
      for (let k = 0; k < n; k++) this.counts[b * n + Math.floor((rng.nextU32() * n) / TWO_POW_32)]++
    this.scratch = new Float64Array(n)
  }

  /** The pick counts of resample b (a view, do not modify). */
  row(b: number): Int32Array {
    return this.counts.subarray(b * this.n, (b + 1) * this.n)
  }

  /** Average ranks of `values` within every resample, cached for this array (use for the truth). */
  cachedRanks(values: ArrayLike<number>): Float64Array {
    let r = this.rankCache.get(values as object)
    if (!r) {
      r = new Float64Array(this.n * this.resamples)
      for (let b = 0; b < this.resamples; b++) this.ranksInto(values, b, r.subarray(b * this.n, (b + 1) * this.n))
      this.rankCache.set(values as object, r)
    }
    return r
  }

  /** Average ranks of `values` within resample b, into `out` (rows not picked keep stale values). */
  ranksInto(values: ArrayLike<number>, b: number, out: Float64Array = this.scratch): Float64Array {
    const counts = this.row(b)
    const order = this.sortedOrder(values)
    let cum = 0
    for (let start = 0; start < order.length;) {
      let end = start + 1
      while (end < order.length && values[order[end]] === values[order[start]]) end++
      let weight = 0
      for (let j = start; j < end; j++) weight += counts[order[j]]
      const rank = cum + (weight + 1) / 2
      for (let j = start; j < end; j++) out[order[j]] = rank
      cum += weight
      start = end
    }
    return out
  }

  private sortedOrder(values: ArrayLike<number>): Int32Array {
    let o = this.order.get(values as object)
    if (!o) {
      o = Int32Array.from(
        Array.from({length: values.length}, (_, i) => i).sort((a, c) => values[a] - values[c] || a - c),
      )
      this.order.set(values as object, o)
    }
    return o
  }

  /** The correlation of (x, y) in resample b; null if either side is constant there. */
  correlation(kind: CorrelationKind, x: ArrayLike<number>, y: ArrayLike<number>, b: number): number | null {
    const counts = this.row(b)
    if (kind === 'pearson') return weightedPearson(x, y, counts)
    const yr = this.cachedRanks(y).subarray(b * this.n, (b + 1) * this.n)
    return weightedPearson(this.ranksInto(x, b), yr, counts)
  }
}

const CORRELATIONS = {pearson, spearman}

/** Percentile interval of corr(x, y) over the resamples. */
export function correlationBootstrap(
  kind: CorrelationKind,
  x: ArrayLike<number>,
  y: ArrayLike<number>,
  set: ResampleCounts,
  confidence: number,
): BootstrapResult {
  checkConfidence(confidence, 'correlationBootstrap')
  return {
    estimate: CORRELATIONS[kind](x, y),
    ...percentileOver(set.resamples, confidence, (b) => set.correlation(kind, x, y, b)),
  }
}

/** Percentile interval of corr(b, y) - corr(a, y), both on each resample (absolute change). */
export function correlationDeltaBootstrap(
  kind: CorrelationKind,
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  y: ArrayLike<number>,
  set: ResampleCounts,
  confidence: number,
): PairedBootstrapResult {
  checkConfidence(confidence, 'correlationDeltaBootstrap')
  const interval = percentileOver(set.resamples, confidence, (k) => {
    const ra = set.correlation(kind, a, y, k)
    const rb = set.correlation(kind, b, y, k)
    return ra === null || rb === null ? null : rb - ra
  })
  const estimateA = CORRELATIONS[kind](a, y),
    estimateB = CORRELATIONS[kind](b, y)
  return {
    estimate: estimateA === null || estimateB === null ? null : estimateB - estimateA,
    ...interval,
    kind: 'absolute',
    estimateA,
    estimateB,
  }
}

/** Count-weighted Pearson correlation; null unless both sides vary among the picked rows (exact test). */
function weightedPearson(x: ArrayLike<number>, y: ArrayLike<number>, w: Int32Array): number | null {
  let total = 0,
    sx = 0,
    sy = 0
  let firstX = Number.NaN,
    firstY = Number.NaN,
    variesX = false,
    variesY = false
  for (let i = 0; i < w.length; i++) {
    if (w[i] === 0) continue
    if (total === 0) {
      firstX = x[i]
      firstY = y[i]
    } else {
      variesX ||= x[i] !== firstX
      variesY ||= y[i] !== firstY
    }
    total += w[i]
    sx += w[i] * x[i]
    sy += w[i] * y[i]
  }
  if (total < 2 || !variesX || !variesY) return null
  const mx = sx / total,
    my = sy / total
  let sxx = 0,
    syy = 0,
    sxy = 0
  for (let i = 0; i < w.length; i++) {
    if (w[i] === 0) continue
    const dx = x[i] - mx,
      dy = y[i] - my
    sxx += w[i] * dx * dx
    syy += w[i] * dy * dy
    sxy += w[i] * dx * dy
  }
  return Math.max(-1, Math.min(1, sxy / Math.sqrt(sxx * syy)))
}
