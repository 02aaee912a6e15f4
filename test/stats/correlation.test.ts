import fc from 'fast-check'
import {describe, expect, it} from 'vitest'
import {
  adjustedCorrelationRatio,
  averageRanks,
  correlationRatio,
  groupCount,
  pearson,
  spearman,
} from '../../src/stats/correlation.js'
import {Rng} from '../../src/util/rng.js'

describe('pearson', () => {
  it('matches scipy.stats.pearsonr', () => {
    // scipy.stats.pearsonr(x, y)[0] = 0.936042024798662
    const x = [1.2, 2.4, 3.1, 4.8, 5.0, 6.7, 7.3]
    const y = [2.0, 1.9, 3.5, 4.1, 6.2, 5.9, 8.0]
    expect(pearson(x, y)).toBeCloseTo(0.936042024798662, 13)
    expect(pearson(new Float64Array(x), new Float64Array(y))).toBeCloseTo(0.936042024798662, 13)
  })
  it('is exactly +-1 for lines, unaffected by a large offset', () => {
    expect(pearson([1, 2, 3], [2, 4, 6])).toBe(1)
    expect(pearson([1, 2, 3], [3, 2, 1])).toBe(-1)
    expect(pearson([1e9 + 1, 1e9 + 2, 1e9 + 3], [1, 2, 3])).toBeCloseTo(1, 12)
  })
  it('is null (never 0) when undefined', () => {
    expect(pearson([], [])).toBeNull()
    expect(pearson([1], [2])).toBeNull()
    expect(pearson([1, 1, 1], [1, 2, 3])).toBeNull()
    expect(pearson([0.1, 0.1, 0.1], [1, 2, 3])).toBeNull()
    expect(pearson([1, 2, 3], [5, 5, 5])).toBeNull()
  })
  it('rejects unpaired samples and propagates NaN', () => {
    expect(() => pearson([1, 2], [1, 2, 3])).toThrow(RangeError)
    expect(pearson([1, NaN, 3], [1, 2, 3])).toBeNaN()
  })
  it('lies in [-1, 1] and is symmetric (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.double({min: -1e6, max: 1e6, noNaN: true}), fc.double({min: -1e6, max: 1e6, noNaN: true})),
          {
            minLength: 2,
            maxLength: 30,
          },
        ),
        (pairs) => {
          const x = pairs.map((p) => p[0])
          const y = pairs.map((p) => p[1])
          const r = pearson(x, y)
          if (r === null) return
          expect(r).toBeGreaterThanOrEqual(-1)
          expect(r).toBeLessThanOrEqual(1)
          expect(pearson(y, x)).toBe(r)
        },
      ),
      {seed: 3, numRuns: 300},
    )
  })
})

describe('averageRanks', () => {
  it('averages tied ranks like scipy.stats.rankdata / R rank()', () => {
    // scipy.stats.rankdata([1, 2, 2, 3, 4, 4, 4, 5]) = [1, 2.5, 2.5, 4, 6, 6, 6, 8]
    expect(Array.from(averageRanks([1, 2, 2, 3, 4, 4, 4, 5]))).toEqual([1, 2.5, 2.5, 4, 6, 6, 6, 8])
    expect(Array.from(averageRanks([30, 10, 20]))).toEqual([3, 1, 2])
    expect(Array.from(averageRanks([7, 7, 7]))).toEqual([2, 2, 2])
    expect(averageRanks([]).length).toBe(0)
  })
  it('gives NaN a NaN rank without shifting the others', () => {
    const r = averageRanks([3, NaN, 1])
    expect([r[0], r[2]]).toEqual([2, 1])
    expect(r[1]).toBeNaN()
  })
})

describe('spearman', () => {
  it('matches scipy.stats.spearmanr with ties', () => {
    // scipy.stats.spearmanr([1,2,2,3,4,4,4,5], [3,1,4,1,5,9,2,6])[0] = 0.5495502618648208
    expect(spearman([1, 2, 2, 3, 4, 4, 4, 5], [3, 1, 4, 1, 5, 9, 2, 6])).toBeCloseTo(0.5495502618648208, 13)
  })
  it('is 1 for any increasing relation and null for a constant', () => {
    expect(spearman([1, 2, 3, 4], [1, 8, 27, 1000])).toBe(1)
    expect(spearman([1, 2, 3], [4, 4, 4])).toBeNull()
    expect(spearman([1], [1])).toBeNull()
  })
  it('is invariant under strictly increasing transforms (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({min: -50, max: 50}), fc.integer({min: -50, max: 50})), {
          minLength: 2,
          maxLength: 25,
        }),
        (pairs) => {
          const x = pairs.map((p) => p[0])
          const y = pairs.map((p) => p[1])
          const r = spearman(x, y)
          const transformed = spearman(
            x.map((v) => Math.exp(v / 10)),
            y.map((v) => v * v * v + 3),
          )
          if (r === null) expect(transformed).toBeNull()
          else expect(transformed).toBeCloseTo(r, 12)
        },
      ),
      {seed: 4, numRuns: 300},
    )
  })
})

