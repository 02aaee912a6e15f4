import {pearson, spearman} from '../../src/stats/correlation.js'
import {ResampledCorrelation} from '../../src/stats/resampled-correlation.js'
import {bootstrapCI, pairedBootstrapDelta} from '../../src/stats/bootstrap.js'
import type {Rng} from '../../src/util/rng.js'
import {scoreColumns, detailLevels, tokenBudget} from '../../src/engine/importance/score.js'
import type {Weights} from '../../src/engine/importance/space.js'
import type {Plan} from '../plan.js'
import type {StudyDataset} from './context.js'
import type {Interval, DeltaInterval} from '../report-types.js'

export type CorrelationKind = 'pearson' | 'spearman'

export interface WeightsEvaluation {
  readonly scores: Float64Array
  readonly levels: Uint8Array
  readonly tokenBudget: number
  readonly pearson: number | null
  readonly spearman: number | null
}

export function evaluateWeights(ds: StudyDataset, w: Weights, plan: Plan): WeightsEvaluation {
  const scores = scoreColumns(ds.signals, w)
  const levels = detailLevels(scores, plan.detail_levels)
  return {
    scores,
    levels,
    tokenBudget: tokenBudget(levels, ds.signals.tokens, plan.token_cost),
    pearson: pearson(scores, ds.truth),
    spearman: spearman(scores, ds.truth),
  }
}

/** A correlation of (x, y) over resampled rows, in linear time per resample. */
function resampled(kind: CorrelationKind, x: Float64Array, y: Float64Array): (idx: Int32Array) => number | null {
  const r = new ResampledCorrelation(x, y)
  return kind === 'pearson' ? (idx) => r.pearson(idx) : (idx) => r.spearman(idx)
}

/** Correlation of scores with the truth, with a percentile bootstrap interval. */
export function correlationInterval(kind: CorrelationKind, scores: Float64Array, truth: Float64Array, plan: Plan, rng: Rng): Interval {
  const r = bootstrapCI(truth.length, resampled(kind, scores, truth), {rng, resamples: plan.bootstrap.resamples, confidence: plan.bootstrap.confidence})
  return {estimate: r.estimate, low: r.low, high: r.high, confidence: r.confidence, resamples: r.resamples, undefined_resamples: r.undefinedResamples,
    ...(r.estimate === null ? {note: 'undefined: the scores are constant, so the correlation does not exist'} : {})}
}

/** Absolute change (B - A) of a correlation with the truth, by paired bootstrap. */
export function correlationDelta(kind: CorrelationKind, a: Float64Array, b: Float64Array, truth: Float64Array, plan: Plan, rng: Rng): DeltaInterval {
  const r = pairedBootstrapDelta(truth.length, resampled(kind, a, truth), resampled(kind, b, truth), {rng, resamples: plan.bootstrap.resamples, confidence: plan.bootstrap.confidence})
  return {kind: 'absolute', unit: `${kind} correlation`, estimate: r.estimate, low: r.low, high: r.high, confidence: r.confidence, resamples: r.resamples, undefined_resamples: r.undefinedResamples}
}
