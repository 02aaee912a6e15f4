/**
 * Confidence intervals with closed forms, and the normal quantile they need.
 */

/** Default confidence level of kt's intervals (two-sided 95%). */
export const DEFAULT_CONFIDENCE = 0.95

// Coefficients of Acklam's rational approximation to the inverse normal CDF (Peter J. Acklam,
// "An algorithm for computing the inverse normal cumulative distribution function", 2003;
// relative error below 1.15e-9 over the whole range).
const ACKLAM_A = [
  -3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1,
  2.506628277459239,
]
const ACKLAM_B = [
  -5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1,
]
const ACKLAM_C = [
  -7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968,
  2.938163982698783,
]
const ACKLAM_D = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416]
/** Acklam's break point between the central and the tail approximations. */
const ACKLAM_P_LOW = 0.02425

/** 1 / sqrt(2 pi), the peak of the standard normal density. */
const INV_SQRT_2PI = 0.3989422804014327

/** Standard normal density. */
function normalPdf(x: number): number {
  return INV_SQRT_2PI * Math.exp(-0.5 * x * x)
}

/**
 * Below this |x| the cumulative distribution uses Marsaglia's series, above it the continued
 * fraction, which converges fast in the tails and keeps small tail probabilities to full
 * relative precision (Marsaglia 2004, "Evaluating the Normal Distribution", J. Stat. Softw. 11(4)).
 */
const NORMAL_CDF_SERIES_LIMIT = 3
/** Depth of the tail continued fraction; at |x| >= 3 it has converged to double precision well before. */
const NORMAL_TAIL_FRACTION_TERMS = 200

/**
 * Standard normal cumulative distribution function (R's pnorm(x)), to about 1e-15 relative error:
 * for |x| < 3 Marsaglia's Taylor series Phi(x) = 1/2 + phi(x) (x + x^3/3 + x^5/(3*5) + ...),
 * beyond that the Laplace continued fraction for the tail
 * Q(t) = phi(t) / (t + 1/(t + 2/(t + 3/(t + ...)))) (Abramowitz & Stegun 26.2.14).
 */
export function normalCdf(x: number): number {
  if (Number.isNaN(x)) return NaN
  const t = Math.abs(x)
  if (t < NORMAL_CDF_SERIES_LIMIT) {
    let term = x
    let series = x
    const x2 = x * x
    for (let k = 3; series + term !== series; k += 2) {
      term *= x2 / k
      series += term
    }
    return 0.5 + normalPdf(x) * series
  }
  // Evaluate the continued fraction from the bottom up.
  let fraction = t
  for (let k = NORMAL_TAIL_FRACTION_TERMS; k >= 1; k--) fraction = t + k / fraction
  const tail = normalPdf(t) / fraction
  return x < 0 ? tail : 1 - tail
}

/**
 * Quantile function of the standard normal distribution (R's qnorm(p)), e.g.
 * normalQuantile(0.975) = 1.959963984540054. Acklam's rational approximation (relative error
 * below 1.15e-9) refined by one Halley step on normalCdf, as Acklam recommends, which brings it
 * to about double precision. -Infinity at 0, +Infinity at 1; throws RangeError outside [0, 1].
 */
export function normalQuantile(p: number): number {
  if (!(p >= 0 && p <= 1)) throw new RangeError(`normalQuantile: expected p in [0, 1], got ${p}`)
  if (p === 0) return -Infinity
  if (p === 1) return Infinity
  const x = acklamQuantile(p)
  // Halley step on f(x) = Phi(x) - p; in the upper half work with the upper tail, which
  // normalCdf returns exactly there, so p near 1 keeps its precision.
  const error = x > 0 ? 1 - p - normalCdf(-x) : normalCdf(x) - p
  const u = error / normalPdf(x)
  return x - u / (1 + (x * u) / 2)
}

/** Acklam's rational approximation alone (relative error below 1.15e-9). */
export function acklamQuantile(p: number): number {
  const [a0, a1, a2, a3, a4, a5] = ACKLAM_A
  const [b0, b1, b2, b3, b4] = ACKLAM_B
  const [c0, c1, c2, c3, c4, c5] = ACKLAM_C
  const [d0, d1, d2, d3] = ACKLAM_D
  const tail = (q: number): number => {
    // q = sqrt(-2 log(tail probability)); rational function in q for the lower tail.
    return (((((c0 * q + c1) * q + c2) * q + c3) * q + c4) * q + c5) / ((((d0 * q + d1) * q + d2) * q + d3) * q + 1)
  }
  if (p < ACKLAM_P_LOW) return tail(Math.sqrt(-2 * Math.log(p)))
  if (p > 1 - ACKLAM_P_LOW) return -tail(Math.sqrt(-2 * Math.log(1 - p)))
  const q = p - 0.5
  const r = q * q
  return (
    ((((((a0 * r + a1) * r + a2) * r + a3) * r + a4) * r + a5) * q) /
    (((((b0 * r + b1) * r + b2) * r + b3) * r + b4) * r + 1)
  )
}

/**
 * Two-sided critical value z such that P(|Z| <= z) = confidence, e.g. 1.96 for 0.95.
 * Throws RangeError unless confidence is in (0, 1).
 */
export function normalCritical(confidence: number = DEFAULT_CONFIDENCE): number {
  checkConfidence(confidence, 'normalCritical')
  return normalQuantile(1 - (1 - confidence) / 2)
}

/** Throws unless confidence is a level strictly between 0 and 1. */
export function checkConfidence(confidence: number, where: string): void {
  if (!(confidence > 0 && confidence < 1)) {
    throw new RangeError(`${where}: expected confidence in (0, 1), got ${confidence}`)
  }
}

/** A point estimate with a two-sided interval. */
export interface ProportionInterval {
  estimate: number
  low: number
  high: number
}

/**
 * Wilson score interval for a binomial proportion (Wilson 1927; recommended over the Wald interval
 * by Brown, Cai & DasGupta 2001, "Interval Estimation for a Binomial Proportion"): stays inside
 * [0, 1] and behaves at 0 or n successes. Equals R's prop.test(successes, n, correct = FALSE)$conf.int.
 * Null when n = 0 (no trials, no proportion). Throws RangeError for non-integer or out-of-range counts.
 */
export function wilsonInterval(
  successes: number,
  n: number,
  confidence: number = DEFAULT_CONFIDENCE,
): ProportionInterval | null {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`wilsonInterval: expected a count n >= 0, got ${n}`)
  if (!Number.isInteger(successes) || successes < 0 || successes > n) {
    throw new RangeError(`wilsonInterval: expected successes as an integer in [0, ${n}], got ${successes}`)
  }
  checkConfidence(confidence, 'wilsonInterval')
  if (n === 0) return null
  const z = normalCritical(confidence)
  const z2 = z * z
  const p = successes / n
  const denominator = 1 + z2 / n
  const center = (p + z2 / (2 * n)) / denominator
  const half = (z / denominator) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))
  // The exact bounds at 0 and n successes are 0 and 1; keep them exact against rounding.
  return {
    estimate: p,
    low: successes === 0 ? 0 : Math.max(0, center - half),
    high: successes === n ? 1 : Math.min(1, center + half),
  }
}
