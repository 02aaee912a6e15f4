import {describe, expect, it} from 'vitest'
import {Rng} from '../../src/util/rng.js'

describe('Rng', () => {
  it('repeats its stream for the same seed and differs across seeds', () => {
    const a = new Rng(7), b = new Rng(7), c = new Rng(8)
    const xs = Array.from({length: 5}, () => a.next())
    expect(Array.from({length: 5}, () => b.next())).toEqual(xs)
    expect(Array.from({length: 5}, () => c.next())).not.toEqual(xs)
  })

  it('draws uniforms in [0,1) with mean near 1/2', () => {
    const r = new Rng(1)
    let sum = 0
    const n = 100_000
    for (let i = 0; i < n; i++) {
      const x = r.next()
      expect(x >= 0 && x < 1).toBe(true)
      sum += x
    }
    // standard error of the mean of U(0,1) is sqrt(1/12/n) ~ 0.0009; allow 5 se
    expect(Math.abs(sum / n - 0.5)).toBeLessThan(0.0046)
  })

  it('matches the known moments of gamma, beta and normal draws', () => {
    const r = new Rng(3)
    const n = 50_000
    const moments = (f: () => number) => {
      let s = 0, s2 = 0
      for (let i = 0; i < n; i++) { const x = f(); s += x; s2 += x * x }
      const m = s / n
      return {mean: m, variance: s2 / n - m * m}
    }
    const g = moments(() => r.gamma(2.5)) // mean 2.5, variance 2.5
    expect(g.mean).toBeCloseTo(2.5, 1)
    expect(g.variance).toBeCloseTo(2.5, 0)
    const gs = moments(() => r.gamma(0.5)) // mean 0.5, variance 0.5
    expect(gs.mean).toBeCloseTo(0.5, 1)
    const b = moments(() => r.beta(2, 3)) // mean 0.4, variance 0.04
    expect(b.mean).toBeCloseTo(0.4, 2)
    expect(b.variance).toBeCloseTo(0.04, 2)
    const z = moments(() => r.normal())
    expect(z.mean).toBeCloseTo(0, 1)
    expect(z.variance).toBeCloseTo(1, 1)
  })

  it('draws Dirichlet vectors on the simplex', () => {
    const r = new Rng(5)
    const v = r.dirichlet([1, 2, 3])
    expect(v.reduce((a, x) => a + x, 0)).toBeCloseTo(1, 12)
  })
})
