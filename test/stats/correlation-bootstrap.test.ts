import {describe, expect, it} from 'vitest'
import {ResampleCounts, correlationBootstrap, correlationDeltaBootstrap} from '../../src/stats/correlation-bootstrap.js'
import {pearson, spearman} from '../../src/stats/correlation.js'
import {quantileSorted} from '../../src/stats/summary.js'
import {Rng} from '../../src/util/rng.js'

/** The resample as explicit rows, to compare against the plain correlation functions. */
function materialise(set: ResampleCounts, b: number, v: ArrayLike<number>): Float64Array {
  const out: number[] = []
  set.row(b).forEach((c, i) => {
    for (let k = 0; k < c; k++) out.push(v[i])
  })
  return Float64Array.from(out)
}

describe('ResampleCounts', () => {
  it('draws resamples of n rows each', () => {
    const set = new ResampleCounts(37, 50, new Rng(1))
    for (let b = 0; b < 50; b++) expect(set.row(b).reduce((s, c) => s + c, 0)).toBe(37)
  })

  it('computes each resample correlation exactly as pearson/spearman on the materialised rows, ties included', () => {
    const rng = new Rng(11)
    for (let trial = 0; trial < 60; trial++) {
      const n = 2 + rng.int(40)
      const x = Float64Array.from({length: n}, () => rng.int(6) / 5)
      const y = Float64Array.from({length: n}, (_, i) => (rng.next() < 0.5 ? x[i] : rng.int(4)))
      const set = new ResampleCounts(n, 5, rng)
      for (let b = 0; b < 5; b++) {
        const xs = materialise(set, b, x),
          ys = materialise(set, b, y)
        for (const [kind, f] of [
          ['pearson', pearson],
          ['spearman', spearman],
        ] as const) {
          const expected = f(xs, ys),
            got = set.correlation(kind, x, y, b)
          if (expected === null) expect(got).toBeNull()
          else expect(got).toBeCloseTo(expected, 12)
        }
      }
    }
  })

  it('gives the percentile interval of the resampled values', () => {
    const rng = new Rng(5)
    const x = Float64Array.from({length: 30}, () => rng.next())
    const y = x.map((v) => v + rng.normal(0, 0.3))
    const set = new ResampleCounts(30, 200, new Rng(9))
    const r = correlationBootstrap('spearman', x, y, set, 0.9)
    const values = Float64Array.from({length: 200}, (_, b) =>
      spearman(materialise(set, b, x), materialise(set, b, y))!,
    ).sort()
    expect(r.low).toBeCloseTo(quantileSorted(values, 0.05), 12)
    expect(r.high).toBeCloseTo(quantileSorted(values, 0.95), 12)
    expect(r.estimate).toBe(spearman(x, y))
  })

  it('pairs the delta on the same resamples and calls it absolute', () => {
    const rng = new Rng(6)
    const y = Float64Array.from({length: 40}, () => rng.next())
    const good = y.map((v) => v + rng.normal(0, 0.1)),
      bad = y.map((v) => v + rng.normal(0, 1))
    const d = correlationDeltaBootstrap('pearson', bad, good, y, new ResampleCounts(40, 300, new Rng(2)), 0.95)
    expect(d.kind).toBe('absolute')
    expect(d.estimate).toBeCloseTo(pearson(good, y)! - pearson(bad, y)!, 12)
    expect(d.low!).toBeGreaterThan(0)
  })

  it('drops resamples whose correlation is NaN (an infinite value picked), as bootstrapCI does, and counts them', () => {
    const x = Float64Array.from({length: 12}, (_, i) => (i === 0 ? Infinity : i))
    const y = Float64Array.from({length: 12}, (_, i) => (i * 7) % 12)
    const set = new ResampleCounts(12, 200, new Rng(3))
    let picksInfinity = 0
    for (let b = 0; b < 200; b++) if (set.row(b)[0] > 0) picksInfinity++
    expect(picksInfinity).toBeGreaterThan(0)
    expect(picksInfinity).toBeLessThan(200)
    const r = correlationBootstrap('pearson', x, y, set, 0.9)
    expect(r.undefinedResamples).toBe(picksInfinity)
    expect(Number.isNaN(r.low!) || Number.isNaN(r.high!)).toBe(false)
    const d = correlationDeltaBootstrap('pearson', y, x, y, set, 0.9)
    expect(d.undefinedResamples).toBe(picksInfinity)
    expect(Number.isNaN(d.low!) || Number.isNaN(d.high!)).toBe(false)
  })

  it('reports a constant vector as undefined, never 0', () => {
    const r = correlationBootstrap(
      'spearman',
      new Float64Array(10).fill(0.5),
      Float64Array.from({length: 10}, (_, i) => i),
      new ResampleCounts(10, 50, new Rng(1)),
      0.95,
    )
    expect(r.estimate).toBeNull()
    expect(r.low).toBeNull()
    expect(r.undefinedResamples).toBe(50)
  })
})
