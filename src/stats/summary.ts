/**
 * Summary statistics of a sample: sums, moments and quantiles.
 *
 * Conventions (shared by all of src/stats):
 * - Inputs are `ArrayLike<number>` (number[] or Float64Array) and are never mutated.
 * - A statistic that is undefined for the input (the mean of nothing, the variance of one value)
 *   is NaN, never 0, so it cannot pass for a measurement. NaN in the input propagates to the result.
 */

/**
 * Sum with Neumaier's compensation (Neumaier 1974, "Rundungsfehleranalyse einiger Verfahren zur
 * Summation endlicher Summen"), an improved Kahan summation: the rounding error of each addition
 * is carried separately, so sums of many values of mixed magnitude stay accurate.
 * The sum of nothing is 0; infinite values give the IEEE sum (Infinity, or NaN for +Inf + -Inf).
 */
export function sum(values: ArrayLike<number>): number {
  let total = 0
  let compensation = 0
  for (let i = 0; i < values.length; i++) {
    const v = values[i]
    const t = total + v
    // Whichever addend is larger in magnitude keeps its bits; recover what the smaller one lost.
    compensation += Math.abs(total) >= Math.abs(v) ? total - t + v : v - t + total
    total = t
  }
  // Past an infinity the compensation is Inf - Inf = NaN and means nothing.
  return Number.isFinite(total) ? total + compensation : total
}

/**
 * The values that are defined: drops null, undefined and NaN. Per-query metrics are null where
 * undefined (e.g. nDCG of a query without relevant items); average them with
 * mean(definedValues(xs)) and report how many were dropped.
 */
export function definedValues(values: ArrayLike<number | null | undefined>): Float64Array {
  const out: number[] = []
  for (let i = 0; i < values.length; i++) {
    const v = values[i]
    if (v !== null && v !== undefined && !Number.isNaN(v)) out.push(v)
  }
  return Float64Array.from(out)
}

/** Arithmetic mean; NaN for an empty sample. */
export function mean(values: ArrayLike<number>): number {
  if (values.length === 0) return NaN
  return sum(values) / values.length
}

/**
 * Sum of squared deviations from the mean, by two passes with the corrected formula of
 * Chan, Golub & LeVeque (1983, "Algorithms for computing the sample variance"): the second term
 * removes the rounding error left in the mean. NaN for an empty sample.
 */
export function sumSquaredDeviations(values: ArrayLike<number>): number {
  const n = values.length
  if (n === 0) return NaN
  const m = mean(values)
  let squares = 0
  let deviations = 0
  for (let i = 0; i < n; i++) {
    const d = values[i] - m
    squares += d * d
    deviations += d
  }
  return Math.max(0, squares - (deviations * deviations) / n)
}

/** Sample variance with Bessel's correction (divides by n - 1); NaN when n < 2. Like R's var(). */
export function variance(values: ArrayLike<number>): number {
  const n = values.length
  if (n < 2) return NaN
  return sumSquaredDeviations(values) / (n - 1)
}

/** Sample standard deviation, sqrt of the n - 1 variance; NaN when n < 2. Like R's sd(). */
export function sd(values: ArrayLike<number>): number {
  return Math.sqrt(variance(values))
}

/** Standard error of the mean, sd / sqrt(n); NaN when n < 2. */
export function standardError(values: ArrayLike<number>): number {
  return sd(values) / Math.sqrt(values.length)
}

/** Smallest value; NaN for an empty sample or if any value is NaN. */
export function min(values: ArrayLike<number>): number {
  if (values.length === 0) return NaN
  let result = Infinity
  for (let i = 0; i < values.length; i++) {
    const v = values[i]
    if (Number.isNaN(v)) return NaN
    if (v < result) result = v
  }
  return result
}

/** Largest value; NaN for an empty sample or if any value is NaN. */
export function max(values: ArrayLike<number>): number {
  if (values.length === 0) return NaN
  let result = -Infinity
  for (let i = 0; i < values.length; i++) {
    const v = values[i]
    if (Number.isNaN(v)) return NaN
    if (v > result) result = v
  }
  return result
}

/** Throws unless p is a probability in [0, 1]. */
function checkProbability(p: number, where: string): void {
  if (!(p >= 0 && p <= 1)) throw new RangeError(`${where}: expected p in [0, 1], got ${p}`)
}

/**
 * The p-quantile of values already sorted ascending, by linear interpolation between order
 * statistics: R's quantile(type = 7) (Hyndman & Fan 1996, definition 7), the same as d3.quantile
 * and numpy's default. NaN for an empty sample. Throws RangeError for p outside [0, 1].
 */
export function quantileSorted(sorted: ArrayLike<number>, p: number): number {
  checkProbability(p, 'quantileSorted')
  const n = sorted.length
  if (n === 0) return NaN
  const h = (n - 1) * p
  const lo = Math.floor(h)
  if (lo >= n - 1) return sorted[n - 1]
  const a = sorted[lo]
  const b = sorted[lo + 1]
  // a + (h - lo) * (b - a) would give NaN for equal infinite neighbours, and 0 * Infinity when h
  // lands exactly on an order statistic next to an infinite one; keep both exact.
  const frac = h - lo
  if (a === b || frac === 0) return a
  // R's own form, (1 - h) a + h b, where a neighbour is infinite: quantile(c(-Inf, 0), 0.5) is -Inf
  // there, while a + h (b - a) gives -Inf + Inf = NaN. Finite values keep the form below (bit-identical to before).
  if (!Number.isFinite(a) || !Number.isFinite(b)) return (1 - frac) * a + frac * b
  return a + frac * (b - a)
}

/** An ascending sorted copy; null if any value is NaN (no order exists then). */
function sortedCopy(values: ArrayLike<number>): Float64Array | null {
  const copy = Float64Array.from(values)
  for (let i = 0; i < copy.length; i++) if (Number.isNaN(copy[i])) return null
  return copy.sort() // typed arrays sort numerically
}

/**
 * The p-quantile (R type 7, see quantileSorted) of unsorted values. Sorts a copy; the input is
 * not mutated. NaN for an empty sample or if any value is NaN.
 */
export function quantile(values: ArrayLike<number>, p: number): number {
  checkProbability(p, 'quantile')
  const sorted = sortedCopy(values)
  return sorted === null ? NaN : quantileSorted(sorted, p)
}

/** Several quantiles (R type 7) of the same values, sorting only once. */
export function quantiles(values: ArrayLike<number>, ps: ArrayLike<number>): Float64Array {
  const out = new Float64Array(ps.length)
  for (let i = 0; i < ps.length; i++) checkProbability(ps[i], 'quantiles')
  const sorted = sortedCopy(values)
  for (let i = 0; i < ps.length; i++) out[i] = sorted === null ? NaN : quantileSorted(sorted, ps[i])
  return out
}

/** Median (the 0.5 quantile; mean of the two middle values for even n). NaN for an empty sample. */
export function median(values: ArrayLike<number>): number {
  return quantile(values, 0.5)
}

/** Interquartile range, Q3 - Q1 with R type 7 quantiles (R's IQR()). NaN for an empty sample. */
export function iqr(values: ArrayLike<number>): number {
  const [q1, q3] = quantiles(values, [0.25, 0.75])
  return q3 - q1
}
