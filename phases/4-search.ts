import {rmSync} from 'node:fs'
import {join} from 'node:path'
import {SIGNALS, weightsFromConfig, type Weights} from '../src/engine/importance/space.js'
import {runSearch} from '../src/study/search.js'
import {budgetLevels} from '../src/search/hyperband.js'
import {importanceObjective, IMPORTANCE_FIDELITY} from '../src/adapters/kt-importance.js'
import {scoreColumns, detailLevels, tokenBudget} from '../src/engine/importance/score.js'
import {averageRanks, pearson} from '../src/stats/correlation.js'
import {paretoFront} from '../src/stats/pareto.js'
import {correlationInterval} from './lib/metrics.js'
import {simplexLattice, latticeAround, randomSimplex, withWeight} from './lib/simplex.js'
import type {PhaseContext, StudyDataset} from './lib/context.js'
import type {Plan} from './plan.js'
import type {ScoredPoint, SearchResult} from '../src/report/types.js'

/** Points per weight line in the landscape chart (0, 0.05, ..., 1). */
const LANDSCAPE_POINTS = 21

/**
 * Phase 4: search over the weight simplex on the tuning dataset: the full lattice grid, a finer
 * lattice around its best point, and uniform random search; then the optimum with its interval,
 * the top points, the local gradient, 2-D slices for the heatmap, lines through the optimum and
 * the front of correlation vs token budget.
 */
export async function searchPhase(ctx: PhaseContext): Promise<SearchResult> {
  const {plan} = ctx.plan
  const ds = ctx.datasets().find((d) => d.role === 'tune')!
  const evaluate = evaluator(ds, plan)

  ctx.progress(`phase 4: grid search on ${ds.id}`)
  const grid = simplexLattice(plan.search.grid_step).map(evaluate)
  const gridBest = best(grid)
  ctx.progress('phase 4: refining around the grid optimum')
  const refine = latticeAround(gridBest.weights, plan.search.refine_step, plan.search.refine_radius).map(evaluate)
  const refineBest = best(refine)
  ctx.progress('phase 4: random search')
  const random = randomSimplex(plan.search.random_samples, ctx.rng('search/random')).map(evaluate)
  const randomBest = best(random)

  ctx.progress('phase 4: BOHB on the weight simplex')
  const bohb = await bohbSearch(ctx, ds, plan, evaluate)

  // The optimum honours the plan's token-budget criterion on the tuning set: the best point whose
  // token budget stays within the allowed growth over the baseline's (otherwise the best overall).
  const baselinePoint = evaluate(plan.baseline)
  const limit = tokenBudgetLimit(plan, baselinePoint.token_budget)
  const tagged: Array<[string, ScoredPoint]> = [
    ...grid.map((p): [string, ScoredPoint] => ['grid', p]),
    ...refine.map((p): [string, ScoredPoint] => ['refine', p]),
    ...random.map((p): [string, ScoredPoint] => ['random', p]),
    ['bohb', bohb.best],
  ]
  const pick = (points: Array<[string, ScoredPoint]>) => points.reduce((a, b) => (better(b[1], a[1]) ? b : a))
  const unconstrained = pick(tagged)
  const feasible = limit ? tagged.filter(([, p]) => limit.allows(p.token_budget)) : tagged
  const [source, optimum] = feasible.length > 0 ? pick(feasible) : unconstrained
  const baselineScores = scoreColumns(ds.signals, plan.baseline)
  const optimumScores = scoreColumns(ds.signals, optimum.weights)

  const all = dedupe([...grid, ...refine, ...random])
  const frontIdx = paretoFront(
    grid.filter((p) => p.objective !== null),
    [
      {value: (p: ScoredPoint) => p.objective!, sense: 'max'},
      {value: (p: ScoredPoint) => p.token_budget, sense: 'min'},
    ],
  )
  const definedGrid = grid.filter((p) => p.objective !== null)
  const front = frontIdx
    .map((i) => definedGrid[i])
    .sort((a, b) => a.token_budget - b.token_budget || b.objective! - a.objective!)

  return {
    dataset: ds.id,
    objective: plan.objective,
    grid: {step: plan.search.grid_step, points: grid.length, evaluated: grid.length, best: gridBest},
    refine: {step: plan.search.refine_step, radius: plan.search.refine_radius, points: refine.length, best: refineBest},
    random: {samples: random.length, best: randomBest},
    bohb,
    constraint: {
      description: limit
        ? `token budget on ${ds.id} ${limit.op} ${limit.max.toFixed(1)} tokens (the baseline's ${baselinePoint.token_budget.toFixed(1)} x (1 + ${limit.growth}), from acceptance criterion ${limit.criterion})`
        : 'none (the plan has no token-budget criterion)',
      token_budget_max: limit ? limit.max : null,
      feasible_points: feasible.length,
      evaluated_points: tagged.length,
      unconstrained_best: {...unconstrained[1], source: unconstrained[0]},
      binds: unconstrained[1] !== optimum,
    },
    optimum: {
      weights: optimum.weights,
      source,
      objective: correlationInterval(ctx, plan.objective, optimumScores, ds),
      token_budget: optimum.token_budget,
    },
    baseline: {
      weights: {...plan.baseline},
      objective: correlationInterval(ctx, plan.objective, baselineScores, ds),
      token_budget: evaluate(plan.baseline).token_budget,
    },
    top: all
      .filter((p) => p.objective !== null)
      .sort((a, b) => (better(a, b) ? -1 : better(b, a) ? 1 : 0))
      .slice(0, plan.search.top),
    smoothness: gradientAt(optimum.weights, evaluate, plan.search.grid_step),
    slices: slices(grid),
    landscape: SIGNALS.map((s) => ({
      signal: s,
      points: Array.from({length: LANDSCAPE_POINTS}, (_, k) => {
        const weight = k / (LANDSCAPE_POINTS - 1)
        return {weight, objective: evaluate(withWeight(optimum.weights, s, weight)).objective}
      }),
    })),
    front: front.map((p) => ({weights: p.weights, objective: p.objective!, token_budget: p.token_budget})),
    ...(ctx.retrieval ? {retrieval: await ctx.retrieval} : {}),
  }
}

