import {describe, expect, it} from 'vitest'
import {
  bootstrapCI,
  DEFAULT_BOOTSTRAP_RESAMPLES,
  identityIndices,
  meanStatistic,
  pairedBootstrapDelta,
  resampleIndices,
} from '../../src/stats/bootstrap.js'
import {Rng} from '../../src/util/rng.js'

/** Mean of the picked rows. */
const meanOf =
  (values: ArrayLike<number>) =>
  (indices: Int32Array): number => {
    let s = 0
    for (let i = 0; i < indices.length; i++) s += values[indices[i]]
    return s / indices.length
  }

describe('resampling helpers', () => {
  it('draws indices in range, reproducibly from the seed', () => {
    expect(Array.from(identityIndices(4))).toEqual([0, 1, 2, 3])
    const a = resampleIndices(50, new Rng(1))
    expect(Array.from(a).every((i) => i >= 0 && i < 50)).toBe(true)
    expect(Array.from(resampleIndices(50, new Rng(1)))).toEqual(Array.from(a))
  })
})

describe('meanStatistic', () => {
  it('averages the picked rows, skipping undefined values', () => {
    const stat = meanStatistic([1, null, 3, NaN, 5])
    expect(stat(Int32Array.from([0, 2, 2]))).toBeCloseTo(7 / 3, 15)
    expect(stat(Int32Array.from([0, 1, 3, 4]))).toBe(3)
    expect(stat(Int32Array.from([1, 3]))).toBeNull()
    expect(stat(new Int32Array(0))).toBeNull()
  })
})

describe('bootstrapCI', () => {
  it('estimates on the original sample and brackets it', () => {
    const values = [3, 5, 4, 6, 2, 5, 4, 7, 3, 5]
    const ci = bootstrapCI(values.length, meanOf(values), {rng: new Rng(11)})
    expect(ci.estimate).toBeCloseTo(4.4, 14)
    expect(ci.resamples).toBe(DEFAULT_BOOTSTRAP_RESAMPLES)
    expect(ci.undefinedResamples).toBe(0)
    expect(ci.method).toBe('percentile')
    expect(ci.confidence).toBe(0.95)
    expect(ci.low!).toBeLessThan(4.4)
    expect(ci.high!).toBeGreaterThan(4.4)
    // The bootstrap se of this mean is about sd/sqrt(n) = 1.43/3.16 = 0.45, so the 95% interval
    // spans roughly 4.4 +- 0.9; sample mean bounds 2 and 7 are far outside.
    expect(ci.low!).toBeGreaterThan(3.2)
    expect(ci.high!).toBeLessThan(5.6)
  })
  it('is a zero-width interval at the constant for constant data', () => {
    const ci = bootstrapCI(8, () => 2.5, {rng: new Rng(1), resamples: 50})
    expect([ci.estimate, ci.low, ci.high]).toEqual([2.5, 2.5, 2.5])
  })
  it('is reproducible from the seed and narrows as confidence drops', () => {
    const values = Array.from({length: 30}, (_, i) => (i * 7) % 11)
    const a = bootstrapCI(30, meanOf(values), {rng: new Rng(5), resamples: 400})
    const b = bootstrapCI(30, meanOf(values), {rng: new Rng(5), resamples: 400})
    expect(b).toEqual(a)
    const narrow = bootstrapCI(30, meanOf(values), {rng: new Rng(5), resamples: 400, confidence: 0.5})
    // Same resamples (same seed), inner quantiles.
    expect(narrow.low!).toBeGreaterThanOrEqual(a.low!)
    expect(narrow.high!).toBeLessThanOrEqual(a.high!)
  })
  it('counts and excludes resamples where the statistic is undefined', () => {
    // Statistic: the mean, undefined (null) when the resample holds no row 0. P(no row 0) in a
    // resample of n = 5 is (4/5)^5 = 0.328, so about 33 of 100 resamples are undefined.
    const values = [1, 2, 3, 4, 5]
    const stat = (idx: Int32Array) => (Array.from(idx).includes(0) ? meanOf(values)(idx) : null)
    const ci = bootstrapCI(5, stat, {rng: new Rng(3), resamples: 100})
    expect(ci.undefinedResamples).toBeGreaterThan(15)
    expect(ci.undefinedResamples).toBeLessThan(50)
    expect(ci.low).not.toBeNull()
    const nanStat = bootstrapCI(5, () => NaN, {rng: new Rng(3), resamples: 20})
    expect(nanStat).toMatchObject({estimate: null, low: null, high: null, undefinedResamples: 20})
  })
  it('rejects bad options', () => {
    expect(() => bootstrapCI(5, () => 1, {rng: new Rng(1), resamples: 0})).toThrow(RangeError)
    expect(() => bootstrapCI(5, () => 1, {rng: new Rng(1), confidence: 1})).toThrow(RangeError)
    expect(() => bootstrapCI(-1, () => 1, {rng: new Rng(1)})).toThrow(RangeError)
  })
  it('covers the true mean of normal data near the nominal 95% (seeded simulation)', () => {
    // 200 samples of n = 30 from N(10, 2^2), a 95% percentile interval each. The percentile
    // interval of a mean undercovers slightly at n = 30 (about 93-94%); with 200 reps the Monte
    // Carlo se of the coverage is about 0.016, so [0.88, 0.99] fails only for a real defect.
    // Measured: 0.915 with this seed (0.915, 0.94, 0.95 with seeds 1, 2, 3).
    const rng = new Rng(2024)
    const reps = 200
    const n = 30
    let covered = 0
    for (let r = 0; r < reps; r++) {
      const sample = Float64Array.from({length: n}, () => rng.normal(10, 2))
      const ci = bootstrapCI(n, meanOf(sample), {rng: rng.fork(`rep ${r}`), resamples: 500})
      if (ci.low! <= 10 && 10 <= ci.high!) covered++
    }
    const coverage = covered / reps
    expect(coverage).toBeGreaterThanOrEqual(0.88)
    expect(coverage).toBeLessThanOrEqual(0.99)
  })
})

