import {Rng} from '../util/rng.js'
import {numDocs, numFeatures} from './dataset.js'
import {DEFAULT_LAMBDAMART, predictRow, trainLambdaMart, type LambdaMartModel} from './lambdamart.js'
import {PackedEnsemble} from './packed.js'
import {generateSynthetic} from './synthetic.js'
import type {RegressionTree} from './tree.js'

/**
 * `kt bench rerank`: microseconds per candidate of packed inference against the target
 * (<= 2 us for 100 trees of depth 6), next to the trainer's own tree walk, on two ensembles:
 * - "complete": 100 random complete trees of depth 6 (every path has 6 splits: the worst case for
 *   that size), thresholds and features drawn uniformly, candidates uniform in [0,1)^12;
 * - "trained": LambdaMART trained on synthetic data with depth limit 6 and 64 leaves.
 * Scores of both scorers are compared for exact equality on every candidate.
 */

/** The budget: at most 2 microseconds per candidate. */
export const TARGET_US_PER_CANDIDATE = 2
export const BENCH_TREES = 100
export const BENCH_DEPTH = 6
export const BENCH_FEATURES = 12

export interface BenchCase {
  ensemble: 'complete' | 'trained'
  trees: number
  max_depth: number
  nodes: number
  candidates: number
  packed_us_per_candidate: number
  trainer_us_per_candidate: number
  speedup: number
  equal_scores: boolean
  meets_target: boolean
}

/** A complete binary tree of the given depth with random splits (LightGBM node layout). */
export function randomCompleteTree(depth: number, width: number, rng: Rng): RegressionTree {
  const splits = 2 ** depth - 1
  const splitFeature = new Int32Array(splits)
  const threshold = new Float64Array(splits)
  const left = new Int32Array(splits)
  const right = new Int32Array(splits)
  for (let i = 0; i < splits; i++) {
    splitFeature[i] = rng.int(width)
    threshold[i] = rng.next()
    const a = 2 * i + 1
    const b = 2 * i + 2
    left[i] = a < splits ? a : ~(a - splits)
    right[i] = b < splits ? b : ~(b - splits)
  }
  const leafValue = Float64Array.from({length: splits + 1}, () => rng.normal(0, 0.1))
  return {splitFeature, threshold, left, right, gain: new Float64Array(splits), leafValue}
}

/** Median over repetitions of the microseconds per candidate of `scoreAll`. */
function timePerCandidate(scoreAll: () => void, candidates: number, repetitions: number): number {
  scoreAll() // warm up (JIT)
  scoreAll()
  const samples: number[] = []
  for (let r = 0; r < repetitions; r++) {
    const start = process.hrtime.bigint()
    scoreAll()
    samples.push(Number(process.hrtime.bigint() - start) / 1000 / candidates)
  }
  samples.sort((a, b) => a - b)
  return samples[Math.floor(samples.length / 2)]
}

function benchModel(ensemble: BenchCase['ensemble'], model: LambdaMartModel, rows: Float64Array, candidates: number, repetitions: number): BenchCase {
  const packed = new PackedEnsemble(model)
  const width = model.featureNames.length
  const packedScores = new Float64Array(candidates)
  const trainerScores = new Float64Array(candidates)
  const packedUs = timePerCandidate(() => packed.scoreAll(rows, candidates, packedScores), candidates, repetitions)
  const trainerUs = timePerCandidate(() => {
    for (let d = 0; d < candidates; d++) trainerScores[d] = predictRow(model, rows, d * width)
  }, candidates, repetitions)
  let equal = true
  for (let d = 0; d < candidates; d++) if (!Object.is(packedScores[d], trainerScores[d])) equal = false
  return {
    ensemble,
    trees: model.trees.length,
    max_depth: Math.max(...packed.depth),
    nodes: packed.feature.length,
    candidates,
    packed_us_per_candidate: packedUs,
    trainer_us_per_candidate: trainerUs,
    speedup: trainerUs / packedUs,
    equal_scores: equal,
    meets_target: packedUs <= TARGET_US_PER_CANDIDATE,
  }
}

export interface BenchOptions {
  candidates: number
  repetitions: number
  seed: number
}

export function runRerankBench(options: BenchOptions): BenchCase[] {
  const rng = new Rng(options.seed)
  const names = Array.from({length: BENCH_FEATURES}, (_, i) => String(i + 1))
  const complete: LambdaMartModel = {featureNames: names, trees: Array.from({length: BENCH_TREES}, () => randomCompleteTree(BENCH_DEPTH, BENCH_FEATURES, rng))}
  const uniformRows = Float64Array.from({length: options.candidates * BENCH_FEATURES}, () => rng.next())

  const data = generateSynthetic({queries: Math.max(50, Math.ceil(options.candidates / 20)), minDocs: 10, maxDocs: 30, seed: options.seed})
  const trained = trainLambdaMart(data, {
    ...DEFAULT_LAMBDAMART, trees: BENCH_TREES, maxDepth: BENCH_DEPTH, maxLeaves: 2 ** BENCH_DEPTH, minDataInLeaf: 5,
  }).model
  const candidates = Math.min(options.candidates, numDocs(data))
  const dataRows = data.features.subarray(0, candidates * numFeatures(data))
  return [
    benchModel('complete', complete, uniformRows, options.candidates, options.repetitions),
    benchModel('trained', trained, dataRows, candidates, options.repetitions),
  ]
}
