import {Rng} from '../util/rng.js'
import {numDocs, numFeatures, type LtrDataset} from './dataset.js'
import {NdcgEvaluator, PRIMARY_CUTOFF} from './ndcg.js'

/**
 * The baselines LambdaMART must beat, both tuned on the training split only:
 * - tuned linear fusion: score = sum_f w_f * z_f with z the training z-score of feature f, weights
 *   found by coordinate ascent on training NDCG@10 (Metzler & Croft 2007, "Linear feature-based
 *   models for information retrieval"; the step schedule follows RankLib's CoordinateAscent);
 * - the best single feature: the one feature, used ascending or descending, with the highest
 *   training NDCG@10.
 */

/** Coordinate-ascent schedule, RankLib CoordinateAscent defaults (nRestart 5, nMaxIteration 25, stepBase 0.05, stepScale 2, tolerance 0.001). */
const ASCENT = {
  restarts: 5,
  stepsPerDirection: 25,
  /** First step when a weight is 0 (RankLib: 0.001). */
  initialStep: 0.001,
  /** First step relative to a non-zero weight when 0.001 would exceed half of it (RankLib: stepBase). */
  relativeStep: 0.05,
  stepScale: 2,
  /** A pass over all features must raise NDCG@10 by this much to run another. */
  tolerance: 0.001,
  /** Safety bound on passes per restart (RankLib has none; tolerance ends it long before). */
  maxPasses: 100,
} as const

export interface LinearModel {
  readonly featureNames: readonly string[]
  /** Training mean and standard deviation per feature (sd 0: the feature is constant, unused). */
  readonly mean: readonly number[]
  readonly sd: readonly number[]
  /** Weights on z-scored features, L1 norm 1. */
  readonly weights: readonly number[]
  /** Training NDCG@10 reached. */
  readonly trainNdcg10: number
}

export interface SingleFeatureModel {
  readonly feature: string
  readonly index: number
  /** +1: higher value ranks first; -1: lower value first. */
  readonly sign: 1 | -1
  readonly trainNdcg10: number
}

/** Scores with a linear model (features z-scored with the training statistics). */
export function scoreLinear(model: LinearModel, data: LtrDataset): Float64Array {
  const width = numFeatures(data)
  const scores = new Float64Array(numDocs(data))
  for (let d = 0; d < scores.length; d++) {
    let s = 0
    for (let f = 0; f < model.weights.length; f++) {
      if (model.sd[f] > 0) s += (model.weights[f] * (data.features[d * width + f] - model.mean[f])) / model.sd[f]
    }
    scores[d] = s
  }
  return scores
}

/** Scores with one feature (times its sign). */
export function scoreSingleFeature(model: SingleFeatureModel, data: LtrDataset): Float64Array {
  const width = numFeatures(data)
  const scores = new Float64Array(numDocs(data))
  for (let d = 0; d < scores.length; d++) scores[d] = model.sign * data.features[d * width + model.index]
  return scores
}

/** The feature and direction with the best training NDCG@10 (first in column order on ties). */
export function bestSingleFeature(train: LtrDataset): SingleFeatureModel {
  const evaluator = new NdcgEvaluator(train, [PRIMARY_CUTOFF])
  let best: SingleFeatureModel | undefined
  for (let f = 0; f < numFeatures(train); f++) {
    for (const sign of [1, -1] as const) {
      const candidate = {feature: train.featureNames[f], index: f, sign, trainNdcg10: 0}
      candidate.trainNdcg10 = evaluator.mean(scoreSingleFeature(candidate, train))
      if (best === undefined || candidate.trainNdcg10 > best.trainNdcg10) best = candidate
    }
  }
  return best!
}

