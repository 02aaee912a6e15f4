import {describe, expect, it} from 'vitest'
import {engineFingerprint, parseEngineFile} from '../../src/adapters/file.js'
import {BohbOptimizer} from '../../src/search/bohb.js'
import {countingOnesObjective, hartmann6, hartmann6Space} from '../../src/search/benchmarks/index.js'
import {FidelityCheck} from '../../src/search/fidelity-check.js'
import {createOptimizer} from '../../src/search/optimizers.js'
import type {Config} from '../../src/space/index.js'
import type {Optimizer, Trial} from '../../src/search/types.js'

const FIDELITY = {min: 9, max: 729, eta: 3}
const h6 = (c: Config): number => hartmann6([1, 2, 3, 4, 5, 6].map((i) => Number(c[`x${i}`])))

/** Sequential ask/tell with a loss of (configuration, budget); every trial asked. */
function drive(opt: Optimizer, n: number, loss: (c: Config, budget: number) => number): Trial[] {
  const out: Trial[] = []
  for (let i = 0; i < n; i++) {
    const t = opt.ask()
    if (typeof t === 'string') throw new Error(t)
    opt.tell(t.id, {status: 'ok', loss: loss(t.config, t.budget)})
    out.push(t)
  }
  return out
}

/** Hartmann6 whose budgets below the largest rank configurations backwards. */
const reversed = (c: Config, budget: number): number => (budget < FIDELITY.max ? -h6(c) : h6(c))

describe('fidelity that earns its place', () => {
  it('FidelityCheck: a budget is trusted until enough pairs rank against the largest budget', () => {
    const check = new FidelityCheck(729, 6, 0.2)
    for (let i = 0; i < 5; i++) {
      check.record(`c${i}`, 9, -i)
      check.record(`c${i}`, 729, i)
      check.record(`c${i}`, 27, i * i)
    }
    check.record('failed', 9, undefined)
    check.record('failed', 729, 3)
    expect(check.correlation(9)).toEqual({rho: -1, pairs: 5})
    expect(check.trusted(9)).toBe(true) // 5 pairs: not enough to judge
    check.record('c5', 9, -5)
    check.record('c5', 729, 5)
    check.record('c5', 27, 25)
    expect(check.trusted(9)).toBe(false)
    expect(check.trusted(27)).toBe(true)
    expect(check.correlation(27).rho).toBeCloseTo(1)
    expect(check.trusted(729)).toBe(true)
  })

  it('BOHB with fidelityCheck stops starting brackets at budgets that misrank; without it they keep coming', () => {
    const run = (fidelityCheck: boolean): Trial[] =>
      drive(new BohbOptimizer(hartmann6Space, {seed: 3, fidelity: FIDELITY, fidelityCheck}), 1500, reversed)
    const starts = (trials: Trial[]): number[] => trials.filter((t) => t.info?.rung === 0).map((t) => t.budget)
    const checked = run(true)
    const plain = run(false)
    expect(starts(plain).slice(-200)).toContain(9)
    expect(starts(checked).slice(-200)).not.toContain(9)
    expect(starts(checked).slice(-200)).toContain(729)
    expect(JSON.stringify(run(true))).toBe(JSON.stringify(checked)) // the same history, the same decisions
  })

  it('comparableBudgets: false runs every bracket at the largest budget only', () => {
    const opt = new BohbOptimizer(hartmann6Space, {seed: 1, fidelity: FIDELITY, comparableBudgets: false})
    const trials = drive(opt, 60, reversed)
    expect(new Set(trials.map((t) => t.budget))).toEqual(new Set([729]))
    expect(trials.some((t) => t.info?.model_based)).toBe(true)
  })

  it("an engine file's tiers_comparable: false reaches the fidelity, BOHB and Hyperband, and the study's fingerprint", () => {
    const file = (comparable?: boolean) => ({
      kt_engine: 1,
      name: 'tiers',
      parameters: [1, 2, 3, 4, 5, 6].map((i) => ({
        name: `x${i}`,
        type: 'float',
        low: 0,
        high: 1,
        default: 0.5,
        env: `X${i}`,
      })),
      evaluate: {kind: 'command', command: ['true']},
      tiers: [9, 27, 81, 243, 729].map((budget) => ({name: `b${budget}`, budget})),
      ...(comparable === undefined ? {} : {tiers_comparable: comparable}),
      objectives: [{metric: 'loss', direction: 'minimize'}],
    })
    const plain = parseEngineFile(file(), 'eng.json')
    const apart = parseEngineFile(file(false), 'eng.json')
    expect(plain.fidelity).toEqual(FIDELITY)
    expect(parseEngineFile(file(true), 'eng.json').fidelity).toEqual(FIDELITY)
    expect(apart.fidelity).toEqual({...FIDELITY, comparable: false})
    expect(engineFingerprint(apart).tiers).not.toBe(engineFingerprint(plain).tiers)
    expect(engineFingerprint(parseEngineFile(file(true), 'eng.json'))).toEqual(engineFingerprint(plain))
    for (const name of ['bohb', 'hyperband']) {
      const budgets = (fidelity: typeof plain.fidelity) =>
        new Set(drive(createOptimizer(name, hartmann6Space, 1, fidelity), 60, reversed).map((t) => t.budget))
      expect(budgets(apart.fidelity)).toEqual(new Set([729]))
      expect(budgets(plain.fidelity)).toContain(9)
    }
  })

  it('earlyModel: model-based picks once each side has min(d + 1, 5) points, not 2d + 2 results (d = 16)', () => {
    const obj = countingOnesObjective()
    const loss = (c: Config, budget: number): number =>
      (obj.evaluate(c, budget, {trialId: 0, configId: 'x', seed: 0}) as {loss: number}).loss
    const early = drive(new BohbOptimizer(obj.space, {seed: 2, fidelity: obj.fidelity, earlyModel: true}), 34, loss)
    expect(early.slice(0, 10).some((t) => t.info?.model_based)).toBe(false)
    expect(early.slice(10).filter((t) => t.info?.model_based).length).toBeGreaterThan(8)
    const reference = drive(new BohbOptimizer(obj.space, {seed: 2, fidelity: obj.fidelity}), 34, loss)
    expect(reference.some((t) => t.info?.model_based)).toBe(false)
  })

  it('plain Hyperband: the brackets of BOHB, every configuration drawn at random', () => {
    const hb = createOptimizer('hyperband', hartmann6Space, 4, FIDELITY)
    const trials = drive(hb, 81 + 27 + 9 + 3 + 1 + 27, (c) => h6(c))
    expect(trials.slice(0, 81).every((t) => t.budget === 9)).toBe(true)
    expect(trials.slice(81, 108).every((t) => t.budget === 27 && t.continues?.budget === 9)).toBe(true)
    expect(trials[120].budget).toBe(729)
    expect(trials.slice(121).every((t) => t.budget === 27 && t.info?.bracket === 3)).toBe(true)
    expect(trials.some((t) => t.info?.model_based)).toBe(false)
    const again = drive(createOptimizer('hyperband', hartmann6Space, 4, FIDELITY), trials.length, (c) => h6(c))
    expect(again).toEqual(trials)
  })
})
