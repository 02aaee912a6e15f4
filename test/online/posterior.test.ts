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
    const f = makeForgetting({kind: 'periodic', every: 3, fraction: 0.5})
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

  it('Page-Hinkley statistics follow the hand computation', () => {
    // delta 0.1, lambda 1, reference window 2 (weights 1, then 1/2):
    // x=1: m=1, down=.1; x=1: m=1, down=.2; x=1: m=1, down=.3 (max .3);
    // x=0: m=.5, down=.3-.5+.1=-.1 (gap .4); x=0: m=.25, down=-.1-.25+.1=-.25 (gap .55 < 1)
    const ph = new PageHinkley(0.1, 1, 1, 2)
    expect([1, 1, 1, 0, 0].map((x) => ph.update(x))).toEqual([false, false, false, false, false])
    expect(Array.from(ph.stats).map((v) => +v.toFixed(12))).toEqual([5, 0.25, -0.25, 0.3])
  })

  it('Page-Hinkley with a long reference catches a fall and ignores a rise', () => {
    // reference window 100 = running mean for 100 outcomes. Ten 1s then zeros: after k zeros
    // m = 10/(10+k), down = 1 + sum_{j=1..k} (0 - 10/(10+j) + .1); gap = 1 - down.
    // k=1: m=.9091 gap .8091; k=2: m=.8333 gap 1.5424 > lambda 1.5 -> alarm on the 12th outcome.
    const ph = new PageHinkley(0.1, 1.5, 1, 100)
    const alarms = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0].map((x) => ph.update(x))
    expect(alarms.indexOf(true)).toBe(11)
    expect(Array.from(ph.stats)).toEqual([0, 0, 0, 0]) // restarted
    const rising = new PageHinkley(0.1, 1.5, 1, 100)
    expect([0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1].some((x) => rising.update(x))).toBe(false)
  })

  it('waits for the minimum number of outcomes', () => {
    const ph = new PageHinkley(0.1, 1.5, 20, 100)
    expect([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0].some((x) => ph.update(x))).toBe(false)
  })

  it('adaptive: an alarm resets each incumbent and shrinks the other arms; the half-life halves evidence', () => {
    const f = makeForgetting({kind: 'adaptive', halfLife: 2 * ADAPTIVE_DISCOUNT_EVERY_QUERIES, delta: 0.1, lambda: 1.5, minSamples: 1, referenceWindow: 100, keepOthers: 0.5})
    const p = new ArmPosteriors(2, 2)
    p.observe(0, 1, 10) // arm 0 (incumbent): [1, 11]
    p.observe(1, 0, 4) // arm 1: [5, 1]
    const alarms = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0].filter((x) => f.onOutcome(x, [p])).length
    expect(alarms).toBe(1)
    expect(f.alarms).toBe(1)
    expect(Array.from(p.counts)).toEqual([1, 1, 3, 1]) // arm 0 reset; arm 1: 1 + 0.5 * 4
    // the half-life is applied every ADAPTIVE_DISCOUNT_EVERY_QUERIES queries: one half-life = two steps
    for (let q = 1; q < ADAPTIVE_DISCOUNT_EVERY_QUERIES; q++) f.onQuery(q, [p])
    expect(p.counts[2]).toBe(3)
    for (let q = ADAPTIVE_DISCOUNT_EVERY_QUERIES; q <= 2 * ADAPTIVE_DISCOUNT_EVERY_QUERIES; q++) f.onQuery(q, [p])
    expect(p.counts[2]).toBeCloseTo(2, 12) // 1 + 2 / 2
  })
})
