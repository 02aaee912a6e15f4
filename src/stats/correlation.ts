/**
 * Correlation between two paired samples, and the correlation ratio between a grouping and a value.
 *
 * A correlation is undefined when there are fewer than two pairs or when either sample is constant:
 * those cases return null, never 0, because 0 would read as "measured, no relation".
 */

import {mean, sumSquaredDeviations} from './summary.js'

/** Throws unless the two samples pair up one to one. */
function checkPaired(x: ArrayLike<number>, y: ArrayLike<number>, where: string): void {
  if (x.length !== y.length) {
    throw new RangeError(`${where}: expected samples of equal length, got ${x.length} and ${y.length}`)
  }
}

/** True if every value equals the first (an exact test: a tiny float spread is not constant). */
function isConstant(values: ArrayLike<number>): boolean {
  for (let i = 1; i < values.length; i++) if (values[i] !== values[0]) return false
  return true
}

/**
 * Pearson's product-moment correlation r = sxy / sqrt(sxx * syy), computed from deviations about
 * the means (no one-pass sums, which cancel badly). In [-1, 1]; null when n < 2 or either sample
 * is constant; NaN if any value is NaN or infinite. Throws RangeError for samples of different length.
 */
export function pearson(x: ArrayLike<number>, y: ArrayLike<number>): number | null {
  checkPaired(x, y, 'pearson')
  const n = x.length
  if (n < 2 || isConstant(x) || isConstant(y)) return null
  const mx = mean(x)
  const my = mean(y)
  // Scale the deviations to at most 1 so that their squares neither underflow (tiny data) nor
  // overflow (huge data); r is scale-free.
  let ax = 0,
    ay = 0
  for (let i = 0; i < n; i++) {
    ax = Math.max(ax, Math.abs(x[i] - mx))
    ay = Math.max(ay, Math.abs(y[i] - my))
  }
  let sxx = 0,
    syy = 0,
    sxy = 0
  for (let i = 0; i < n; i++) {
    const dx = (x[i] - mx) / ax
    const dy = (y[i] - my) / ay
    sxx += dx * dx
    syy += dy * dy
    sxy += dx * dy
  }
  const r = sxy / Math.sqrt(sxx * syy)
  // Rounding can push |r| a hair past 1 for (anti)collinear data.
  return Number.isNaN(r) ? NaN : Math.max(-1, Math.min(1, r))
}

/**
 * Ranks 1..n of the values in ascending order; tied values share the average of the ranks they
 * span ("fractional" ranking, R's rank(ties.method = "average")). NaN values get rank NaN and do
 * not take up ranks.
 */
export function averageRanks(x: ArrayLike<number>): Float64Array {
  const n = x.length
  const ranks = new Float64Array(n)
  // Sort the values natively (a typed-array sort without a comparator, several times faster than
  // sorting indices with a closure), give each distinct value the average of the ranks its run
  // spans, then look every value up. NaN sorts last and gets rank NaN.
  const sorted = Float64Array.from(x).sort()
  let defined = n
  while (defined > 0 && Number.isNaN(sorted[defined - 1])) defined--
  const rankOf = new Map<number, number>()
  let start = 0
  while (start < defined) {
    let end = start + 1
    while (end < defined && sorted[end] === sorted[start]) end++
    // Positions start..end-1 (0-based) hold ranks start+1..end; their average is (start+1+end)/2.
    rankOf.set(sorted[start], (start + 1 + end) / 2)
    start = end
  }
  for (let i = 0; i < n; i++) ranks[i] = Number.isNaN(x[i]) ? NaN : (rankOf.get(x[i]) as number)
  return ranks
}

/**
 * Spearman's rank correlation: Pearson's r of the average ranks, so ties are handled exactly
 * (R's cor(method = "spearman")). Invariant under strictly increasing transforms of either sample.
 * Null when n < 2 or either sample is constant; NaN if any value is NaN.
 */
