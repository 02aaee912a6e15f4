import type {Config, ParamSpace} from '../space/index.js'
import {hashString} from '../util/rng.js'
import {createOptimizer, type OptimizerName} from '../search/optimizers.js'
import type {Fidelity} from '../search/types.js'
import {incumbent} from '../search/incumbent.js'
import {optimizeInProcess, type LoopStep} from '../search/loop.js'
import type {LtrDataset} from './dataset.js'
import {DEFAULT_LAMBDAMART, scoreDataset, trainLambdaMart, type LambdaMartParams} from './lambdamart.js'
import {NdcgEvaluator, PRIMARY_CUTOFF} from './ndcg.js'
import {DEFAULT_EARLY_STOP} from './defaults.js'
import {compareScorers} from './compare.js'

/**
 * `kt rerank tune`: searches LambdaMART's regularisation with kt's own optimiser on validation
 * NDCG@10. The number of trees is the fidelity (BOHB's budget: a third of the configurations are
 * tried with a ninth of the trees first), and every fit stops early on the validation split, so a
 * trial's loss is the best validation NDCG@10 it reached. The test split, if any, is scored once,
 * for the chosen configuration and for the defaults, never during the search.
 */

/** The searched settings: one declarative table, as every kt space. */
const LAMBDAMART_SPACE: ParamSpace = {
  id: 'lambdamart',
  params: [
    {
      kind: 'float',
      name: 'learning_rate',
      low: 0.01,
      high: 0.3,
      scale: 'log',
      default: DEFAULT_LAMBDAMART.learningRate,
      env: 'KT_RERANK_LEARNING_RATE',
      description: 'Shrinkage of every leaf value.',
    },
    {
      kind: 'int',
      name: 'leaves',
      low: 4,
      high: 64,
      scale: 'log',
      default: DEFAULT_LAMBDAMART.maxLeaves,
      env: 'KT_RERANK_LEAVES',
      description: 'Most leaves per tree.',
    },
    {
      kind: 'int',
      name: 'min_data',
      low: 1,
      high: 100,
      scale: 'log',
      default: DEFAULT_LAMBDAMART.minDataInLeaf,
      env: 'KT_RERANK_MIN_DATA',
      description: 'Fewest documents in a leaf.',
    },
    {
      kind: 'float',
      name: 'l2',
      low: 0.01,
      high: 100,
      scale: 'log',
      default: 1,
      env: 'KT_RERANK_L2',
      description: 'L2 penalty on leaf values.',
    },
    {
      kind: 'float',
      name: 'feature_fraction',
      low: 0.3,
      high: 1,
      scale: 'linear',
      default: DEFAULT_LAMBDAMART.featureFraction,
      env: 'KT_RERANK_FEATURE_FRACTION',
      description: 'Share of the feature columns each tree may split on.',
    },
    {
      kind: 'categorical',
      name: 'truncation',
      choices: [10, 30, 0],
      default: DEFAULT_LAMBDAMART.truncation,
      env: 'KT_RERANK_TRUNCATION',
      description: 'NDCG@k truncation of the gradients (0: every pair).',
    },
  ],
}

/** Trees of the cheapest BOHB rung relative to the full count (Hyperband's eta = 3, three rungs). */
const TREE_RUNGS = 9

export interface TuneOptions {
  readonly train: LtrDataset
  readonly valid: LtrDataset
  readonly test?: LtrDataset
  readonly base: LambdaMartParams
  readonly optimizer: OptimizerName
  readonly trials: number
  readonly seed: number
  readonly onTrial?: (done: number, best: number) => void
}

interface TuneTrial {
  readonly id: number
  readonly trees_budget: number
  readonly config: Config
  readonly valid_ndcg10: number
  readonly trees_used: number
}

export interface TuneResult {
  readonly optimizer: OptimizerName
  readonly trials: TuneTrial[]
  readonly best: {
    readonly config: Config
    readonly params: LambdaMartParams
    readonly valid_ndcg10: number
    readonly trees: number
  }
  readonly defaults: {readonly params: LambdaMartParams; readonly valid_ndcg10: number; readonly trees: number}
  /**
   * NDCG@10 on the test split (judged queries) of the chosen and the default settings, and chosen
   * minus defaults with a paired bootstrap interval over queries, when a test split is given.
   */
  readonly test?: {
    readonly tuned: number
    readonly defaults: number
    readonly queries: number
    readonly delta: {
      readonly kind: 'absolute'
      readonly estimate: number | null
      readonly low: number | null
      readonly high: number | null
      readonly confidence: number
    }
  }
}

