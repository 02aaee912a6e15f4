import {describe, expect, it} from 'vitest'
import {Rng} from '../../src/util/rng.js'
import {
  EpsilonGreedyPolicy,
  Ucb1Policy,
  compareRegrets,
  makeEnvironment,
  playRun,
  recoveryMedian,
  recoverySteps,
  regretCheckpoints,
  simulate,
  summarize,
} from '../../src/online/simulate.js'

describe('environments', () => {
  it('defines lin, hard and the switches as in the issue', () => {
    const lin = makeEnvironment('lin', 100, new Rng(1))
    expect(Array.from(lin.means[0]).map((m) => +m.toFixed(12))).toEqual([
      0.1, 0.18, 0.26, 0.34, 0.42, 0.5, 0.58, 0.66, 0.74, 0.82,
    ])
    expect(lin.switchAt).toBe(Infinity)
    const hard = makeEnvironment('hard', 100, new Rng(1))
    expect(Array.from(hard.means[0]).filter((m) => m === 0.5)).toHaveLength(1)
    expect(Array.from(hard.means[0]).filter((m) => m === 0.45)).toHaveLength(9)
    const rise = makeEnvironment('switch-rise', 101, new Rng(1))
    expect(rise.switchAt).toBe(50)
    expect(rise.means[1][0]).toBe(0.95)
    expect(makeEnvironment('switch-drop', 100, new Rng(1)).means[1][9]).toBe(0.05)
    const reverse = makeEnvironment('switch-reverse', 100, new Rng(1))
    expect(Array.from(reverse.means[1])).toEqual(Array.from(reverse.means[0]).reverse())
  })

  it('draws cat5 level probabilities that sum to 1 and rand means in (0, 1)', () => {
    const cat5 = makeEnvironment('cat5', 100, new Rng(2))
    expect(cat5.levels).toBe(5)
    for (let k = 0; k < 10; k++) expect(cat5.phases[0][k * 5 + 4]).toBe(1)
    const rand = makeEnvironment('rand', 100, new Rng(2))
    for (const m of rand.means[0]) expect(m > 0 && m < 1).toBe(true)
  })
})

describe('recovery', () => {
  it('is the first step after the switch from which the trailing share stays at or above the threshold', () => {
    // switch at 2, window 4, share .5: post-switch pulls 0 0 1 1 1 0 1 1 1 1 1 1 (12 steps, T = 14)
    const pulls = Uint8Array.from([1, 1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1])
    // trailing shares from step 2: 0/1, 0/2, 1/3, 2/4, 3/4, 3/4, 3/4, 3/4, 4/4 ... last below .5 is step 4
    expect(recoverySteps(pulls, 2, 4, 0.5)).toBe(3)
    // a dip later postpones recovery
    const dip = Uint8Array.from([1, 1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1])
    expect(recoverySteps(dip, 2, 4, 0.5)).toBe(9) // shares at steps 9, 10 are 1/4: recovered from step 11
    // recovery within one window of the end does not count
    expect(recoverySteps(Uint8Array.from([1, 1, 0, 0, 0, 0, 0, 1, 1, 1]), 2, 4, 0.5)).toBeNull()
  })

  it('takes the median over all runs with never-recovered runs as infinitely slow', () => {
    expect(recoveryMedian([100, 200, null])).toBe(200)
    expect(recoveryMedian([100, null, null, 50])).toBeNull()
    expect(recoveryMedian([100, 300, null, 50])).toBe(200)
  })
})

describe('baselines', () => {
  it('UCB1 pulls each arm once, then the largest mean + sqrt(2 ln t / n)', () => {
    const ucb = new Ucb1Policy(2, 2)
    expect(ucb.select()).toBe(0)
    ucb.update(0, 1)
    expect(ucb.select()).toBe(1)
    ucb.update(1, 0)
    // t = 2: arm 0: 1 + sqrt(2 ln 2 / 1) = 2.18; arm 1: 0 + 1.18
    expect(ucb.select()).toBe(0)
    ucb.update(0, 0)
    ucb.update(0, 0)
    // t = 4: arm 0: 1/3 + sqrt(2 ln 4 / 3) = 0.333 + 0.961 = 1.295; arm 1: 0 + sqrt(2 ln 4) = 1.665
    expect(ucb.select()).toBe(1)
  })

  it('epsilon-greedy explores about a tenth of the time', () => {
    const eg = new EpsilonGreedyPolicy(10, 2)
    for (let k = 0; k < 10; k++) eg.update(k, k === 3 ? 1 : 0)
    const rng = new Rng(4)
    let other = 0
    for (let i = 0; i < 10_000; i++) if (eg.select(rng) !== 3) other++
    // P(not arm 3) = 0.1 * 9/10 = 0.09 (se 0.0029)
    expect(Math.abs(other / 10_000 - 0.09)).toBeLessThan(0.012)
  })
})