describe('pairedBootstrapDelta', () => {
  it('reports the absolute difference B - A and its interval', () => {
    // B is A plus 0.1 on every row: the paired delta is exactly 0.1 in every resample.
    const a = [0.2, 0.9, 0.4, 0.7, 0.1, 0.5]
    const b = a.map((x) => x + 0.1)
    const d = pairedBootstrapDelta(a.length, meanOf(a), meanOf(b), {rng: new Rng(9), resamples: 200})
    expect(d.kind).toBe('absolute')
    expect(d.method).toBe('percentile')
    expect(d.estimateA).toBeCloseTo(0.4666666666666667, 14)
    expect(d.estimateB).toBeCloseTo(0.5666666666666667, 14)
    expect(d.estimate!).toBeCloseTo(0.1, 12)
    expect(d.low!).toBeCloseTo(0.1, 12)
    expect(d.high!).toBeCloseTo(0.1, 12)
  })
  it('is much narrower than the unpaired spread when rows vary a lot', () => {
    // Row difficulty dominates both systems; B gains a noisy 0.05 on each row.
    const rng = new Rng(17)
    const n = 60
    const difficulty = Float64Array.from({length: n}, () => rng.uniform(0, 1))
    const a = difficulty
    const b = Float64Array.from(difficulty, (x) => x + 0.05 + rng.normal(0, 0.02))
    const d = pairedBootstrapDelta(n, meanOf(a), meanOf(b), {rng: new Rng(1), resamples: 500})
    expect(d.low!).toBeGreaterThan(0.03)
    expect(d.high!).toBeLessThan(0.07)
    const single = bootstrapCI(n, meanOf(a), {rng: new Rng(1), resamples: 500})
    expect(d.high! - d.low!).toBeLessThan((single.high! - single.low!) / 5)
  })
  it('excludes resamples where either side is undefined', () => {
    const d = pairedBootstrapDelta(
      4,
      () => 1,
      (idx) => (idx[0] === 0 ? null : 2),
      {rng: new Rng(2), resamples: 100},
    )
    expect(d.estimate).toBeNull() // identity starts at 0
    expect(d.undefinedResamples).toBeGreaterThan(10) // P(first index 0) = 1/4
    expect(d.undefinedResamples).toBeLessThan(45)
    expect([d.low, d.high]).toEqual([1, 1])
  })
})
