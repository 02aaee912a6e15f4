import {describe, expect, it} from 'vitest'
import {fitForest, predictForest} from '../../src/stats/forest.js'
import {fanova, treeVariances} from '../../src/stats/fanova.js'
import {Rng} from '../../src/util/rng.js'

describe('random forest + fANOVA', () => {
  it('a hand-built tree decomposes exactly: f = 1 on x0 > .5 (and x1 > .5), else 0', () => {
    // root splits x0 at .5; its right child splits x1 at .5; leaves 0, 0, 1
    const tree = {
      feature: Int32Array.from([0, -1, 1, -1, -1]),
      threshold: Float64Array.from([0.5, 0, 0.5, 0, 0]),
      left: Int32Array.from([1, -1, 3, -1, -1]),
      right: Int32Array.from([2, -1, 4, -1, -1]),
      value: Float64Array.from([0, 0, 0, 0, 1]),
    }
    // f = 1 on a quarter of the square: mean 1/4, variance 3/16; each marginal is 1/2 on half its axis: variance 1/16
    const {total, main} = treeVariances(tree, 2)
    expect(total).toBeCloseTo(3 / 16, 12)
    expect(main[0]).toBeCloseTo(1 / 16, 12)
    expect(main[1]).toBeCloseTo(1 / 16, 12)
  })

  it('recovers the analytic variance decomposition of f = a·x1 + b·x2² (+ an unused x3)', () => {
    // x ~ U(0,1)³: Var(a x1) = a²/12, Var(b x2²) = b²(1/5 - 1/9) = 4b²/45, x3 explains nothing; f is additive, so the shares sum to 1
    const a = 1
    const b = 2
    const v1 = (a * a) / 12
    const v2 = (4 * b * b) / 45
    const rng = new Rng(7)
    const n = 600
    const x = Array.from({length: n}, () => Float64Array.from([rng.next(), rng.next(), rng.next()]))
    const y = Float64Array.from(x, (r) => a * r[0] + b * r[1] ** 2)
    const forest = fitForest(x, y, {trees: 32, seed: 1})
    const r = fanova(forest, 3)
    expect(r.main_effect_share[0]).toBeGreaterThan(v1 / (v1 + v2) - 0.04)
    expect(r.main_effect_share[0]).toBeLessThan(v1 / (v1 + v2) + 0.04)
    expect(r.main_effect_share[1]).toBeGreaterThan(v2 / (v1 + v2) - 0.04)
    expect(r.main_effect_share[1]).toBeLessThan(v2 / (v1 + v2) + 0.04)
    expect(r.main_effect_share[2]).toBeLessThan(0.01)
    expect(r.importance.reduce((s, v) => s + v, 0)).toBeCloseTo(1, 12)
    // and the forest fits: mean absolute error at fresh points well under the function's spread
    const err = Array.from({length: 200}, () => {
      const p = [rng.next(), rng.next(), rng.next()]
      return Math.abs(predictForest(forest, p) - (a * p[0] + b * p[1] ** 2))
    })
    expect(err.reduce((s, e) => s + e, 0) / err.length).toBeLessThan(0.08)
  })

  it('an interaction is not a main effect: f = x1·x2 centred gives shares 3/7 each, not 1/2', () => {
    // f = (x1 - 1/2)(x2 - 1/2) + (x1 + x2)/2 ... use g = x1·x2: Var = 7/144, main effects Var(x/2) = 1/48 each: share 3/7
    const rng = new Rng(3)
    const x = Array.from({length: 800}, () => Float64Array.from([rng.next(), rng.next()]))
    const y = Float64Array.from(x, (r) => r[0] * r[1])
    const r = fanova(fitForest(x, y, {trees: 32, seed: 2}), 2)
    for (const j of [0, 1]) {
      expect(r.main_effect_share[j]).toBeGreaterThan(3 / 7 - 0.05)
      expect(r.main_effect_share[j]).toBeLessThan(3 / 7 + 0.05)
    }
  })
})
