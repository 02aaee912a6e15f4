import {applyBinning, fitBinning, MAX_BINS} from './bins.js'
import {numDocs, numFeatures, numQueries, type LtrDataset} from './dataset.js'
import {queryLambdas, truncationLevel, type LambdaParams} from './lambda.js'
import {idealDcg, NdcgEvaluator, PRIMARY_CUTOFF, widestQuery} from './ndcg.js'
import {growTree, predictTree, type RegressionTree, type TreeParams} from './tree.js'
import {Rng} from '../util/rng.js'
import {InputError} from '../util/errors.js'

/**
 * LambdaMART (Burges 2010, section 7): gradient-boosted regression trees where each tree is fitted
 * to the lambda gradients of NDCG@k (lambda.ts) with Newton leaf values (tree.ts). Scores start at
 * 0; tree t is fitted to the lambdas at the scores of trees 1..t-1.
 */

export interface LambdaMartParams extends TreeParams, LambdaParams {
  /** Boosting rounds (trees) at most. */
  trees: number
  /** Stop when validation NDCG@10 has not improved for this many trees (0 = never); keep the best prefix. */
  earlyStoppingRounds: number
  /** Bins per feature for histogram splits (at most MAX_BINS). */
  maxBins: number
  /**
   * Share of the feature columns each tree may split on, drawn afresh per tree (LightGBM
   * `feature_fraction`, XGBoost `colsample_bytree`); 1 = every column, no random draws.
   */
  featureFraction: number
  /** Seed of the per-tree feature draws (LightGBM `feature_fraction_seed`). */
  featureSeed: number
  /** Boost from this feature column's fitted linear score (ModelBase); '' = from 0. */
  boostFrom: string
}

/**
 * Defaults follow LightGBM's lambdarank defaults (num_leaves 31, min_data_in_leaf 20,
 * min_sum_hessian_in_leaf 1e-3, lambda_l2 0, learning_rate 0.1, sigmoid 1, max_bin 255, 100 rounds),
 * except the truncation level: 10 (LightGBM: 30) so the gradients target NDCG@10, the number kt
 * selects and reports on.
 */
export const DEFAULT_LAMBDAMART: LambdaMartParams = {
  trees: 100,
  learningRate: 0.1,
  maxLeaves: 31,
  maxDepth: 0,
  minDataInLeaf: 20,
  minSumHessianInLeaf: 1e-3,
  l2: 0,
  truncation: PRIMARY_CUTOFF,
  sigma: 1,
  earlyStoppingRounds: 0,
  maxBins: MAX_BINS,
  featureFraction: 1,
  featureSeed: 42,
  boostFrom: '',
}

/**
 * The columns one tree may use: round(fraction x width) of them (at least one), a uniform draw
 * without replacement (partial Fisher-Yates); undefined when the fraction keeps every column.
 */
export function featureMask(width: number, fraction: number, rng: Rng): Uint8Array | undefined {
  const keep = Math.max(1, Math.round(fraction * width))
  if (keep >= width) return undefined
  const columns = Int32Array.from({length: width}, (_, i) => i)
  const mask = new Uint8Array(width)
  for (let i = 0; i < keep; i++) {
    const j = i + rng.int(width - i)
    const t = columns[i]
    columns[i] = columns[j]
    columns[j] = t
    mask[columns[i]] = 1
  }
  return mask
}

export interface LambdaMartModel {
  readonly featureNames: readonly string[]
  readonly trees: readonly RegressionTree[]
  /**
   * Boosting starts from weight x this column (LightGBM's init_score, as a fitted linear term), so
   * the trees refine an existing ranking, e.g. the engine's own score, instead of rebuilding it.
   */
  readonly base?: ModelBase
}

interface ModelBase {
  /** Column index in featureNames. */
  readonly feature: number
  readonly weight: number
}

/**
 * The base weight is capped so that the base spreads a query's scores over at most this many
 * logits (per within-query standard deviation of the column): beyond it the pair probabilities
 * saturate (sigmoid(10) = 0.99995) and the lambdas the trees learn from vanish.
 */
export const BASE_LOGIT_SPAN = 10
/** Newton steps of the base weight's one-dimensional fit (the log-likelihood is concave). */
const BASE_NEWTON_STEPS = 50

/**
 * The weight c of a base column x that maximises the RankNet log-likelihood of the training pairs,
 * sum over pairs (label_i > label_j in one query) of log sigmoid(sigma c (x_i - x_j)), by Newton's
 * method from 0, capped at BASE_LOGIT_SPAN / (sigma * within-query sd of x).
 */
