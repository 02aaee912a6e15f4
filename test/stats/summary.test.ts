import fc from 'fast-check'
import {describe, expect, it} from 'vitest'
import {
  definedValues,
  iqr,
  max,
  mean,
  median,
  min,
  quantile,
  quantiles,
  quantileSorted,
  sd,
  standardError,
  sum,
  sumSquaredDeviations,
  variance,
} from '../../src/stats/summary.js'

// A classic worked example: 2,4,4,4,5,5,7,9 has mean 5 and sum of squared deviations 32 (hand).
const EXAMPLE = [2, 4, 4, 4, 5, 5, 7, 9]

describe('sum', () => {
  it('adds exactly where naive summation loses the small terms', () => {
    // Naive left-to-right: 1 + 1e100 = 1e100, + 1 = 1e100, - 1e100 = 0. True sum: 2.
    expect(sum([1, 1e100, 1, -1e100])).toBe(2)
    // The doubles nearest 0.1, 0.2, 0.3 and 0.6 sum exactly to 2^-55 (by exact decimal expansion);
    // naive summation gives 1.1102230246251565e-16.
    expect(sum(new Float64Array([0.1, 0.2, 0.3, -0.6]))).toBe(2 ** -55)
  })
  it('is 0 for nothing, propagates NaN and follows IEEE for infinities', () => {
    expect(sum([])).toBe(0)
    expect(sum([1, NaN])).toBeNaN()
    expect(sum([1, Infinity, 2])).toBe(Infinity)
    expect(sum([-Infinity, 1])).toBe(-Infinity)
    expect(sum([Infinity, -Infinity])).toBeNaN()
  })
  it('sums 0.1 ten thousand times to 1000 within one ulp', () => {
    const xs = new Float64Array(10_000).fill(0.1)
    // The exact sum of the double nearest 0.1, times 1e4, rounds to 1000.0000000000000555 -> 1000.
    expect(sum(xs)).toBe(1000)
  })
})

describe('moments', () => {
  it('matches hand-computed values', () => {
    expect(mean(EXAMPLE)).toBe(5)
    expect(sumSquaredDeviations(EXAMPLE)).toBe(32)
    expect(variance(EXAMPLE)).toBeCloseTo(32 / 7, 14)
    // numpy: np.std(EXAMPLE, ddof=1) = 2.138089935299395; scipy.stats.sem = 0.7559289460184544
    expect(sd(EXAMPLE)).toBeCloseTo(2.138089935299395, 14)
    expect(standardError(new Float64Array(EXAMPLE))).toBeCloseTo(0.7559289460184544, 14)
  })
  it('is NaN (not 0) where undefined', () => {
    expect(mean([])).toBeNaN()
    expect(variance([3])).toBeNaN()
    expect(sd([])).toBeNaN()
    expect(standardError([1])).toBeNaN()
  })
  it('keeps the variance exact under a large offset (no one-pass cancellation)', () => {
    const shifted = EXAMPLE.map((x) => x + 1e9)
    expect(variance(shifted)).toBeCloseTo(32 / 7, 6)
  })
  it('has a variance invariant to shifts and scaling by c^2 (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({min: -1e3, max: 1e3, noNaN: true}), {minLength: 2, maxLength: 30}),
        fc.double({min: -1e3, max: 1e3, noNaN: true}),
        (xs, c) => {
          const v = variance(xs)
          expect(v).toBeGreaterThanOrEqual(0)
          const tol = 1e-9 * (1 + v) * (1 + c * c)
          expect(Math.abs(variance(xs.map((x) => x + c)) - v)).toBeLessThan(tol * 1e3)
          expect(Math.abs(variance(xs.map((x) => x * c)) - c * c * v)).toBeLessThan(tol)
        },
      ),
      {seed: 1, numRuns: 200},
    )
  })
  it('finds min and max, NaN for empty input', () => {
    expect(min(EXAMPLE)).toBe(2)
    expect(max(new Float64Array(EXAMPLE))).toBe(9)
    expect(min([])).toBeNaN()
    expect(max([1, NaN])).toBeNaN()
  })
})

describe('definedValues', () => {
  it('drops null, undefined and NaN', () => {
    expect(Array.from(definedValues([1, null, NaN, 2, undefined, 0]))).toEqual([1, 2, 0])
    expect(mean(definedValues([null, null]))).toBeNaN()
  })
})