describe('correlationRatio', () => {
  it('matches a hand-computed eta squared', () => {
    // values 1,3 | 5,7: grand mean 4, group means 2 and 6, SS_between = 2*4 + 2*4 = 16,
    // SS_total = 9 + 1 + 1 + 9 = 20, eta^2 = 0.8.
    expect(correlationRatio(['a', 'a', 'b', 'b'], [1, 3, 5, 7])).toBeCloseTo(0.8, 14)
    // Three groups: 1,2,3 | 4,5,6 | 7,8,9: SS_between = 3*(9+0+9) = 54, SS_total = 60, eta^2 = 0.9
    expect(correlationRatio([0, 0, 0, 1, 1, 1, 2, 2, 2], new Float64Array([1, 2, 3, 4, 5, 6, 7, 8, 9]))).toBeCloseTo(
      0.9,
      14,
    )
  })
  it('is 0 when group means agree and 1 when the category determines the value', () => {
    expect(correlationRatio(['a', 'b', 'a', 'b'], [1, 1, 3, 3])).toBe(0)
    expect(correlationRatio([true, false, true, false], [5, 2, 5, 2])).toBe(1)
  })
  it('is null for constant values or fewer than two rows', () => {
    expect(correlationRatio(['a', 'b'], [4, 4])).toBeNull()
    expect(correlationRatio(['a'], [4])).toBeNull()
  })
  it('equals r^2 for a two-valued numeric category (point-biserial)', () => {
    const g = [0, 1, 0, 1, 1, 0, 1]
    const v = [2.5, 3.1, 1.9, 4.4, 3.8, 2.2, 2.9]
    const r = pearson(g, v)!
    expect(correlationRatio(g, v)).toBeCloseTo(r * r, 13)
  })
  it('rejects unpaired input', () => {
    expect(() => correlationRatio(['a'], [1, 2])).toThrow(RangeError)
  })
  it('matches numpy-computed sums of squares on an unrelated grouping', () => {
    // numpy: SS_between / SS_total = 0.5192790919331082; (SS_b - 2 * SS_w / 5) / SS_t = 0.3269907287063514
    const v = [2.5, 3.1, 1.9, 4.4, 3.8, 2.2, 2.9, 3.3]
    const g = [0, 1, 2, 0, 1, 2, 0, 1]
    expect(correlationRatio(g, v)).toBeCloseTo(0.5192790919331082, 13)
    expect(adjustedCorrelationRatio(g, v)).toBeCloseTo(0.3269907287063514, 13)
  })
  it('counts groups', () => {
    expect(groupCount(['a', 'b', 'a', 'c'])).toBe(3)
  })
})

describe('adjustedCorrelationRatio (epsilon squared)', () => {
  it('matches hand-computed values', () => {
    // 1,3 | 5,7: SS_b 16, SS_w 4, k 2, n 4: (16 - 1 * 4/2) / 20 = 0.7
    expect(adjustedCorrelationRatio(['a', 'a', 'b', 'b'], [1, 3, 5, 7])).toBeCloseTo(0.7, 14)
    // 1,2,3 | 4,5,6 | 7,8,9: SS_b 54, SS_w 6, k 3, n 9: (54 - 2 * 6/6) / 60 = 52/60
    expect(adjustedCorrelationRatio([0, 0, 0, 1, 1, 1, 2, 2, 2], [1, 2, 3, 4, 5, 6, 7, 8, 9])).toBeCloseTo(52 / 60, 14)
  })
  it('is null when every row is its own group (where eta^2 is a meaningless 1)', () => {
    expect(correlationRatio(['a', 'b', 'c'], [1, 5, 2])).toBe(1)
    expect(adjustedCorrelationRatio(['a', 'b', 'c'], [1, 5, 2])).toBeNull()
  })
  it('stays near 0 for many small random groups where eta^2 is inflated (seeded simulation)', () => {
    // 200 rows, 50 random groups of about 4, values independent of the groups: E[eta^2] is about
    // (k - 1) / (n - 1) = 0.246, while epsilon^2 is nearly unbiased for 0 (sd about 0.06 here: eta^2 ~ Beta(24.5, 75)).
    // Measured with this seed: eta^2 = 0.184, epsilon^2 = -0.061.
    const rng = new Rng(42)
    const n = 200
    const groups = Array.from({length: n}, () => rng.int(50))
    const values = Array.from({length: n}, () => rng.normal())
    expect(correlationRatio(groups, values)!).toBeGreaterThan(0.15)
    expect(Math.abs(adjustedCorrelationRatio(groups, values)!)).toBeLessThan(0.12)
  })
})
