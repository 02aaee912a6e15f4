import {describe, expect, it} from 'vitest'
import {incumbent} from '../../src/search/incumbent.js'
import {optimizeInProcess} from '../../src/search/loop.js'
import {GridOptimizer} from '../../src/search/grid.js'
import {RandomOptimizer} from '../../src/search/random.js'
import type {Optimizer, Trial} from '../../src/search/types.js'
import type {ParamSpace} from '../../src/space/index.js'

const SPACE: ParamSpace = {
  id: 'loop-test',
  params: [
    {kind: 'float', name: 'x', low: 0, high: 1, scale: 'linear', default: 0.5, env: 'KT_X', description: 'x'},
    {kind: 'categorical', name: 'c', choices: ['a', 'b'], default: 'a', env: 'KT_C', description: 'c'},
  ],
}

const square = (trial: Trial): {result: {status: 'ok'; loss: number}; value: number} => {
  const x = trial.config.x as number
  return {result: {status: 'ok', loss: (x - 0.3) ** 2}, value: x}
}

describe('optimizeInProcess', () => {
  it('asks, evaluates and tells in order until maxTrials, each trial told before the next ask', () => {
    const told: number[] = []
    const inner = new RandomOptimizer(SPACE, {seed: 4, budget: 1})
    const optimizer: Optimizer = {
      name: 'spy',
      ask: () => {
        const t = inner.ask()
        if (typeof t !== 'string') expect(told).toEqual(Array.from({length: t.id}, (_, i) => i))
        return t
      },
      tell: (id, r) => {
        told.push(id)
        inner.tell(id, r)
      },
    }
    const {steps, finished} = optimizeInProcess(optimizer, square, {maxTrials: 7})
    expect(finished).toBe(false)
    expect(steps.map((s) => s.trial.id)).toEqual([0, 1, 2, 3, 4, 5, 6])
    expect(told).toEqual([0, 1, 2, 3, 4, 5, 6])
    expect(steps.every((s) => s.status === 'ok' && s.loss === (s.value - 0.3) ** 2)).toBe(true)
  })

  it("stops at the optimiser's 'done' and says so", () => {
    const grid = new GridOptimizer(SPACE, {seed: 0, budget: 1, maxPoints: 6})
    const {steps, finished} = optimizeInProcess(grid, square, {maxTrials: 100})
    expect(finished).toBe(true)
    expect(steps.length).toBe(grid.size)
  })

  it('stops when proceed says so, and reports every step to onStep', () => {
    const seen: number[] = []
    const {steps} = optimizeInProcess(new RandomOptimizer(SPACE, {seed: 1, budget: 1}), square, {
      proceed: (s) => s.reduce((sum, x) => sum + x.value, 0) < 2,
      onStep: (step, all) => seen.push(all.length, step.trial.id),
    })
    const total = steps.reduce((sum, x) => sum + x.value, 0)
    expect(total).toBeGreaterThanOrEqual(2)
    expect(total - steps[steps.length - 1].value).toBeLessThan(2)
    expect(seen).toEqual(steps.flatMap((s, i) => [i + 1, s.trial.id]))
  })

  it("throws on 'wait': nothing is pending in an in-process loop", () => {
    const waits: Optimizer = {name: 'waits', ask: () => 'wait', tell: () => undefined}
    expect(() => optimizeInProcess(waits, square, {maxTrials: 3})).toThrow(/waits with nothing running/)
  })

  it('steps carry the budget the caller gives, so the one incumbent rule picks among the largest', () => {
    const optimizer = new RandomOptimizer(SPACE, {seed: 9, budget: 1})
    const {steps} = optimizeInProcess(optimizer, (trial) => ({...square(trial), budget: trial.id % 2 === 0 ? 10 : 3}), {
      maxTrials: 10,
    })
    const inc = incumbent(steps)!
    expect(inc.budget).toBe(10)
    const full = steps.filter((s) => s.budget === 10)
    expect(inc.loss).toBe(Math.min(...full.map((s) => s.loss!)))
  })

  it('a failed evaluation is told as failed and never the incumbent', () => {
    const {steps} = optimizeInProcess(
      new RandomOptimizer(SPACE, {seed: 2, budget: 1}),
      (trial) => (trial.id === 0 ? {result: {status: 'failed'}, value: -1} : square(trial)),
      {maxTrials: 3},
    )
    expect(steps[0].status).toBe('failed')
    expect(steps[0].loss).toBeUndefined()
    expect(incumbent(steps)?.trial.id).not.toBe(0)
  })
})
