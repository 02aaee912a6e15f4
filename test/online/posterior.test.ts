import {describe, expect, it} from 'vitest'
import {ArmPosteriors} from '../../src/online/posterior.js'
import {ADAPTIVE_DISCOUNT_EVERY_QUERIES, PageHinkley, makeForgetting} from '../../src/online/forgetting.js'
import {Rng} from '../../src/util/rng.js'

describe('per-arm posteriors', () => {
  it('adds each observation to its own arm and level (Beta for two levels)', () => {
    const p = new ArmPosteriors(3, 2)
    for (let i = 0; i < 3; i++) p.observe(1, 1)
    p.observe(1, 0)
    // Beta(1,1) prior + 3 successes + 1 failure: counts [failures, successes] = [2, 4]
    expect(Array.from(p.counts)).toEqual([1, 1, 2, 4, 1, 1])
    expect(p.meanReward(1)).toBeCloseTo(4 / 6, 12)
    expect(p.meanReward(0)).toBe(0.5)
    expect(p.evidence(1)).toBe(4)
  })

  it('keeps failures: an arm tried often with poor results ranks below an untried one', () => {
    const p = new ArmPosteriors(2, 2)
    for (let i = 0; i < 20; i++) p.observe(0, i < 2 ? 1 : 0)
    // arm 0: Beta(3, 19), mean 3/22; arm 1 untried: mean 1/2
    expect(p.meanReward(0)).toBeCloseTo(3 / 22, 12)
    const rng = new Rng(1)
    let picks1 = 0
    for (let i = 0; i < 1000; i++) if (p.sampleBest(rng, 'exact') === 1) picks1++
    // P(Beta(1,1) > Beta(3,19)) is about 0.86
    expect(picks1).toBeGreaterThan(800)
  })

  it('computes a Dirichlet mean over graded levels by hand', () => {
    const p = new ArmPosteriors(1, 4)
    p.observe(0, 3)
    p.observe(0, 2)
    // counts [1, 1, 2, 2], rewards 0, 1/3, 2/3, 1: (1/3 + 4/3 + 2) / 6 = 11/18
    expect(p.meanReward(0)).toBeCloseTo(11 / 18, 12)
  })

  it('shrinks evidence toward the prior, not toward zero', () => {
    const prior = Float64Array.from([1, 3, 1, 1])
    const p = new ArmPosteriors(2, 2, prior)
    p.observe(0, 0, 4) // [5, 3]
    p.shrinkAll(0.5) // prior + 0.5 (counts - prior) = [3, 3]
    expect(Array.from(p.counts)).toEqual([3, 3, 1, 1])
    p.shrinkArm(0, 0)
    expect(Array.from(p.counts)).toEqual([1, 3, 1, 1])
  })

  it('prefers the arm with better evidence under both samplers', () => {
    for (const sampler of ['exact', 'gaussian'] as const) {
      const p = new ArmPosteriors(3, 2)
      for (let i = 0; i < 50; i++) {
        p.observe(0, i % 10 < 2 ? 1 : 0) // 0.2
        p.observe(1, i % 10 < 8 ? 1 : 0) // 0.8
        p.observe(2, i % 10 < 5 ? 1 : 0) // 0.5
      }
      const rng = new Rng(3)
      const picks = [0, 0, 0]
      for (let i = 0; i < 2000; i++) picks[p.sampleBest(rng, sampler)]++
      expect(picks[1]).toBeGreaterThan(1950)
    }
  })
})

describe('forgetting', () => {
  it('decays 5% every N queries, in phase with the counter', () => {
    const f = makeForgetting({kind: 'periodic', every: 3, fraction: 0.5}, [1])
    const p = new ArmPosteriors(1, 2)
    p.observe(0, 1, 8) // [1, 9]
    f.onQuery(1, [p])
    f.onQuery(2, [p])
    expect(Array.from(p.counts)).toEqual([1, 9])
    f.onQuery(3, [p]) // 1 + 0.5 * 8 = 5
    expect(Array.from(p.counts)).toEqual([1, 5])
    f.onQuery(4, [p])
    f.onQuery(6, [p])
    expect(Array.from(p.counts)).toEqual([1, 3])
  })

  it('Page-Hinkley alarms on the step computed by hand', () => {
    // delta 0.1, lambda 1: rewards 1,1,1 give down = .1,.2,.3; then 0 (mean .75): down = -.35,
    // gap .65; then 0 (mean .6): down = -.85, gap 1.15 > 1: alarm on the fifth reward.
    const ph = new PageHinkley(1, 0.1, 1, 1)
    expect([1, 1, 1, 0].map((x) => ph.update(0, x))).toEqual([false, false, false, false])
    expect(ph.update(0, 0)).toBe(true)
    // the detector restarted
    expect(Array.from(ph.stats)).toEqual([0, 0, 0, 0, 0, 0])
  })

  it('Page-Hinkley detects a rise as well', () => {
    // rewards 0,0,0 then 1: mean .25, up = -.3 + .75 - .1 = .35 (min -.3): gap .65; then 1 (mean .4): up = .35 + .6 - .1 = .85, gap 1.15
    const ph = new PageHinkley(1, 0.1, 1, 1)
    expect([0, 0, 0, 1].map((x) => ph.update(0, x))).toEqual([false, false, false, false])
    expect(ph.update(0, 1)).toBe(true)
  })

  it('waits for the minimum number of samples', () => {
    const ph = new PageHinkley(1, 0.1, 1, 10)
    expect([1, 1, 1, 0, 0, 0, 0].some((x) => ph.update(0, x))).toBe(false)
  })

  it('adaptive: an alarm resets the arm and shrinks its siblings; the half-life halves evidence', () => {
    const f = makeForgetting({kind: 'adaptive', halfLife: 2 * ADAPTIVE_DISCOUNT_EVERY_QUERIES, delta: 0.1, lambda: 1, minSamples: 1, keepOthers: 0.5}, [2])
    const p = new ArmPosteriors(2, 2)
    p.observe(1, 1, 4) // arm 1: [1, 5]
    const rewards = [1, 1, 1, 0, 0]
    let alarms = 0
    for (const x of rewards) {
      p.observe(0, x)
      if (f.onObserve(0, 0, x, [p])) alarms++
    }
    expect(alarms).toBe(1)
    expect(f.alarms).toBe(1)
    expect(Array.from(p.counts)).toEqual([1, 1, 1, 3]) // arm 0 reset; arm 1: 1 + 0.5 * 4
    // the half-life is applied every ADAPTIVE_DISCOUNT_EVERY_QUERIES queries: one half-life = two steps
    for (let q = 1; q < ADAPTIVE_DISCOUNT_EVERY_QUERIES; q++) f.onQuery(q, [p])
    expect(p.counts[3]).toBe(3)
    for (let q = ADAPTIVE_DISCOUNT_EVERY_QUERIES; q <= 2 * ADAPTIVE_DISCOUNT_EVERY_QUERIES; q++) f.onQuery(q, [p])
    expect(p.counts[3]).toBeCloseTo(2, 12) // arm 1: 1 + 2 / 2
  })
})
