import {describe, expect, it} from 'vitest'
import {goodBadSplit} from '../../src/search/bohb.js'
import {Kde, normalReferenceBandwidths} from '../../src/search/kde.js'
import {Rng} from '../../src/util/rng.js'

describe('KDE (statsmodels KDEMultivariate with normal-reference bandwidth)', () => {
  it('matches a hand computation in one continuous dimension', () => {
    // Values from the formulas in Python: h = 1.06 * sd * n^(-1/5) with sd over n (ddof 0).
    const kde = Kde.fit([[0], [0.5], [1]], Int32Array.from([0]), 1e-3)
    expect(kde.bw[0]).toBeCloseTo(0.34738094248928003, 14)
    expect(kde.pdf([0.5])).toBeCloseTo(0.6545459106464112, 12)
    expect(kde.pdf([0.2])).toBeCloseTo(0.6149928640626409, 12)
  })

  it('uses the Aitchison-Aitken kernel on a categorical coordinate', () => {
    const rows = [
      [0.1, 0],
      [0.3, 0],
      [0.8, 0],
      [0.4, 1],
    ]
    const kde = Kde.fit(rows, Int32Array.from([0, 3]), 1e-3)
    expect(kde.bw[0]).toBeCloseTo(0.2144960069069145, 14)
    expect(kde.bw[1]).toBeCloseTo(0.3643033538046297, 14)
    expect(kde.pdf([0.25, 0])).toBeCloseTo(0.5964912071740303, 12)
    expect(kde.pdf([0.25, 2])).toBeCloseTo(0.21823737926889125, 12)
    expect(kde.pdf([0.6, 1])).toBeCloseTo(0.2836605483690001, 12)
  })

  it('clips bandwidths below at the minimum (all points equal)', () => {
    const kde = Kde.fit([[0.4], [0.4], [0.4]], Int32Array.from([0]), 1e-3)
    expect(kde.bw[0]).toBe(1e-3)
  })

  it('with the magic clip keeps bandwidths at least 1 / (1 + n)', () => {
    const kde = Kde.fit([[0.4], [0.4], [0.4]], Int32Array.from([0]), 1e-3, {magicClip: true})
    expect(kde.bw[0]).toBe(1 / 4)
  })

  it('stays finite in 16 dimensions far from the data (log space)', () => {
    const rows = Array.from({length: 20}, (_, i) => Array.from({length: 16}, (_, j) => ((i * 7 + j * 3) % 20) / 100))
    const kde = Kde.fit(rows, new Int32Array(16), 1e-3)
    expect(kde.pdf(new Array(16).fill(1))).toBe(0)
    expect(Number.isFinite(kde.logPdf(new Array(16).fill(1)))).toBe(true)
  })

  it('normal reference bandwidth of a column is 1.06 sd n^(-1/(4+d))', () => {
    const data = Float64Array.from([0, 1, 2, 3])
    const bw = normalReferenceBandwidths(data, 4, 1)
    expect(bw[0]).toBeCloseTo(1.06 * Math.sqrt(1.25) * Math.pow(4, -1 / 5), 14)
  })
})

describe('KDE scoring with a bound (Kde.logPdfUnlessAtLeast)', () => {
  it('gives logPdf exactly, or a lower bound L of it with L - minus >= atLeast; exactly whenever logPdf - minus < atLeast', () => {
    const rng = new Rng(3)
    // 4 continuous and 3 categorical coordinates (2, 3 and 5 choices), 30 points
    const vartypes = Int32Array.from([0, 2, 0, 3, 0, 5, 0])
    const draw = (): number[] => Array.from(vartypes, (c) => (c > 0 ? rng.int(c) : rng.next()))
    let bounded = 0
    for (const options of [{}, {magicClip: true}, {priorWeight: 1}]) {
      const kde = Kde.fit(Array.from({length: 30}, draw), vartypes, 1e-3, options)
      for (let i = 0; i < 3000; i++) {
        const x = draw()
        const exact = kde.logPdf(x)
        const minus = rng.uniform(-20, 20)
        // thresholds around the exact difference, where the decision is close
        const atLeast = exact - minus + rng.uniform(-3, 3)
        const r = kde.logPdfUnlessAtLeast(x, minus, atLeast)
        if (exact - minus < atLeast) expect(r).toBe(exact)
        else if (r !== exact) {
          bounded++
          expect(r).toBeLessThanOrEqual(exact)
          expect(r - minus).toBeGreaterThanOrEqual(atLeast)
        }
        // a uniform prior turns the bound off
        if (options.priorWeight) expect(r).toBe(exact)
      }
    }
    expect(bounded).toBeGreaterThan(1000)
  })
})

describe("BOHB's good/bad split", () => {
  it('puts the best 15% (at least min_points) on the good side, the next 85% on the bad side', () => {
    const losses = [5, 1, 4, 2, 3, 0, 9, 8, 7, 6]
    // n = 10, min points 2: n_good = max(2, floor(1.5)) = 2, n_bad = max(2, floor(8.5)) = 8.
    const split = goodBadSplit(
      losses.map((loss) => ({loss})),
      15,
      2,
    )
    expect(split.good).toEqual([5, 1])
    expect(split.bad).toEqual([3, 4, 2, 0, 9, 8, 7, 6])
  })

  it('takes floor(15% of n) once that exceeds min_points, and failures (Infinity) go last', () => {
    const losses = Array.from({length: 20}, (_, i) => (i === 0 ? Infinity : 20 - i))
    // n = 20: n_good = max(2, 3) = 3: losses 1, 2, 3 at indices 19, 18, 17.
    const split = goodBadSplit(
      losses.map((loss) => ({loss})),
      15,
      2,
    )
    expect(split.good).toEqual([19, 18, 17])
    expect(split.bad).toHaveLength(17)
    expect(split.bad[split.bad.length - 1]).toBe(0)
  })

  it('with few points the bad side can be too small for a model (hpbandster needs more rows than dimensions)', () => {
    // d = 2, min points 3: 4 observations give good = 3, bad = 1 <= d: no model.
    const split = goodBadSplit([{loss: 1}, {loss: 2}, {loss: 3}, {loss: 4}], 15, 3)
    expect(split.good).toHaveLength(3)
    expect(split.bad).toHaveLength(1)
  })
})
