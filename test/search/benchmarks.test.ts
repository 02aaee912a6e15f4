import {describe, expect, it} from 'vitest'
import {
  BRANIN_OPTIMUM,
  HARTMANN6_ARGMIN,
  HARTMANN6_OPTIMUM,
  SIMPLEX_ARGMAX,
  SIMPLEX_BEST_ACCURACY,
  branin,
  countingOnesObjective,
  hartmann6,
  simplexAccuracy,
  simplexMfObjective,
  simplexSpace,
} from '../../src/search/benchmarks/index.js'
import {Encoding} from '../../src/search/encoding.js'
import {simplexLattice} from '../../src/search/grid.js'
import {median} from '../../src/stats/summary.js'
import {Rng} from '../../src/util/rng.js'

describe('benchmark functions reach their known optima', () => {
  it('branin: 5 / (4 pi) at its three minimisers', () => {
    expect(BRANIN_OPTIMUM).toBeCloseTo(0.397887357729738, 15)
    for (const [x1, x2] of [
      [-Math.PI, 12.275],
      [Math.PI, 2.275],
      [9.42478, 2.475],
    ])
      expect(branin(x1, x2)).toBeCloseTo(BRANIN_OPTIMUM, 5)
    expect(branin(0, 0)).toBeCloseTo(55.60211264227026, 10)
  })

  it('hartmann6: -3.32237 at its minimiser, nothing lower nearby', () => {
    expect(hartmann6(HARTMANN6_ARGMIN)).toBeCloseTo(HARTMANN6_OPTIMUM, 5)
    const rng = new Rng(1)
    for (let i = 0; i < 200; i++) {
      const x = HARTMANN6_ARGMIN.map((v) => Math.min(1, Math.max(0, v + rng.normal(0, 0.01))))
      expect(hartmann6(x)).toBeGreaterThan(HARTMANN6_OPTIMUM - 1e-9)
    }
  })

  it('counting ones: -16 at all ones, observed exactly there at every budget', () => {
    const obj = countingOnesObjective()
    const ones = Object.fromEntries(obj.space.params.map((p) => [p.name, 1]))
    expect(obj.trueLoss!(ones)).toBe(-16)
    expect(obj.optimum).toBe(-16)
    expect((obj.evaluate(ones, 9, {trialId: 0, configId: 'a', seed: 1}) as {loss: number}).loss).toBe(-16)
  })

  it("counting ones: continuing from b to b' reuses the first b samples (same estimate as from scratch)", () => {
    const obj = countingOnesObjective()
    const config = Object.fromEntries(
      obj.space.params.map((p, i) => [p.name, p.kind === 'categorical' ? i % 2 : 0.1 * (i % 9)]),
    )
    const ctx = {trialId: 0, configId: 'c7', seed: 3}
    const at9 = obj.evaluate(config, 9, ctx) as {loss: number; checkpoint: unknown}
    const continued = obj.evaluate(config, 81, {...ctx, checkpoint: {budget: 9, state: at9.checkpoint}}) as {
      loss: number
    }
    const scratch = obj.evaluate(config, 81, ctx) as {loss: number}
    expect(continued.loss).toBe(scratch.loss)
    // and the noise is real: a different configuration id draws other samples
    expect((obj.evaluate(config, 81, {...ctx, configId: 'c8'}) as {loss: number}).loss).not.toBe(scratch.loss)
  })

  it('simplex: A* = exp(-17/1900) at w* = (203/380, 23/95, 33/190, 0.05), the best point of a fine lattice', () => {
    expect(SIMPLEX_BEST_ACCURACY).toBeCloseTo(0.9910925401654753, 15)
    expect(simplexAccuracy(SIMPLEX_ARGMAX)).toBeCloseTo(SIMPLEX_BEST_ACCURACY, 14)
    const group = simplexSpace.params[0] as never
    for (const p of simplexLattice(group, 0.02))
      expect(simplexAccuracy(Object.values(p) as number[])).toBeLessThanOrEqual(SIMPLEX_BEST_ACCURACY + 1e-12)
  })

  it('simplex: the floor is active (the unconstrained optimum has w4 = 0)', () => {
    expect(simplexAccuracy([0.55, 0.25, 0.2, 0])).toBe(1)
    expect(SIMPLEX_ARGMAX[3]).toBe(0.05)
  })

  it('simplex: uniform sampling of the floored simplex gives a median A of about 0.47', () => {
    const enc = new Encoding(simplexSpace)
    const rng = new Rng(11)
    const values = Array.from({length: 20000}, () =>
      simplexAccuracy(Object.values(enc.decode(enc.sampleUniform(rng))) as number[]),
    )
    expect(median(values)).toBeGreaterThan(0.45)
    expect(median(values)).toBeLessThan(0.49)
  })

  it('simplex_mf: observed accuracy is correct/b, continued exactly like a fresh estimate', () => {
    const obj = simplexMfObjective()
    const w = {w1: 0.4, w2: 0.3, w3: 0.2, w4: 0.1}
    const ctx = {trialId: 0, configId: 'x', seed: 9}
    const a27 = obj.evaluate(w, 27, ctx) as {loss: number; checkpoint: unknown}
    expect(Number.isInteger(-a27.loss * 27)).toBe(true)
    const cont = obj.evaluate(w, 243, {...ctx, checkpoint: {budget: 27, state: a27.checkpoint}}) as {loss: number}
    expect(cont.loss).toBe((obj.evaluate(w, 243, ctx) as {loss: number}).loss)
    expect(Math.abs(-cont.loss - simplexAccuracy([0.4, 0.3, 0.2, 0.1]))).toBeLessThan(0.1)
  })
})
