import {describe, expect, it} from 'vitest'
import type {Config} from '../../src/space/index.js'
import {Encoding} from '../../src/search/encoding.js'
import {HARTMANN6_ARGMIN} from '../../src/search/benchmarks/hartmann6.js'
import {Rng} from '../../src/util/rng.js'
import {fidelityOf, SUITE_FUNCTIONS, suiteFunction, suiteObjective} from '../../src/bench/suite/suite.js'
import {ktProposer, optunaProposer, runSuite, type SuiteRun} from '../../src/bench/suite/run.js'
import {suiteReport, suiteTable} from '../../src/bench/suite/report.js'
import {mergeRuns, readOptunaCache} from '../../src/bench/suite/peer-cache.js'

const h6 = (x: readonly number[]): Config => Object.fromEntries(x.map((v, i) => [`x${i + 1}`, v]))

/** Known minimisers of loss(x, 1), where the definition gives one. */
const ARGMIN: Record<string, Config> = {
  branin_mf: {x1: Math.PI, x2: 2.275},
  hartmann6_mf: h6(HARTMANN6_ARGMIN),
  crash_hartmann6: h6(HARTMANN6_ARGMIN),
  hetero_branin: {x1: Math.PI, x2: 2.275},
  park_mf: {x1: 1, x2: 1, x3: 1, x4: 1},
  borehole_mf: {rw: 0.05, r: 50000, Tu: 63070, Hu: 990, Tl: 63.1, Hl: 820, L: 1680, Kw: 9855},
  currin_mf: undefined as never,
  mixed: {optimizer: 1, schedule: 2, bias: 1, u1: 0.7, u2: 0.3, u3: 0.6, u4: 0.8},
  embedded20: Object.fromEntries(
    Array.from({length: 20}, (_, i) => [
      `x${i + 1}`,
      [(Math.PI + 5) / 15, 2.275 / 15, (Math.PI + 5) / 15, 2.275 / 15][[3, 7, 12, 18].indexOf(i)] ?? 0.5,
    ]),
  ),
}