describe('quantile (R type 7)', () => {
  const oneToTen = Array.from({length: 10}, (_, i) => i + 1)
  it('handles infinite neighbours as R type 7 does ((1 - h) a + h b)', () => {
    // R: quantile(c(-Inf, 0), 0.5) = -Inf; quantile(c(0, Inf), 0.5) = Inf; quantile(c(-Inf, Inf), 0.5) = NaN
    expect(quantile([-Infinity, 0], 0.5)).toBe(-Infinity)
    expect(quantile([0, Infinity], 0.5)).toBe(Infinity)
    expect(quantile([-Infinity, Infinity], 0.5)).toBeNaN()
    // R: quantile(c(-Inf, 0, 1), 0.25) = -Inf; quantile(c(0, 1, Inf), c(0.5, 0.75)) = 1, Inf
    expect(quantile([-Infinity, 0, 1], 0.25)).toBe(-Infinity)
    expect(quantile([0, 1, Infinity], 0.5)).toBe(1)
    expect(quantile([0, 1, Infinity], 0.75)).toBe(Infinity)
    expect(quantile([-Infinity, -Infinity], 0.3)).toBe(-Infinity)
  })

  it('matches numpy.quantile (default linear = R type 7)', () => {
    // numpy.quantile(np.arange(1, 11), [0.1, 0.33, 0.5, 0.9]) = [1.9, 3.97, 5.5, 9.1]
    expect(quantile(oneToTen, 0.1)).toBeCloseTo(1.9, 12)
    expect(quantile(oneToTen, 0.33)).toBeCloseTo(3.97, 12)
    expect(quantile(oneToTen, 0.5)).toBe(5.5)
    expect(quantile(oneToTen, 0.9)).toBeCloseTo(9.1, 12)
    expect(Array.from(quantiles(oneToTen, [0, 1]))).toEqual([1, 10])
  })
  it('does not mutate its input and handles unsorted input', () => {
    const xs = [5, 1, 4, 2, 3]
    expect(quantile(xs, 0.25)).toBe(2)
    expect(xs).toEqual([5, 1, 4, 2, 3])
    const typed = new Float64Array([3, 1, 2])
    expect(median(typed)).toBe(2)
    expect(Array.from(typed)).toEqual([3, 1, 2])
  })
  it('handles edge cases', () => {
    expect(quantile([], 0.5)).toBeNaN()
    expect(quantile([7], 0.3)).toBe(7)
    expect(quantile([1, NaN, 3], 0.5)).toBeNaN()
    expect(quantileSorted([-Infinity, -Infinity, 1], 0.25)).toBe(-Infinity)
    expect(() => quantile([1, 2], 1.5)).toThrow(RangeError)
    expect(() => quantile([1, 2], NaN)).toThrow(RangeError)
  })
  it('gives median and IQR like R (median 4.5, IQR 1.5 for the example)', () => {
    // scipy.stats.iqr(EXAMPLE) = 1.5 (Q1 = 4, Q3 = 5.5); numpy.median = 4.5
    expect(median(EXAMPLE)).toBe(4.5)
    expect(iqr(EXAMPLE)).toBe(1.5)
    expect(median([1, 2, 3, 4])).toBe(2.5)
  })
  it('is monotone in p and stays within [min, max] (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({min: -1e6, max: 1e6, noNaN: true}), {minLength: 1, maxLength: 40}),
        fc.double({min: 0, max: 1, noNaN: true}),
        fc.double({min: 0, max: 1, noNaN: true}),
        (xs, p, q) => {
          const [lo, hi] = p <= q ? [p, q] : [q, p]
          const a = quantile(xs, lo)
          const b = quantile(xs, hi)
          expect(a).toBeLessThanOrEqual(b)
          expect(a).toBeGreaterThanOrEqual(min(xs))
          expect(b).toBeLessThanOrEqual(max(xs))
        },
      ),
      {seed: 2, numRuns: 200},
    )
  })
})

describe('quantileSorted at an order statistic next to an infinity', () => {
  it('returns the order statistic, not NaN', () => {
    expect(quantileSorted([100, 200, Infinity], 0.5)).toBe(200)
    expect(quantileSorted([-Infinity, 1, 2], 0.5)).toBe(1)
    expect(quantileSorted([1, 2, Infinity], 0.75)).toBe(Infinity)
  })
})