/** The token-budget ceiling from the plan's acceptance criterion (relative growth over the baseline). */
function tokenBudgetLimit(
  plan: Plan,
  baseline: number,
): {max: number; op: string; growth: number; criterion: string; allows(b: number): boolean} | undefined {
  const c = plan.acceptance.find((a) => a.metric === 'token_budget_change_rel' && (a.op === '<' || a.op === '<='))
  if (!c) return undefined
  const max = baseline * (1 + c.value)
  return {max, op: c.op, growth: c.value, criterion: c.id, allows: (b) => (c.op === '<' ? b < max : b <= max)}
}

/** BOHB over the weight simplex, every trial persisted in the run's study store. */
async function bohbSearch(
  ctx: PhaseContext,
  ds: StudyDataset,
  plan: Plan,
  evaluate: (w: Weights) => ScoredPoint,
): Promise<SearchResult['bohb']> {
  const file = join(ctx.outDir, STUDY_FILE)
  // this run's store: a rerun starts it afresh, so the trial sequence depends only on the inputs
  rmSync(file, {force: true})
  const spec = {
    name: 'importance',
    options: {
      dataset: ctx.plan.resolvePath(plan.datasets.tune),
      timeScaleHours: plan.time_scale_hours,
      objective: plan.objective,
      seed: ctx.seed,
    },
  }
  const out = await runSearch({
    storage: file,
    study: BOHB_STUDY,
    objective: spec,
    objectiveInstance: importanceObjective(ds.signals, ds.truth, plan.objective, ctx.seed, `importance:${ds.id}`),
    optimizer: 'bohb',
    seed: ctx.seed,
    maxBudget: plan.search.bohb_budget,
  })
  if (!out.best) throw new Error('BOHB finished no trial')
  return {
    evaluations: out.summary.finished,
    budget_used: out.summary.budgetUsed,
    budget_unit: `full tuning set (${ds.signals.n} turns); budgets ${budgetLevels(IMPORTANCE_FIDELITY)
      .map((b) => `${b}/${IMPORTANCE_FIDELITY.max}`)
      .join(', ')}`,
    study: {file: STUDY_FILE, name: BOHB_STUDY},
    best: evaluate(weightsFromConfig(out.best.config)),
  }
}