export function spearman(x: ArrayLike<number>, y: ArrayLike<number>): number | null {
  checkPaired(x, y, 'spearman')
  return pearson(averageRanks(x), averageRanks(y))
}

/** One-way decomposition of the variation of `values` by `category`. */
interface VarianceDecomposition {
  /** Sum of squared deviations from the grand mean. */
  total: number
  /** Sum over groups of n_g * (group mean - grand mean)^2. */
  between: number
  /** Sum of squared deviations from the group means, computed directly (no cancellation). */
  within: number
  /** Number of distinct categories. */
  groups: number
}

/** Sums of squares of a one-way ANOVA; null when n < 2 or `values` is constant. */
function decompose<K>(category: ArrayLike<K>, values: ArrayLike<number>, where: string): VarianceDecomposition | null {
  if (category.length !== values.length) {
    throw new RangeError(`${where}: expected samples of equal length, got ${category.length} and ${values.length}`)
  }
  const n = values.length
  if (n < 2 || isConstant(values)) return null
  const grand = mean(values)
  const sums = new Map<K, {count: number; sum: number}>()
  for (let i = 0; i < n; i++) {
    const g = sums.get(category[i])
    if (g) {
      g.count++
      g.sum += values[i]
    } else sums.set(category[i], {count: 1, sum: values[i]})
  }
  let between = 0
  for (const g of sums.values()) {
    const d = g.sum / g.count - grand
    between += g.count * d * d
  }
  let within = 0
  for (let i = 0; i < n; i++) {
    const g = sums.get(category[i])!
    const d = values[i] - g.sum / g.count
    within += d * d
  }
  return {total: sumSquaredDeviations(values), between, within, groups: sums.size}
}

/**
 * Correlation ratio eta squared (Pearson 1903; Fisher's one-way ANOVA decomposition): the share of
 * the variance of `values` explained by grouping them on `category`,
 *   eta^2 = SS_between / SS_total,  SS_between = sum over groups of n_g * (mean_g - mean)^2.
 * 0 when the group means are equal, 1 when every group is constant. kt uses it to detect label
 * leakage: a feature whose categories nearly determine the label.
 *
 * Categories are compared with SameValueZero (Map keys). eta^2 is biased upward when groups are
 * small: with one row per category it is 1 whatever the data. Check adjustedCorrelationRatio or
 * groupCount before calling a feature leaky.
 * Null when n < 2 or `values` is constant; NaN if any value is NaN or infinite.
 */
export function correlationRatio<K>(category: ArrayLike<K>, values: ArrayLike<number>): number | null {
  const d = decompose(category, values, 'correlationRatio')
  if (d === null) return null
  const eta2 = d.between / d.total
  return Number.isNaN(eta2) ? NaN : Math.max(0, Math.min(1, eta2))
}

/**
 * Epsilon squared (Kelley 1935, "An unbiased correlation ratio measure"), eta^2 corrected for the
 * number of groups k: (SS_between - (k - 1) * MS_within) / SS_total, MS_within = SS_within / (n - k).
 * Near 0 for a grouping unrelated to the values however many groups it has (it can dip below 0);
 * use it to tell real leakage from the inflation of eta^2 by many small groups.
 * Null when eta^2 is, or when n = k (every row its own group: no within-group variation to judge by).
 */
export function adjustedCorrelationRatio<K>(category: ArrayLike<K>, values: ArrayLike<number>): number | null {
  const d = decompose(category, values, 'adjustedCorrelationRatio')
  if (d === null) return null
  const n = values.length
  if (n === d.groups) return null
  return (d.between - ((d.groups - 1) * d.within) / (n - d.groups)) / d.total
}

/** Number of distinct categories (SameValueZero), to judge how much eta^2 small groups inflate. */
export function groupCount<K>(category: ArrayLike<K>): number {
  const seen = new Set<K>()
  for (let i = 0; i < category.length; i++) seen.add(category[i])
  return seen.size
}