/** LambdaMART's parameters for a configuration of LAMBDAMART_SPACE at `trees` trees. */
function paramsOf(base: LambdaMartParams, config: Config, trees: number): LambdaMartParams {
  return {
    ...base,
    trees,
    learningRate: config.learning_rate as number,
    maxLeaves: config.leaves as number,
    minDataInLeaf: config.min_data as number,
    l2: config.l2 as number,
    featureFraction: config.feature_fraction as number,
    truncation: config.truncation as number,
    earlyStoppingRounds: base.earlyStoppingRounds > 0 ? base.earlyStoppingRounds : DEFAULT_EARLY_STOP,
  }
}

/** Best validation NDCG@10 of one fit and the trees it kept. */
function fit(
  train: LtrDataset,
  valid: LtrDataset,
  params: LambdaMartParams,
): {ndcg: number; trees: number; model: ReturnType<typeof trainLambdaMart>['model']} {
  const outcome = trainLambdaMart(train, params, {valid})
  const evaluator = new NdcgEvaluator(valid, [PRIMARY_CUTOFF])
  return {
    ndcg: evaluator.mean(scoreDataset(outcome.model, valid)),
    trees: outcome.model.trees.length,
    model: outcome.model,
  }
}

export function tuneLambdaMart(options: TuneOptions): TuneResult {
  const {train, valid, base} = options
  const maxTrees = base.trees
  const fidelity: Fidelity | undefined =
    options.optimizer === 'bohb' && maxTrees >= TREE_RUNGS
      ? {min: maxTrees / TREE_RUNGS, max: maxTrees, eta: 3}
      : undefined
  const optimizer = createOptimizer(options.optimizer, LAMBDAMART_SPACE, options.seed, fidelity)
  const best = (steps: readonly LoopStep<TuneTrial>[]): TuneTrial | undefined => {
    // only full-size fits compete for the final pick: the incumbent at a lower budget is no pick
    const inc = incumbent(steps)
    return inc && inc.budget === maxTrees ? inc.value : undefined
  }
  const {steps} = optimizeInProcess(
    optimizer,
    (trial) => {
      const trees = Math.max(1, Math.round(trial.budget === 1 && !fidelity ? maxTrees : trial.budget))
      const result = fit(train, valid, paramsOf(base, trial.config, trees))
      const value: TuneTrial = {
        id: trial.id,
        trees_budget: trees,
        config: trial.config,
        valid_ndcg10: result.ndcg,
        trees_used: result.trees,
      }
      return {result: {status: 'ok', loss: -result.ndcg}, value, budget: trees}
    },
    {
      maxTrials: options.trials,
      onStep: (_, steps) => options.onTrial?.(steps.length, best(steps)?.valid_ndcg10 ?? Number.NaN),
    },
  )
  const trials = steps.map((s) => s.value)
  const bestTrial = best(steps)
  // The defaults are kt rerank train's own settings (with early stopping), not the table's.
  const defaultParams: LambdaMartParams = {
    ...base,
    trees: maxTrees,
    earlyStoppingRounds: base.earlyStoppingRounds > 0 ? base.earlyStoppingRounds : DEFAULT_EARLY_STOP,
  }
  const defaults = fit(train, valid, defaultParams)
  const tunedWins = bestTrial !== undefined && bestTrial.valid_ndcg10 > defaults.ndcg
  const chosenParams = tunedWins ? paramsOf(base, bestTrial!.config, maxTrees) : defaultParams
  const chosen = tunedWins ? fit(train, valid, chosenParams) : defaults
  const result: TuneResult = {
    optimizer: options.optimizer,
    trials,
    best: {
      config: tunedWins ? bestTrial!.config : {},
      params: {...chosenParams, trees: chosen.trees, earlyStoppingRounds: 0},
      valid_ndcg10: chosen.ndcg,
      trees: chosen.trees,
    },
    defaults: {params: defaultParams, valid_ndcg10: defaults.ndcg, trees: defaults.trees},
  }
  if (options.test) {
    const evaluator = new NdcgEvaluator(options.test, [PRIMARY_CUTOFF])
    const tuned = evaluator.perQuery(scoreDataset(chosen.model, options.test), PRIMARY_CUTOFF)
    const plain = evaluator.perQuery(scoreDataset(defaults.model, options.test), PRIMARY_CUTOFF)
    const mean = (v: Float64Array): number => v.reduce((a, b) => a + b, 0) / Math.max(1, v.length)
    const c = compareScorers('defaults', tuned, plain, hashString(`${options.seed}/tune/test`))
    return {
      ...result,
      test: {
        tuned: mean(tuned),
        defaults: mean(plain),
        queries: tuned.length,
        delta: {kind: c.kind, estimate: c.delta, low: c.low, high: c.high, confidence: c.confidence},
      },
    }
  }
  return result
}
