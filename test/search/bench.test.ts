import {describe, expect, it} from 'vitest'
import {atBudget, atEvaluations, budgetToReach, runBenchmark} from '../../src/bench/optimizers.js'
import {parseSeeds} from '../../src/bench/optimizers-report.js'
import {incumbentTrace} from '../../src/search/incumbent.js'

describe('benchmark protocol', () => {
  it("follows hpbandster's incumbent rule: larger budget wins, equal budget needs a lower loss, smaller never", () => {
    const evals = [
      {budget: 9, loss: 5, status: 'ok' as const},
      {budget: 9, loss: 3, status: 'ok' as const},
      {budget: 27, loss: 4, status: 'ok' as const}, // larger budget: incumbent despite the higher loss
      {budget: 9, loss: 1, status: 'ok' as const}, // smaller budget: never
      {budget: 27, loss: 4, status: 'ok' as const}, // equal budget, not lower
      {budget: 27, loss: 2, status: 'failed' as const},
      {budget: 27, loss: 3.5, status: 'ok' as const},
    ]
    expect(Array.from(incumbentTrace(evals))).toEqual([0, 1, 2, 2, 2, 2, 6])
  })

  it('reads checkpoints: after n evaluations, and after the last evaluation whose cumulative budget fits', () => {
    const curve = [9, 8, 7, 6, 5]
    const budget = [0.5, 1, 1.25, 2.5, 3]
    expect(atEvaluations(curve, 3)).toBe(7)
    expect(atEvaluations(curve, 6)).toBeNull()
    expect(atEvaluations(curve, 6, true)).toBe(5)
    expect(atBudget(curve, budget, 2)).toBe(7)
    expect(atBudget(curve, budget, 0.25)).toBeNull()
    expect(atBudget(curve, budget, 3)).toBe(5)
  })

  it('charges a promoted configuration only the budget it adds (continuation), and in full from scratch', () => {
    const run = runBenchmark('counting_ones', 'bohb', 0, {maxEvals: 120, maxBudget: 1})
    // First bracket: 81 x 9 = 1 b_max, 27 promotions from 9 to 27: 27 x 18 / 729 = 2/3 b_max.
    expect(run.curve_budget[80]).toBeCloseTo(1, 12)
    expect(run.curve_budget[107]).toBeCloseTo(1 + 2 / 3, 12)
    expect(run.curve_budget_scratch[107]).toBeCloseTo(2, 12)
    expect(run.curve_regret.every((r) => r >= 0)).toBe(true)
  })

  it('writes the contract fields; single-fidelity runs spend one b_max per evaluation', () => {
    const run = runBenchmark('branin', 'random', 3, {maxEvals: 30, maxBudget: 30})
    for (const key of [
      'function',
      'optimizer',
      'seed',
      'curve_regret',
      'curve_budget',
      'regret_at_evals',
      'regret_at_budget',
      'wall_s',
      'suggest_ms',
    ])
      expect(run).toHaveProperty(key)
    expect(run.curve_budget[29]).toBe(30)
    expect(run.regret_at_evals['25']).toBe(run.curve_regret[24])
    expect(run.regret_at_budget['25']).toBe(run.curve_regret[24])
    // regret never increases for a single-fidelity run (same budget, lower loss only)
    for (let i = 1; i < run.curve_regret.length; i++)
      expect(run.curve_regret[i]).toBeLessThanOrEqual(run.curve_regret[i - 1])
  })

  it('finds the budget at which a median curve reaches a target', () => {
    const runs = [0, 1, 2].map((s) => runBenchmark('branin', 'random', s, {maxEvals: 20, maxBudget: 20}))
    const final = runs.map((r) => r.curve_regret[19]).sort((a, b) => a - b)[1]
    const reach = budgetToReach(runs, final, [5, 10, 15, 20])
    expect(reach).not.toBeNull()
    expect(reach!).toBeLessThanOrEqual(20)
  })

  it('parses seed ranges and lists', () => {
    expect(parseSeeds('0-9')).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(parseSeeds('1,3,5-6')).toEqual([1, 3, 5, 6])
    expect(() => parseSeeds('5-2')).toThrow(/--seeds: expected a range LOW-HIGH with LOW <= HIGH, got 5-2/)
    expect(() => parseSeeds('x')).toThrow(/--seeds: expected seeds like 0-9/)
  })
})