describe('the broader optimiser suite', () => {
  for (const f of SUITE_FUNCTIONS) {
    it(`${f.name}: no point of 3000 random ones below the optimum, and the known minimiser at it`, () => {
      const encoding = new Encoding(f.space)
      const rng = new Rng(7)
      for (let i = 0; i < 3000; i++) {
        const x = encoding.decode(encoding.sampleUniform(rng))
        expect(f.loss(x, 1)).toBeGreaterThanOrEqual(f.optimum - 1e-9)
      }
      const argmin = ARGMIN[f.name]
      if (argmin) expect(f.loss(argmin, 1)).toBeCloseTo(f.optimum, 4)
    })
  }

  it('the multi-fidelity functions are biased at low budgets, not only noisy; curves cross', () => {
    for (const name of ['branin_mf', 'hartmann6_mf', 'park_mf', 'borehole_mf', 'currin_mf']) {
      const f = suiteFunction(name)
      const x = new Encoding(f.space).decode(new Encoding(f.space).sampleUniform(new Rng(3)))
      expect(Math.abs(f.loss(x, 0) - f.loss(x, 1)), name).toBeGreaterThan(1e-3)
    }
    const curves = suiteFunction('learning_curves')
    const fast = {lr: 1, width: 0.7, decay: 0.4, warmup: 0.5}
    const slow = {lr: 0.2, width: 0.7, decay: 0.4, warmup: 0.5}
    expect(curves.loss(fast, 0)).toBeLessThan(curves.loss(slow, 0))
    expect(curves.loss(fast, 1)).toBeGreaterThan(curves.loss(slow, 1))
    expect(fidelityOf(9)).toBe(0)
    expect(fidelityOf(729)).toBe(1)
  })

  it('evaluations: the same seed, configuration and budget give the same noise, shrinking with the budget; crashes throw', () => {
    const o = suiteObjective(suiteFunction('hetero_branin'))
    const x = {x1: 3, x2: 14}
    const spread = (budget: number): number => {
      const values = Array.from({length: 200}, (_, i) => {
        const r = o.evaluate(x, budget, {trialId: i, configId: `c${i}`, seed: 1}) as {loss: number}
        return r.loss
      })
      const mean = values.reduce((a, b) => a + b, 0) / values.length
      return Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length)
    }
    expect(spread(9)).toBeGreaterThan(4 * spread(243))
    const once = o.evaluate(x, 27, {trialId: 0, configId: 'a', seed: 2})
    expect(o.evaluate(x, 27, {trialId: 5, configId: 'a', seed: 2})).toEqual(once)
    const crash = suiteObjective(suiteFunction('crash_hartmann6'))
    expect(() => crash.evaluate(h6([0.1, 0.5, 0.5, 0.9, 0.5, 0.5]), 9, {trialId: 0, configId: 'a', seed: 0})).toThrow(
      /crash region/,
    )
  })

  it('runSuite: a kt run spends the budget it is given, counts crashes, and repeats itself for a seed', async () => {
    const a = await runSuite('crash_hartmann6', 'bohb', ktProposer('bohb', 'crash_hartmann6', 4), 4, 10)
    const b = await runSuite('crash_hartmann6', 'bohb', ktProposer('bohb', 'crash_hartmann6', 4), 4, 10)
    expect(a).toEqual(b)
    expect(a.failed).toBeGreaterThan(0)
    expect(a.regret[0]).not.toBeNull()
  })

  it('Optuna through the bridge (real python3-optuna): TPE with Hyperband asks, prunes and is held to the same cost', async () => {
    const run = await runSuite('branin_mf', 'optuna-tpe_hb', optunaProposer('tpe_hb', 'branin_mf', 0, 'fail'), 0, 10)
    expect(run.evaluations).toBeGreaterThan(10) // low-budget rungs: more evaluations than b_max units
    expect(run.regret[0]).toBeGreaterThanOrEqual(0)
  })

  it('the report: ahead only below every peer, the ratio to the best peer, one row per checkpoint', () => {
    const run = (optimizer: string, seed: number, r: number): SuiteRun => ({
      function: 'f',
      optimizer,
      seed,
      regret: [r, r, r / 2, r / 4],
      evaluations: 1,
      failed: 0,
    })
    const kt = [run('bohb', 0, 1), run('bohb', 1, 3)]
    const peers = [
      run('optuna-tpe', 0, 1),
      run('optuna-tpe', 1, 5),
      run('optuna-random', 0, 8),
      run('optuna-random', 1, 8),
    ]
    const report = suiteReport(kt, peers, [0, 1])
    expect(report.cells).toHaveLength(4)
    expect(report.cells[0].medians).toEqual({bohb: 2, 'optuna-tpe': 3, 'optuna-random': 8})
    expect(report.ahead).toBe(4)
    expect(report.cells[0].ratio).toBeCloseTo(2 / 3)
    const behind = suiteReport([run('bohb', 0, 9), run('bohb', 1, 9)], peers, [0, 1])
    expect(behind.ahead).toBe(0)
    expect(behind.behind_1_5x).toBe(4)
    expect(suiteTable(behind)).toMatch(/ahead of every Optuna sampler in 0\/4 cells/)
  })

  it('the peer cache: a refresh replaces the runs of its functions and seeds and keeps the rest', () => {
    const run = (fn: string, seed: number, r: number): SuiteRun => ({
      function: fn,
      optimizer: 'optuna-tpe',
      seed,
      regret: [r, r, r, r],
      evaluations: 1,
      failed: 0,
    })
    const merged = mergeRuns([run('a', 0, 1), run('a', 1, 1), run('b', 0, 1)], [run('a', 0, 2)], ['a'], [0])
    expect(merged).toEqual([run('a', 1, 1), run('b', 0, 1), run('a', 0, 2)])
  })

  it('the committed cache: Optuna 3.1 runs of suite functions, samplers and seeds 0-9, each at most once', () => {
    const cache = readOptunaCache()
    expect(cache.runs.length).toBeGreaterThan(0)
    const names = new Set(SUITE_FUNCTIONS.map((f) => f.name))
    const keys = cache.runs.map((r) => `${r.function}/${r.optimizer}/${r.seed}`)
    expect(new Set(keys).size).toBe(keys.length)
    for (const r of cache.runs) {
      expect(names.has(r.function)).toBe(true)
      expect(['optuna-tpe', 'optuna-tpe_hb', 'optuna-random']).toContain(r.optimizer)
      expect(r.seed >= 0 && r.seed <= 9).toBe(true)
      expect(r.regret).toHaveLength(4)
    }
  })
})
