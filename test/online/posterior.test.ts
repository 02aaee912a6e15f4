import {describe, expect, it} from 'vitest'
import {ArmPosteriors} from '../../src/online/posterior.js'
import {
  ADAPTIVE_DISCOUNT_EVERY_QUERIES,
  SUSPICION_TIMEOUT_QUERIES,
  type ForgettingSettings,
  PageHinkley,
  makeForgetting,
} from '../../src/online/forgetting.js'
import {CHANGE_ACCEPT_PROB, CHANGE_SETTLE_PROB} from '../../src/online/posterior.js'
import {DrawStream} from '../../src/online/sampling.js'
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
    f.onQuery(1, [p], [0])
    f.onQuery(2, [p], [0])
    expect(Array.from(p.counts)).toEqual([1, 9])
    f.onQuery(3, [p], [0]) // 1 + 0.5 * 8 = 5
    expect(Array.from(p.counts)).toEqual([1, 5])
    f.onQuery(4, [p], [0])
    f.onQuery(6, [p], [0])
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
    const f = makeForgetting({
      kind: 'adaptive',
      halfLife: 2 * ADAPTIVE_DISCOUNT_EVERY_QUERIES,
      delta: 0.1,
      lambda: 1.5,
      minSamples: 1,
      referenceWindow: 100,
      keepOthers: 0.5,
    })
    const p = new ArmPosteriors(2, 2)
    p.observe(0, 1, 10) // arm 0 (incumbent): [1, 11]
    p.observe(1, 0, 4) // arm 1: [5, 1]
    const alarms = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0].filter((x, i) => f.onOutcome(x, [p], [0], i + 1)).length
    expect(alarms).toBe(1)
    expect(f.alarms).toBe(1)
    expect(Array.from(p.counts)).toEqual([1, 1, 3, 1]) // arm 0 reset; arm 1: 1 + 0.5 * 4
    // the half-life is applied every ADAPTIVE_DISCOUNT_EVERY_QUERIES queries: one half-life = two steps
    for (let q = 1; q < ADAPTIVE_DISCOUNT_EVERY_QUERIES; q++) f.onQuery(q, [p], [0])
    expect(p.counts[2]).toBe(3)
    for (let q = ADAPTIVE_DISCOUNT_EVERY_QUERIES; q <= 2 * ADAPTIVE_DISCOUNT_EVERY_QUERIES; q++) f.onQuery(q, [p], [0])
    expect(p.counts[2]).toBeCloseTo(2, 12) // 1 + 2 / 2
  })
})

/** Adaptive settings with Page-Hinkley effectively off (only the mechanism under test acts). */
function quietAdaptive(extra: Partial<Extract<ForgettingSettings, {kind: 'adaptive'}>>): ForgettingSettings {
  return {
    kind: 'adaptive',
    halfLife: null,
    changeHalfLife: null,
    staleHalfLife: null,
    delta: 0.1,
    lambda: 1e9,
    minSamples: 1,
    referenceWindow: 100,
    keepOthers: 0.3,
    ...extra,
  }
}

/** One step of K = ADAPTIVE_DISCOUNT_EVERY_QUERIES queries (from..from+K-1) that play `played` in every dimension. */
function step(f: ReturnType<typeof makeForgetting>, posteriors: ArmPosteriors[], from: number, played: number[]): void {
  for (let q = from; q < from + ADAPTIVE_DISCOUNT_EVERY_QUERIES; q++) f.onQuery(q, posteriors, played)
}