export function fitBaseWeight(data: LtrDataset, column: number, sigma: number): number {
  const width = numFeatures(data)
  const diffs: number[] = []
  let sq = 0
  let count = 0
  for (let q = 0; q < numQueries(data); q++) {
    const begin = data.queryOffsets[q]
    const end = data.queryOffsets[q + 1]
    let mean = 0
    for (let d = begin; d < end; d++) mean += data.features[d * width + column]
    mean /= Math.max(1, end - begin)
    for (let d = begin; d < end; d++) {
      sq += (data.features[d * width + column] - mean) ** 2
      count++
      for (let e = begin; e < end; e++) {
        if (data.labels[d] > data.labels[e])
          diffs.push(data.features[d * width + column] - data.features[e * width + column])
      }
    }
  }
  const sd = Math.sqrt(sq / Math.max(1, count))
  if (diffs.length === 0 || !(sd > 0)) return 0
  const cap = BASE_LOGIT_SPAN / (sigma * sd)
  let c = 0
  for (let step = 0; step < BASE_NEWTON_STEPS; step++) {
    let grad = 0
    let curvature = 0
    for (const x of diffs) {
      const p = 1 / (1 + Math.exp(sigma * c * x))
      grad += sigma * x * p
      curvature += sigma * sigma * x * x * p * (1 - p)
    }
    if (!(curvature > 0)) break
    const next = Math.max(-cap, Math.min(cap, c + grad / curvature))
    if (Math.abs(next - c) <= 1e-9 * Math.max(1, Math.abs(c))) {
      c = next
      break
    }
    c = next
  }
  return c
}

/** One point of the learning curve: NDCG@10 of each evaluation set after `trees` trees. */
export interface CurvePoint {
  trees: number
  ndcg10: Record<string, number>
}

export interface FeatureImportance {
  feature: string
  /** Sum of split gains over all trees. */
  gain: number
  /** Share of the total gain. */
  share: number
  splits: number
}

export interface TrainOutcome {
  model: LambdaMartModel
  /** NDCG@10 per evaluation set after every tree (including trees dropped by early stopping). */
  curve: CurvePoint[]
  importance: FeatureImportance[]
  /** Trees grown before stopping (>= model.trees.length when early stopping trimmed the tail). */
  treesGrown: number
  /** Why not even the first tree was grown (set only when the model has no trees). */
  noTreeReason?: string
}

/** Sum of all trees' outputs for the row at features[offset] (the trainer's own prediction). */
export function predictRow(model: LambdaMartModel, features: ArrayLike<number>, offset: number): number {
  let score = model.base ? model.base.weight * features[offset + model.base.feature] : 0
  for (const tree of model.trees) score += predictTree(tree, features, offset)
  return score
}

/** Scores every document of a data set with the trainer's own prediction. */
export function scoreDataset(model: LambdaMartModel, data: LtrDataset): Float64Array {
  const width = numFeatures(data)
  const scores = new Float64Array(numDocs(data))
  for (let d = 0; d < scores.length; d++) scores[d] = predictRow(model, data.features, d * width)
  return scores
}

/**
 * Trains LambdaMART on `train`. `evalSets` (same feature columns) are scored after every tree for
 * the learning curve; the one named "valid", if any, drives early stopping.
 */
