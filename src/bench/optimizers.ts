/**
 * The optimiser benchmark protocol of ../../shared/benchmarks/optimizer-functions.md: run an
 * optimiser on a benchmark function for one seed, follow the incumbent (hpbandster's rule), and
 * report regret after each evaluation, cumulative budget (continuation and from-scratch
 * accounting, in units of b_max), the checkpoints, wall time and the optimiser's own overhead.
 */
import {median, quantile} from '../stats/summary.js'
import {benchmarkObjective, type BenchmarkName} from '../search/benchmarks/index.js'
import {incumbentTrace} from '../search/incumbent.js'
import {optimizeInProcess} from '../search/loop.js'
import {createOptimizer, resolveSettings, type OptimizerName, type OptimizerSettings} from '../search/optimizers.js'
import type {Checkpoint, EvalResult, Objective} from '../search/types.js'

/** Evaluation-count checkpoints of the contract. */
export const EVAL_CHECKPOINTS = [25, 50, 100, 200] as const
/** Budget checkpoints of the contract, in units of b_max. */
export const BUDGET_CHECKPOINTS = [25, 50, 100, 200] as const
/** Tolerance when comparing cumulative budgets with a checkpoint (sums of exact fractions). */
const BUDGET_EPS = 1e-9

export interface BenchRun {
  readonly function: string
  readonly optimizer: string
  readonly seed: number
  /** Regret of the incumbent after each evaluation. */
  readonly curve_regret: number[]
  /** Cumulative budget after each evaluation, b_max units, continuation accounting. */
  readonly curve_budget: number[]
  /** Same with from-scratch accounting (every evaluation pays its full budget). */
  readonly curve_budget_scratch: number[]
  readonly regret_at_evals: Record<string, number | null>
  readonly regret_at_budget: Record<string, number | null>
  readonly regret_at_budget_scratch: Record<string, number | null>
  readonly evaluations: number
  /** True if the optimiser had nothing more to propose (a complete grid) before the checkpoints. */
  readonly finished_early: boolean
  readonly failed: number
  /** Wall-clock seconds of the whole run (a timing, not a result). */
  readonly wall_s: number
  /** Optimiser time per suggestion (ask + tell, which fits the model), ms. */
  readonly suggest_ms: {readonly median: number; readonly p99: number}
}

export interface BenchOptions {
  readonly maxEvals?: number
  readonly maxBudget?: number
  readonly settings?: OptimizerSettings
}

/** Runs one optimiser on one function for one seed until both the evaluation and budget checkpoints are covered. */
export function runBenchmark(
  fn: BenchmarkName,
  optimizerName: OptimizerName,
  seed: number,
  options: BenchOptions = {},
): BenchRun {
  const objective = benchmarkObjective(fn)
  const maxEvals = options.maxEvals ?? Math.max(...EVAL_CHECKPOINTS)
  const maxBudget = options.maxBudget ?? Math.max(...BUDGET_CHECKPOINTS)
  const settings = resolveSettings(optimizerName, objective.space, options.settings ?? {}, maxEvals)
  const optimizer = createOptimizer(optimizerName, objective.space, seed, objective.fidelity, settings)
  const bMax = objective.fidelity?.max ?? 1
  const started = performance.now()
  const cumBudget: number[] = []
  const cumScratch: number[] = []
  const checkpoints = new Map<number, Checkpoint>()
  const reached = new Map<string, number>()
  let used = 0
  let usedScratch = 0
  const {steps, finished} = optimizeInProcess(
    optimizer,
    (trial) => {
      const previous = trial.continues && objective.continuation ? checkpoints.get(trial.continues.trialId) : undefined
      const result = evaluateSync(objective, trial.config, trial.budget, {
        trialId: trial.id,
        configId: trial.configId,
        seed,
        checkpoint: previous,
      })
      const ok = Number.isFinite(result.loss)
      if (ok && result.checkpoint !== undefined)
        checkpoints.set(trial.id, {budget: trial.budget, state: result.checkpoint})
      const before = reached.get(trial.configId) ?? 0
      used += (objective.continuation ? Math.max(0, trial.budget - before) : trial.budget) / bMax
      reached.set(trial.configId, Math.max(before, trial.budget))
      usedScratch += trial.budget / bMax
      cumBudget.push(used)
      cumScratch.push(usedScratch)
      return {result: ok ? {status: 'ok', loss: result.loss, values: result.values} : {status: 'failed'}, value: null}
    },
    {proceed: (steps) => steps.length < maxEvals || used < maxBudget - BUDGET_EPS},
  )
  const evaluations = steps
  const failed = steps.filter((s) => s.status === 'failed').length
  const suggestMs = steps.map((s) => s.askMs + s.tellMs)
  const wall = (performance.now() - started) / 1000
  const trace = incumbentTrace(evaluations)
  const optimum = objective.optimum ?? 0
  const regretCache = new Map<number, number>()
  const curve = Array.from(trace, (i) => {
    if (i < 0) return NaN
    if (!regretCache.has(i)) regretCache.set(i, objective.trueLoss!(evaluations[i].trial.config as never) - optimum)
    return regretCache.get(i)!
  })
  return {
    function: fn,
    optimizer: optimizerName,
    seed,
    curve_regret: curve,
    curve_budget: cumBudget,
    curve_budget_scratch: cumScratch,
    regret_at_evals: Object.fromEntries(EVAL_CHECKPOINTS.map((n) => [String(n), atEvaluations(curve, n, finished)])),
    regret_at_budget: Object.fromEntries(BUDGET_CHECKPOINTS.map((b) => [String(b), atBudget(curve, cumBudget, b)])),
    regret_at_budget_scratch: Object.fromEntries(
      BUDGET_CHECKPOINTS.map((b) => [String(b), atBudget(curve, cumScratch, b)]),
    ),
    evaluations: evaluations.length,
    finished_early: finished,
    failed,
    wall_s: wall,
    suggest_ms: {median: median(suggestMs), p99: quantile(suggestMs, 0.99)},
  }
}