describe('change model of one arm (hand-computed Bayes updates)', () => {
  /** Beta(1, 1) prior; arm 0 has 9 failures and 1 success: counts [failures, successes] = [10, 2]; w = 0.2. */
  function suspected(): ArmPosteriors {
    const p = new ArmPosteriors(2, 2)
    p.observe(0, 0, 9)
    p.observe(0, 1)
    p.raiseChangeProb(0, 0.8) // w = 1 - (1 - 0) * 0.8
    return p
  }

  it('raises the change probability as 1 - (1 - w) keep', () => {
    const p = suspected()
    expect(p.changeProb[0]).toBeCloseTo(0.2, 15)
    p.raiseChangeProb(0, 0.5)
    expect(p.changeProb[0]).toBeCloseTo(0.6, 15) // 1 - 0.8 * 0.5
  })

  it('a success of a bad arm favours "changed": w = 0.2 * 3 / (0.2 * 3 + 0.8)', () => {
    const p = suspected()
    p.observe(0, 1) // counts [10, 3]
    p.updateChange(0, 1)
    // unchanged predictive without this result: 2/12; changed (prior + fresh): 1/2; ratio 3
    expect(p.changeFactor[0]).toBeCloseTo(3, 12)
    expect(p.changeProb[0]).toBeCloseTo(0.6 / 1.4, 12) // 3/7
    expect(Array.from(p.fresh)).toEqual([0, 1, 0, 0])
    expect(Array.from(p.counts)).toEqual([10, 3, 1, 1])
    // second success: unchanged 3/13, changed (1 + 1)/(2 + 1) = 2/3: ratio 26/9
    p.observe(0, 1)
    p.updateChange(0, 1)
    expect(p.changeFactor[0]).toBeCloseTo(26 / 3, 12)
    expect(p.changeProb[0]).toBeCloseTo(78 / 114, 12) // (3/7)(26/9) / ((3/7)(26/9) + 4/7)
  })

  it('accepts the change at CHANGE_ACCEPT_PROB: the counts become prior + fresh', () => {
    const p = suspected()
    const ws: number[] = []
    for (let i = 0; i < 4; i++) {
      p.observe(0, 1)
      p.updateChange(0, 1)
      ws.push(p.changeProb[0])
    }
    // third success: ratio (3/4)/(4/14) = 21/8, w = 0.8505 (< 0.9); fourth: ratio (4/5)/(5/15) = 2.4, w = 0.9318 >= 0.9
    const w3 = ((78 / 114) * 21) / 8 / (((78 / 114) * 21) / 8 + 36 / 114)
    expect(ws[2]).toBeCloseTo(w3, 12)
    expect(CHANGE_ACCEPT_PROB).toBe(0.9)
    expect(ws[3]).toBe(0) // accepted and reset
    expect(Array.from(p.counts)).toEqual([1, 5, 1, 1]) // prior [1, 1] + fresh [0, 4]
    expect(Array.from(p.fresh)).toEqual([0, 0, 0, 0])
    expect(p.changeFactor[0]).toBe(1)
  })

  it('a failure of a bad arm favours "unchanged" and the arm is not suspected without a change probability', () => {
    const p = suspected()
    p.observe(0, 0) // counts [11, 2]
    p.updateChange(0, 0)
    // unchanged 10/12, changed 1/2: ratio 0.6; w = 0.12 / 0.92
    expect(p.changeFactor[0]).toBeCloseTo(0.6, 12)
    expect(p.changeProb[0]).toBeCloseTo(0.12 / 0.92, 12)
    p.decideChange(0) // w < 1/2: settled as unchanged, the evidence stays
    expect(Array.from(p.counts)).toEqual([11, 2, 1, 1])
    expect(p.changeProb[0]).toBe(0)
    p.observe(1, 1)
    p.updateChange(1, 1) // arm 1 was never suspected: nothing moves
    expect(p.changeProb[1]).toBe(0)
    expect(Array.from(p.fresh)).toEqual([0, 0, 0, 0])
  })

  it('settles a suspicion whose change probability falls below CHANGE_SETTLE_PROB', () => {
    expect(CHANGE_SETTLE_PROB).toBe(1e-9)
    const p = new ArmPosteriors(1, 2)
    p.observe(0, 1, 99) // Beta(100, 1): counts [1, 100]
    p.raiseChangeProb(0, 1 - 2e-9) // w = 2e-9 (to rounding of 1 - 2e-9)
    const w0 = p.changeProb[0]
    expect(w0).toBeCloseTo(2e-9, 15)
    p.observe(0, 1)
    p.updateChange(0, 1) // unchanged 100/101, changed 1/2: r = 0.505, w = 1.01e-9: still open
    expect(p.changeProb[0] / ((w0 * 0.505) / (w0 * 0.505 + 1 - w0))).toBeCloseTo(1, 12)
    expect(p.freshEvidence(0)).toBe(1)
    p.observe(0, 1)
    p.updateChange(0, 1) // unchanged 101/102, changed 2/3: r = 0.673, w = 6.8e-10 < 1e-9: settled
    expect(p.changeProb[0]).toBe(0)
    expect(p.freshEvidence(0)).toBe(0)
    expect(p.changeFactor[0]).toBe(1)
    expect(Array.from(p.counts)).toEqual([1, 102])
  })

  it('graded levels use the Dirichlet predictive alpha_l / alpha_0', () => {
    const p = new ArmPosteriors(1, 4) // prior [1, 1, 1, 1]
    p.observe(0, 0, 6) // [7, 1, 1, 1]
    p.raiseChangeProb(0, 0.5) // w = 0.5
    p.observe(0, 3) // [7, 1, 1, 2]
    p.updateChange(0, 3)
    // unchanged without this result: 1/10; changed: 1/4; ratio 2.5; w = 1.25 / 1.75
    expect(p.changeFactor[0]).toBeCloseTo(2.5, 12)
    expect(p.changeProb[0]).toBeCloseTo(1.25 / 1.75, 12)
  })

  it('a suspected arm is drawn from its changed component with probability w (every sampler)', () => {
    for (const sampler of ['exact', 'gaussian', 'logit'] as const) {
      const p = new ArmPosteriors(2, 2)
      p.observe(0, 0, 1000) // arm 0: Beta(1, 1001), never wins from its unchanged component
      p.observe(1, 0, 999)
      p.observe(1, 1, 999) // arm 1: Beta(1000, 1000), about 0.5
      p.raiseChangeProb(0, 0.7) // w = 0.3; changed component Beta(1, 1): beats ~0.5 half the time
      const stream = new DrawStream(new Rng(12))
      let wins = 0
      const n = 20_000
      for (let i = 0; i < n; i++) if (p.sampleBest(stream, sampler) === 0) wins++
      // P = 0.3 * 0.5 = 0.15 (se 0.0025)
      expect(Math.abs(wins / n - 0.15)).toBeLessThan(0.011)
    }
  })
})