export function trainLambdaMart(
  train: LtrDataset,
  params: LambdaMartParams = DEFAULT_LAMBDAMART,
  evalSets: Record<string, LtrDataset> = {},
  onTree?: (done: number) => void,
): TrainOutcome {
  const width = numFeatures(train)
  const binned = applyBinning(train, fitBinning(train, Math.min(params.maxBins, MAX_BINS)))
  const n = numDocs(train)
  const scores = new Float64Array(n)
  const grad = new Float64Array(n)
  const hess = new Float64Array(n)
  const order = new Int32Array(Math.max(1, widestQuery(train)))
  const ideal = new Float64Array(numQueries(train))
  for (let q = 0; q < ideal.length; q++) {
    const [begin, end] = [train.queryOffsets[q], train.queryOffsets[q + 1]]
    ideal[q] = idealDcg(train.labels, begin, end, truncationLevel(params.truncation, end - begin))
  }

  let base: ModelBase | undefined
  if (params.boostFrom) {
    const column = train.featureNames.indexOf(params.boostFrom)
    if (column < 0 || column >= width)
      throw new InputError(`${train.source}`, `a feature ${params.boostFrom} to boost from`, 'none')
    base = {feature: column, weight: fitBaseWeight(train, column, params.sigma)}
  }
  const baseScores = (data: LtrDataset): Float64Array => {
    const out = new Float64Array(numDocs(data))
    if (!base) return out
    const w = numFeatures(data)
    for (let d = 0; d < out.length; d++) out[d] = base.weight * data.features[d * w + base.feature]
    return out
  }
  scores.set(baseScores(train))
  const sets = Object.entries({train, ...evalSets}).map(([name, data]) => ({
    name,
    data,
    evaluator: new NdcgEvaluator(data, [PRIMARY_CUTOFF]),
    scores: name === 'train' ? scores : baseScores(data),
  }))
  const valid = sets.find((s) => s.name === 'valid')

  const trees: RegressionTree[] = []
  const curve: CurvePoint[] = []
  // With a base, 0 trees is a model too (the base ranking alone): early stopping may keep it.
  let bestValid = base && valid ? valid.evaluator.mean(valid.scores) : Number.NEGATIVE_INFINITY
  let bestTrees = 0
  if (base)
    curve.push({trees: 0, ndcg10: Object.fromEntries(sets.map((set) => [set.name, set.evaluator.mean(set.scores)]))})
  const featureRng = new Rng(params.featureSeed)
  for (let t = 0; t < params.trees; t++) {
    for (let q = 0; q < ideal.length; q++) {
      queryLambdas(
        scores,
        train.labels,
        train.queryOffsets[q],
        train.queryOffsets[q + 1],
        ideal[q],
        params,
        order,
        grad,
        hess,
      )
    }
    const allowed = params.featureFraction < 1 ? featureMask(width, params.featureFraction, featureRng) : undefined
    const {tree, leafOfDoc} = growTree(binned, grad, hess, params, allowed)
    // No admissible split: every further tree would be the same (unless the columns are redrawn).
    if (tree.splitFeature.length === 0 && !allowed) break
    if (tree.splitFeature.length === 0) continue
    trees.push(tree)
    for (let d = 0; d < n; d++) scores[d] += tree.leafValue[leafOfDoc[d]]
    for (const set of sets) {
      if (set.name === 'train') continue
      const w = numFeatures(set.data)
      for (let d = 0; d < set.scores.length; d++) set.scores[d] += predictTree(tree, set.data.features, d * w)
    }
    const point: CurvePoint = {trees: trees.length, ndcg10: {}}
    for (const set of sets) point.ndcg10[set.name] = set.evaluator.mean(set.scores)
    curve.push(point)
    onTree?.(trees.length)
    if (valid) {
      const v = point.ndcg10.valid
      if (v > bestValid) {
        bestValid = v
        bestTrees = trees.length
      } else if (params.earlyStoppingRounds > 0 && trees.length - bestTrees >= params.earlyStoppingRounds) break
    }
  }
  const treesGrown = trees.length
  if (valid && params.earlyStoppingRounds > 0) trees.length = bestTrees
  const model: LambdaMartModel = {featureNames: train.featureNames.slice(0, width), trees, ...(base ? {base} : {})}
  return {
    model,
    curve,
    importance: featureImportance(model),
    treesGrown,
    ...(trees.length === 0 ? {noTreeReason: noTreeReason(train, params, grad)} : {}),
  }
}

/**
 * Why the first tree found no admissible split (growTree's conditions, most basic first): too few
 * documents to put min-data in each of two leaves, no gradient at all (no query has documents of
 * different labels), or no split with gain above MIN_SPLIT_GAIN that leaves min-data documents and
 * the minimum Hessian on each side.
 */
function noTreeReason(train: LtrDataset, params: LambdaMartParams, grad: Float64Array): string {
  const n = numDocs(train)
  if (n < 2 * params.minDataInLeaf) {
    return `${n} training documents cannot fill two leaves of min-data ${params.minDataInLeaf} (lower --min-data, or add data)`
  }
  if (grad.every((g) => g === 0)) {
    return 'every gradient is 0 (no training query has documents of different labels)'
  }
  return `no split had positive gain with at least min-data ${params.minDataInLeaf} documents and Hessian ${params.minSumHessianInLeaf} in each leaf (lower --min-data, or add data)`
}

/** Split gain summed per feature over the model's trees, largest first. */
function featureImportance(model: LambdaMartModel): FeatureImportance[] {
  const gain = new Float64Array(model.featureNames.length)
  const splits = new Int32Array(model.featureNames.length)
  for (const tree of model.trees) {
    for (let s = 0; s < tree.splitFeature.length; s++) {
      gain[tree.splitFeature[s]] += tree.gain[s]
      splits[tree.splitFeature[s]]++
    }
  }
  const total = gain.reduce((a, b) => a + b, 0)
  return model.featureNames
    .map((feature, f) => ({feature, gain: gain[f], share: total > 0 ? gain[f] / total : 0, splits: splits[f]}))
    .sort((a, b) => b.gain - a.gain || a.feature.localeCompare(b.feature))
}