function evaluateSync(
  objective: Objective,
  config: Record<string, unknown>,
  budget: number,
  ctx: Parameters<Objective['evaluate']>[2],
): EvalResult {
  try {
    const result = objective.evaluate(config as never, budget, ctx)
    if (result instanceof Promise) throw new Error('bench: benchmark objectives are synchronous')
    return result
  } catch {
    return {loss: NaN}
  }
}

/**
 * Regret after the n-th evaluation. A run whose optimiser finished earlier (a complete grid) keeps
 * its final regret; a run cut short otherwise gives null.
 */
export function atEvaluations(curve: readonly number[], n: number, finished = false): number | null {
  if (curve.length < n && !(finished && curve.length > 0)) return null
  if (curve.length < n) n = curve.length
  const v = curve[n - 1]
  return Number.isFinite(v) ? v : null
}

/** Regret after the last evaluation whose cumulative budget fits in `budget` (null if none does). */
export function atBudget(curve: readonly number[], cumulative: readonly number[], budget: number): number | null {
  let last = -1
  for (let i = 0; i < cumulative.length && cumulative[i] <= budget + BUDGET_EPS; i++) last = i
  if (last < 0) return null
  return Number.isFinite(curve[last]) ? curve[last] : null
}

export interface CheckpointSummary {
  readonly median: number | null
  readonly q25: number | null
  readonly q75: number | null
  readonly iqr: number | null
  /** Runs that reached the checkpoint. */
  readonly n: number
}

function summarize(values: readonly (number | null)[]): CheckpointSummary {
  const xs = values.filter((v): v is number => v !== null && Number.isFinite(v))
  if (xs.length === 0) return {median: null, q25: null, q75: null, iqr: null, n: 0}
  const q25 = quantile(xs, 0.25)
  const q75 = quantile(xs, 0.75)
  return {median: median(xs), q25, q75, iqr: q75 - q25, n: xs.length}
}

export interface OptimizerSummary {
  readonly function: string
  readonly optimizer: string
  readonly runs: number
  readonly at_evals: Record<string, CheckpointSummary>
  readonly at_budget: Record<string, CheckpointSummary>
  readonly at_budget_scratch: Record<string, CheckpointSummary>
  readonly suggest_ms_median: number
  readonly suggest_ms_p99: number
  readonly wall_s_median: number
}

export function summarizeRuns(runs: readonly BenchRun[]): OptimizerSummary {
  const first = runs[0]
  const pick = (
    key: 'regret_at_evals' | 'regret_at_budget' | 'regret_at_budget_scratch',
    checkpoints: readonly number[],
  ): Record<string, CheckpointSummary> =>
    Object.fromEntries(checkpoints.map((c) => [String(c), summarize(runs.map((r) => r[key][String(c)]))]))
  return {
    function: first.function,
    optimizer: first.optimizer,
    runs: runs.length,
    at_evals: pick('regret_at_evals', EVAL_CHECKPOINTS),
    at_budget: pick('regret_at_budget', BUDGET_CHECKPOINTS),
    at_budget_scratch: pick('regret_at_budget_scratch', BUDGET_CHECKPOINTS),
    suggest_ms_median: median(runs.map((r) => r.suggest_ms.median)),
    suggest_ms_p99: median(runs.map((r) => r.suggest_ms.p99)),
    wall_s_median: median(runs.map((r) => r.wall_s)),
  }
}

/** Median (over runs) regret at each budget of a grid, for charts and the budget-to-target search. */
export function medianRegretByBudget(
  runs: readonly BenchRun[],
  grid: readonly number[],
  scratch = false,
): Array<{budget: number; median: number | null; q25: number | null; q75: number | null}> {
  return grid.map((b) => {
    const s = summarize(runs.map((r) => atBudget(r.curve_regret, scratch ? r.curve_budget_scratch : r.curve_budget, b)))
    return {budget: b, median: s.median, q25: s.q25, q75: s.q75}
  })
}

/** Budgets 0.5, 1, 1.5, ... up to `max` (b_max units). */
export function budgetGrid(max: number, step = 0.5): number[] {
  const grid: number[] = []
  for (let k = 1; k * step <= max + BUDGET_EPS; k++) grid.push(k * step)
  return grid
}

/**
 * The smallest budget on the grid at which the challenger's median regret is at or below a target
 * (the baseline's median at its final checkpoint); null if it never gets there.
 */
export function budgetToReach(
  runs: readonly BenchRun[],
  target: number,
  grid: readonly number[],
  scratch = false,
): number | null {
  for (const point of medianRegretByBudget(runs, grid, scratch))
    if (point.median !== null && point.median <= target) return point.budget
  return null
}