describe('simulate', () => {
  it("is deterministic in the seed and reports the issue's JSON shape", () => {
    const a = simulate({env: 'switch-drop', runs: 3, steps: 400, seed: 9, sampler: 'logit'})
    const b = simulate({env: 'switch-drop', runs: 3, steps: 400, seed: 9, sampler: 'logit'})
    expect(a).toEqual(b)
    expect(Object.keys(a)).toEqual(['env', 'runs', 'steps', 'algorithms', 'comparisons'])
    expect(Object.keys(a.algorithms)).toEqual(['ts', 'ts-decay', 'ts-adaptive', 'ucb1', 'eps-greedy'])
    expect(Object.keys(a.algorithms.ts)).toEqual([
      'regret_mean',
      'regret_se',
      'optimal_share_last10',
      'recovery_steps_median',
      'never_recovered_share',
      'regret_at',
    ])
    expect(a.algorithms.ts.regret_at.map((c) => c.step)).toEqual([100, 200, 400])
    expect(a.algorithms.ts.regret_at[2].mean).toBe(a.algorithms.ts.regret_mean)
    expect(a.comparisons.map((c) => c.baseline)).toEqual(['ts-decay', 'ts-adaptive', 'ucb1', 'eps-greedy'])
    const lin = simulate({env: 'lin', runs: 2, steps: 200, seed: 9, sampler: 'logit', algorithms: ['ts']})
    expect(lin.algorithms.ts.recovery_steps_median).toBeNull()
    expect(lin.algorithms.ts.never_recovered_share).toBeNull()
  })

  it('reports regret at the steps of a 1-2-5 series up to T', () => {
    expect(regretCheckpoints(100)).toEqual([100])
    expect(regretCheckpoints(5000)).toEqual([100, 200, 500, 1000, 2000, 5000])
    expect(regretCheckpoints(20000)).toEqual([100, 200, 500, 1000, 2000, 5000, 10000, 20000])
    expect(regretCheckpoints(150)).toEqual([100, 150])
  })

  it('records the cumulative regret at each checkpoint', () => {
    const env = makeEnvironment('lin', 10, new Rng(1))
    const always0 = {select: () => 0, update: () => {}}
    const out = playRun(env, always0, 10, new Rng(1), 1, [1, 4, 10])
    expect(Array.from(out.regretAt).map((r) => Number(r.toFixed(10)))).toEqual([0.72, 2.88, 7.2])
  })

  it('compares final regrets paired by run: absolute and relative deltas with intervals on the same resamples', () => {
    const outcome = (regret: number) => ({regret, regretAt: new Float64Array([regret]), optimalShareLast: 0})
    // a is b minus 10 in every run: the absolute delta is exactly -10 in every resample (pairing cancels run noise).
    const b = [40, 60, 80, 100, 120].map(outcome)
    const a = b.map((o) => outcome(o.regret - 10))
    const c = compareRegrets('ts', a, 'eps-greedy', b, 7, 200)
    expect(c.delta_absolute).toEqual({estimate: -10, low: -10, high: -10})
    expect(c.delta_relative.estimate).toBeCloseTo(70 / 80 - 1, 12)
    // relative = -10 / mean(b): resamples with a larger mean(b) give a smaller |delta|.
    expect(c.delta_relative.low!).toBeLessThan(-0.125)
    expect(c.delta_relative.high!).toBeGreaterThan(-0.125)
    expect(c.delta_relative.high!).toBeLessThan(0)
    expect(c.confidence).toBe(0.95)
  })

  it('counts regret as the gap of every pull to the best mean', () => {
    const env = makeEnvironment('lin', 10, new Rng(1))
    const always0 = {select: () => 0, update: () => {}}
    const out = playRun(env, always0, 10, new Rng(1), 1)
    expect(out.regret).toBeCloseTo(10 * 0.72, 10)
    expect(out.optimalShareLast).toBe(0)
    expect(summarize([out, {...out, regret: out.regret + 2}]).regret_se).toBeCloseTo(1, 10)
  })

  it('Thompson sampling beats UCB1 and epsilon-greedy on lin (20 runs x 2000 steps)', () => {
    const r = simulate({
      env: 'lin',
      runs: 20,
      steps: 2000,
      seed: 1,
      sampler: 'logit',
      algorithms: ['ts', 'ucb1', 'eps-greedy'],
    })
    expect(r.algorithms.ts.regret_mean).toBeLessThan(0.5 * r.algorithms.ucb1.regret_mean)
    expect(r.algorithms.ts.regret_mean).toBeLessThan(0.7 * r.algorithms['eps-greedy'].regret_mean)
  })

  it('adaptive forgetting recovers from a drop faster than no forgetting (20 runs x 3000 steps)', () => {
    const r = simulate({
      env: 'switch-drop',
      runs: 20,
      steps: 3000,
      seed: 1,
      sampler: 'logit',
      algorithms: ['ts', 'ts-adaptive'],
    })
    expect(r.algorithms['ts-adaptive'].regret_mean).toBeLessThan(r.algorithms.ts.regret_mean)
    expect(r.algorithms['ts-adaptive'].recovery_steps_median!).toBeLessThan(500)
  })

  it('the change model recovers from a rise of an ignored arm, where no forgetting does not (20 runs x 3000 steps)', () => {
    const r = simulate({
      env: 'switch-rise',
      runs: 20,
      steps: 3000,
      seed: 1,
      sampler: 'logit',
      algorithms: ['ts', 'ts-adaptive'],
    })
    expect(r.algorithms.ts.recovery_steps_median).toBeNull()
    expect(r.algorithms['ts-adaptive'].recovery_steps_median!).toBeLessThan(500)
    expect(r.algorithms['ts-adaptive'].never_recovered_share!).toBeLessThanOrEqual(0.1)
  })
})