describe('adaptive forgetting: change model and staleness', () => {
  it('raises the change probability of idle arms only, with half-life H * dimensions', () => {
    const K = ADAPTIVE_DISCOUNT_EVERY_QUERIES
    const one = makeForgetting(quietAdaptive({changeHalfLife: K}))
    const p = new ArmPosteriors(2, 2)
    step(one, [p], 1, [0])
    // arm 1 idle for one step of K = H queries: w = 1 - 0.5; arm 0 played
    expect(Array.from(p.changeProb)).toEqual([0, 0.5])
    step(one, [p], K + 1, [0])
    expect(p.changeProb[1]).toBeCloseTo(0.75, 15)
    const two = makeForgetting(quietAdaptive({changeHalfLife: K}))
    const a = new ArmPosteriors(2, 2)
    const b = new ArmPosteriors(2, 2)
    step(two, [a, b], 1, [0, 1])
    // two dimensions: per-arm half-life 2K, one step keeps 0.5^(1/2)
    expect(a.changeProb[1]).toBeCloseTo(1 - Math.SQRT1_2, 15)
    expect(b.changeProb[0]).toBeCloseTo(1 - Math.SQRT1_2, 15)
    expect(a.changeProb[0]).toBe(0)
  })

  it('settles an idle suspicion whose results favour "unchanged", then raises it afresh', () => {
    const K = ADAPTIVE_DISCOUNT_EVERY_QUERIES
    const f = makeForgetting(quietAdaptive({changeHalfLife: K}))
    const p = new ArmPosteriors(2, 2)
    p.observe(1, 0, 9) // arm 1: [10, 1]
    step(f, [p], 1, [0]) // arm 1 idle: w = 0.5
    f.onQuery(K + 1, [p], [1]) // arm 1 played once
    p.observe(1, 0) // [11, 1]
    f.onOutcome(0, [p], [1], K + 1) // unchanged 10/11, changed 1/2: factor 0.55 < 1
    expect(p.changeFactor[1]).toBeCloseTo(0.55, 12)
    expect(p.freshEvidence(1)).toBe(1)
    for (let q = K + 2; q <= 3 * K; q++) f.onQuery(q, [p], [0]) // step ending at 2K: arm 1 was played in it; step ending at 3K: idle
    // at 3K: settled (fresh cleared, evidence kept), then raised from 0 by one step: w = 0.5
    expect(p.freshEvidence(1)).toBe(0)
    expect(Array.from(p.counts.subarray(2))).toEqual([11, 1])
    expect(p.changeProb[1]).toBeCloseTo(0.5, 15)
  })

  it('decides a suspicion left without results for SUSPICION_TIMEOUT_QUERIES', () => {
    const K = ADAPTIVE_DISCOUNT_EVERY_QUERIES
    const H = 1e9 // the hazard barely moves w
    const f = makeForgetting(quietAdaptive({changeHalfLife: H}))
    const p = new ArmPosteriors(2, 2)
    p.observe(1, 0, 9) // arm 1: [10, 1]
    p.raiseChangeProb(1, 0.9) // w = 0.1
    f.onQuery(1, [p], [1])
    p.observe(1, 1)
    f.onOutcome(1, [p], [1], 1) // a success: unchanged without it (2 - 1)/(12 - 1), changed 1/2: factor 5.5 > 1
    expect(p.changeFactor[1]).toBeCloseTo(5.5, 12)
    expect(p.changeProb[1]).toBeCloseTo(0.55 / 1.45, 12) // w = 0.1 * 5.5 / (0.1 * 5.5 + 0.9) < 1/2
    let q = 2
    for (; q < SUSPICION_TIMEOUT_QUERIES; q++) f.onQuery(q, [p], [0])
    expect(p.freshEvidence(1)).toBe(1) // still open: the factor favours "changed"
    for (; q <= SUSPICION_TIMEOUT_QUERIES + K; q++) f.onQuery(q, [p], [0])
    // decided as "unchanged" (w < 1/2): the fresh success stays in the counts
    expect(p.freshEvidence(1)).toBe(0)
    expect(Array.from(p.counts.subarray(2))).toEqual([10, 2])
  })

  it('staleness half-life: an idle arm keeps 0.5^(K / half-life) of its evidence per step, a played arm all of it', () => {
    const K = ADAPTIVE_DISCOUNT_EVERY_QUERIES
    const f = makeForgetting(quietAdaptive({staleHalfLife: K}))
    const p = new ArmPosteriors(2, 2)
    p.observe(0, 1, 8) // [1, 9]
    p.observe(1, 1, 8)
    step(f, [p], 1, [0])
    expect(Array.from(p.counts)).toEqual([1, 9, 1, 5]) // arm 1: 1 + 8 / 2
    step(f, [p], K + 1, [0])
    expect(Array.from(p.counts)).toEqual([1, 9, 1, 3])
  })

  it('persists and restores the idle tables (and rejects a table of the wrong shape)', () => {
    const settings = quietAdaptive({changeHalfLife: 100, staleHalfLife: 200})
    const f = makeForgetting(settings)
    const p = new ArmPosteriors(3, 2)
    for (let q = 1; q <= 30; q++) {
      f.onQuery(q, [p], [q % 2])
      f.onOutcome(1, [p], [q % 2], q)
    }
    const saved = JSON.parse(JSON.stringify(f.save()))
    expect(saved.lastPlayed).toEqual([[30, 29, 0]])
    expect(saved.lastResult).toEqual([[30, 29, 0]])
    const g = makeForgetting(settings)
    g.load(saved, [p])
    expect(g.save()).toEqual(saved)
    expect(() => makeForgetting(settings).load({...saved, lastPlayed: [[1, 2]]}, [p])).toThrow(/does not fit/)
  })
})