/** Tunes linear fusion weights by coordinate ascent on training NDCG@10 (seeded). */
export function tuneLinear(train: LtrDataset, seed: number, restarts: number = ASCENT.restarts): LinearModel {
  const width = numFeatures(train)
  const n = numDocs(train)
  const {mean, sd} = columnStats(train)
  // Column-major z-scores: a weight change touches one contiguous column.
  const z = new Float64Array(n * width)
  for (let f = 0; f < width; f++) {
    for (let d = 0; d < n; d++) z[f * n + d] = sd[f] > 0 ? (train.features[d * width + f] - mean[f]) / sd[f] : 0
  }
  const evaluator = new NdcgEvaluator(train, [PRIMARY_CUTOFF])
  const rng = new Rng(seed)
  let best: {weights: Float64Array; ndcg: number} | undefined
  for (let r = 0; r < restarts; r++) {
    const weights = initialWeights(width, r, rng)
    const ndcg = ascend(z, n, weights, evaluator, rng)
    if (best === undefined || ndcg > best.ndcg) best = {weights, ndcg}
  }
  return {featureNames: train.featureNames, mean, sd, weights: Array.from(best!.weights), trainNdcg10: best!.ndcg}
}

/** Restart 0 starts from equal weights (as RankLib does); later restarts from random L1-unit weights. */
function initialWeights(width: number, restart: number, rng: Rng): Float64Array {
  const weights = new Float64Array(width)
  for (let f = 0; f < width; f++) weights[f] = restart === 0 ? 1 / width : rng.uniform(-1, 1)
  normalizeL1(weights)
  return weights
}

/** One coordinate-ascent run from `weights` (updated in place); returns the NDCG@10 reached. */
function ascend(z: Float64Array, n: number, weights: Float64Array, evaluator: NdcgEvaluator, rng: Rng): number {
  const width = weights.length
  const scores = new Float64Array(n)
  const recompute = (): void => {
    scores.fill(0)
    for (let f = 0; f < width; f++) addColumn(z, n, f, weights[f], scores)
  }
  recompute()
  let current = evaluator.mean(scores)
  const features = Array.from({length: width}, (_, f) => f)
  for (let pass = 0; pass < ASCENT.maxPasses; pass++) {
    const passStart = current
    for (const f of rng.shuffle(features)) {
      const original = weights[f]
      let bestTotal = 0
      let bestScore = current
      let applied = 0
      const tryTotal = (total: number): void => {
        addColumn(z, n, f, total - applied, scores)
        applied = total
        const score = evaluator.mean(scores)
        if (score > bestScore) {
          bestScore = score
          bestTotal = total
        }
      }
      for (const direction of [1, -1]) {
        let step = ASCENT.initialStep * direction
        if (original !== 0 && Math.abs(step) > 0.5 * Math.abs(original))
          step = ASCENT.relativeStep * Math.abs(original) * direction
        let total = step
        for (let j = 0; j < ASCENT.stepsPerDirection; j++) {
          tryTotal(total)
          step *= ASCENT.stepScale
          total += step
        }
      }
      tryTotal(-original) // the weight set to zero: drops the feature
      weights[f] = original + bestTotal
      current = bestScore
      normalizeL1(weights)
      recompute() // no drift from many incremental updates
    }
    if (current - passStart < ASCENT.tolerance) break
  }
  return evaluator.mean(scores)
}

function addColumn(z: Float64Array, n: number, f: number, weight: number, scores: Float64Array): void {
  if (weight === 0) return
  const base = f * n
  for (let d = 0; d < n; d++) scores[d] += weight * z[base + d]
}

function normalizeL1(weights: Float64Array): void {
  let sum = 0
  for (const w of weights) sum += Math.abs(w)
  if (sum > 0) for (let f = 0; f < weights.length; f++) weights[f] /= sum
}

/** Mean and (population) standard deviation of each feature column. */
function columnStats(data: LtrDataset): {mean: number[]; sd: number[]} {
  const width = numFeatures(data)
  const n = numDocs(data)
  const mean = new Array<number>(width).fill(0)
  const sd = new Array<number>(width).fill(0)
  for (let d = 0; d < n; d++) for (let f = 0; f < width; f++) mean[f] += data.features[d * width + f] / n
  for (let d = 0; d < n; d++) {
    for (let f = 0; f < width; f++) sd[f] += (data.features[d * width + f] - mean[f]) ** 2 / n
  }
  return {mean, sd: sd.map(Math.sqrt)}
}
