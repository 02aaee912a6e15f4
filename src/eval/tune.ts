import type {MemoryDataset} from '../data/conversations/types.js'
import {RETRIEVAL_SPACE} from '../engine/retrieval/space.js'
import {gridCoverage, GridOptimizer, type GridCoverage} from '../search/grid.js'
import {RandomOptimizer} from '../search/random.js'
import {incumbent} from '../search/incumbent.js'
import {optimizeInProcess} from '../search/loop.js'
import type {EvalResult, Fidelity, Objective, Optimizer} from '../search/types.js'
import {defaultConfig} from '../space/space.js'
import type {Config, ParamSpace} from '../space/types.js'
import {InputError} from '../util/errors.js'
import {evaluateSystem, prepareEvaluation, type PreparedEvaluation} from './harness.js'
import {DEFAULT_TUNING_METRIC, type MetricValues} from '../data/conversations/metrics.js'
import {
  FIDELITY_TIER_SPECS,
  fidelityTiers,
  tierForBudget,
  type FidelityTier,
  type TierName,
} from '../data/conversations/tiers.js'

/** Budget levels of the retrieval objective: the tiers' relative budgets 1, 3, 9 (eta = 3). */
export const RETRIEVAL_FIDELITY: Fidelity = {
  min: FIDELITY_TIER_SPECS[0].budget,
  max: FIDELITY_TIER_SPECS[FIDELITY_TIER_SPECS.length - 1].budget,
  eta: 3,
}

/**
 * Parameters a grid search covers: the fusion weights and the spread's reach, the parameters
 * with the largest effect in exploratory runs; the rest stay at their defaults. A full grid over
 * all twenty would need millions of points at two values each.
 */
const GRID_PARAMS = ['fusion', 'spread.max_depth', 'spread.retention', 'edge.episodic', 'seeds.count'] as const

/** The grid's sub-space: a selection of rows of the one table, not a second list. */
function gridSpace(names: readonly string[] = GRID_PARAMS): ParamSpace {
  return {id: `${RETRIEVAL_SPACE.id}-grid`, params: RETRIEVAL_SPACE.params.filter((p) => names.includes(p.name))}
}

/**
 * The retrieval engine as a search objective (the ask/tell contract of src/search): a budget
 * picks the fidelity tier (1 low, 3 medium, 9 high), the loss is minus the tuning metric over that
 * tier's queries, and the metrics carry every overall measure. Partial configurations are
 * completed with the defaults.
 */
function retrievalObjective(
  prepared: PreparedEvaluation,
  tiers: readonly FidelityTier[],
  metric: string = DEFAULT_TUNING_METRIC,
): Objective {
  const base = defaultConfig(RETRIEVAL_SPACE)
  return {
    id: `retrieval:${prepared.dataset.source}`,
    space: RETRIEVAL_SPACE,
    fidelity: RETRIEVAL_FIDELITY,
    evaluate(config: Config, budget: number): EvalResult {
      const tier = tierForBudget(tiers, budget)
      const overall = evaluateSystem(prepared, 'engine', {...base, ...config}, {queryIds: tier.queryIds}).report.overall
      const value = overall[metric]
      if (value === undefined)
        throw new InputError('tuning metric', `one of ${Object.keys(overall).join(', ')}`, metric)
      return {loss: -value, metrics: {...overall}}
    },
  }
}

export interface TuneOptions {
  /** A dataset, or one already prepared (engines built) to share across calls. */
  readonly dataset: MemoryDataset | PreparedEvaluation
  /** Fidelity tiers (default: fidelityTiers of the scored queries with `seed`). */
  readonly tiers?: readonly FidelityTier[]
  readonly method: 'grid' | 'random'
  /** Number of configurations to evaluate. */
  readonly budget: number
  readonly seed: number
  /** Metric to maximise (default recall@10). */
  readonly metric?: string
  /** An ask/tell optimiser to use instead of `method` (e.g. BOHB from src/search). */
  readonly optimizer?: Optimizer
}

interface TuneTrial {
  readonly id: number
  readonly config: Config
  readonly tier: TierName
  readonly budget: number
  /** Overall metrics of the engine on the tier's queries. */
  readonly metrics: MetricValues
  readonly value: number
}

export interface TuneResult {
  readonly method: string
  readonly metric: string
  readonly seed: number
  readonly trials: TuneTrial[]
  /** The best configuration at the highest budget evaluated, re-evaluated on the high tier. */
  readonly best: {readonly config: Config; readonly metrics: MetricValues; readonly trial: number}
  /** The default configuration on the high tier, for comparison. */
  readonly defaults: {readonly config: Config; readonly metrics: MetricValues}
  /** Grid search: how many of the grid's points the budget evaluated (a grid larger than the budget is a seeded random subset of it). */
  readonly grid?: GridCoverage
}

/**
 * Tunes the retrieval engine with grid or random search (or any ask/tell optimiser) for `budget`
 * evaluations. Grid and random search evaluate every trial at the full budget (the high tier);
 * a multi-fidelity optimiser asks for lower budgets itself.
 */
export function tuneRetrieval(options: TuneOptions): TuneResult {
  const prepared = 'engines' in options.dataset ? options.dataset : prepareEvaluation(options.dataset)
  const tiers = options.tiers ?? fidelityTiers(prepared.selection.queries, options.seed)
  const metric = options.metric ?? DEFAULT_TUNING_METRIC
  const objective = retrievalObjective(prepared, tiers, metric)
  const base = defaultConfig(RETRIEVAL_SPACE)
  const optimizer =
    options.optimizer ??
    (options.method === 'grid'
      ? new GridOptimizer(gridSpace(), {seed: options.seed, budget: RETRIEVAL_FIDELITY.max, maxPoints: options.budget})
      : new RandomOptimizer(RETRIEVAL_SPACE, {
          seed: options.seed,
          budget: RETRIEVAL_FIDELITY.max,
          maxTrials: options.budget,
        }))
  const {steps} = optimizeInProcess(
    optimizer,
    (trial) => {
      const config = {...base, ...trial.config}
      const result = objective.evaluate(config, trial.budget, {
        trialId: trial.id,
        configId: trial.configId,
        seed: options.seed,
      }) as EvalResult
      const value: TuneTrial = {
        id: trial.id,
        config,
        tier: tierForBudget(tiers, trial.budget).name,
        budget: trial.budget,
        metrics: result.metrics as MetricValues,
        value: -result.loss,
      }
      return {result: {status: 'ok', loss: result.loss}, value}
    },
    {maxTrials: options.budget},
  )
  if (steps.length === 0) throw new InputError('tuning budget', 'at least one evaluation', String(options.budget))
  const trials = steps.map((s) => s.value)
  const configIds = steps.map((s) => s.trial.configId)
  const best = (incumbent(steps) ?? steps[0]).value
  const high = tiers[tiers.length - 1]
  const onHigh = (config: Config): MetricValues => ({
    ...evaluateSystem(prepared, 'engine', config, {queryIds: high.queryIds}).report.overall,
  })
  return {
    method: options.optimizer?.name ?? options.method,
    metric,
    seed: options.seed,
    trials,
    best: {config: best.config, metrics: best.tier === high.name ? best.metrics : onHigh(best.config), trial: best.id},
    defaults: {config: base, metrics: onHigh(base)},
    ...(optimizer instanceof GridOptimizer
      ? {grid: gridCoverage(optimizer.size, optimizer.pointsPerDim, configIds, optimizer.size > options.budget)}
      : {}),
  }
}