/** The run's study store (SQLite) and the name of the importance BOHB study in it. */
export const STUDY_FILE = 'studies.sqlite'
const BOHB_STUDY = 'importance-bohb'

function evaluator(ds: StudyDataset, plan: Plan): (w: Weights) => ScoredPoint {
  const scores = new Float64Array(ds.signals.n)
  // Spearman is Pearson on average ranks: rank the fixed truth once, not at every point.
  const truthRanks = averageRanks(ds.truth)
  const correlation =
    plan.objective === 'spearman'
      ? (x: Float64Array) => pearson(averageRanks(x), truthRanks)
      : (x: Float64Array) => pearson(x, ds.truth)
  return (w) => {
    scoreColumns(ds.signals, w, scores)
    const levels = detailLevels(scores, plan.detail_levels)
    return {
      weights: {...w},
      objective: correlation(scores),
      token_budget: tokenBudget(levels, ds.signals.tokens, plan.token_cost),
    }
  }
}

/** a beats b: higher objective; ties go to the smaller token budget, then to the earlier point. */
function better(a: ScoredPoint, b: ScoredPoint): boolean {
  if (a.objective === null) return false
  if (b.objective === null) return true
  if (a.objective !== b.objective) return a.objective > b.objective
  return a.token_budget < b.token_budget
}

function best(points: ScoredPoint[]): ScoredPoint {
  return points.reduce((a, b) => (better(b, a) ? b : a))
}

function dedupe(points: ScoredPoint[]): ScoredPoint[] {
  const seen = new Set<string>()
  return points.filter((p) => {
    const key = SIGNALS.map((s) => p.weights[s].toFixed(6)).join(',')
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

/**
 * Gradient of the objective at w in the simplex's tangent space: for each signal, a central
 * difference along withWeight(w, s, w_s +/- h) (one-sided at a face). h is the grid step:
 * Spearman is a step function of the weights, so smaller steps mostly read 0. A component whose
 * neighbour has an undefined objective (constant scores) is undefined (null, with the reason),
 * never 0, and so is the norm.
 */
export function gradientAt(w: Weights, evaluate: (w: Weights) => ScoredPoint, h: number): SearchResult['smoothness'] {
  const gradient: Record<string, number | null> = {}
  const undefinedBecause: Record<string, string> = {}
  for (const s of SIGNALS) {
    const up = Math.min(1, w[s] + h),
      down = Math.max(0, w[s] - h)
    const fUp = evaluate(withWeight(w, s, up)).objective,
      fDown = evaluate(withWeight(w, s, down)).objective
    if (fUp === null || fDown === null) {
      gradient[s] = null
      undefinedBecause[s] =
        `the objective is undefined (constant scores) at ${s} = ${(fUp === null ? up : down).toFixed(2)}`
    } else gradient[s] = (fUp - fDown) / (up - down)
  }
  const components = SIGNALS.map((s) => gradient[s])
  const norm = components.every((g): g is number => g !== null)
    ? Math.sqrt(components.reduce((t, g) => t + g ** 2, 0))
    : null
  return {
    gradient,
    gradient_norm: norm,
    step: h,
    note: 'finite differences along each weight with the others rescaled; step = grid step',
    ...(Object.keys(undefinedBecause).length ? {undefined_because: undefinedBecause} : {}),
  }
}

/** For each pair of weights, the best objective over the other two at each lattice cell (a profile). */
function slices(grid: ScoredPoint[]): SearchResult['slices'] {
  const out: SearchResult['slices'] = []
  for (let i = 0; i < SIGNALS.length; i++)
    for (let j = i + 1; j < SIGNALS.length; j++) {
      const x = SIGNALS[i],
        y = SIGNALS[j]
      const cells = new Map<string, {x: number; y: number; objective: number | null}>()
      for (const p of grid) {
        const key = `${p.weights[x]},${p.weights[y]}`
        const cell = cells.get(key)
        if (!cell) cells.set(key, {x: p.weights[x], y: p.weights[y], objective: p.objective})
        else if (p.objective !== null && (cell.objective === null || p.objective > cell.objective))
          cell.objective = p.objective
      }
      out.push({x, y, cells: [...cells.values()], aggregation: 'max over the other two weights'})
    }
  return out
}
