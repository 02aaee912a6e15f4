import {pearson, spearman} from '../../src/stats/correlation.js'
import {
  ResampleCounts,
  correlationBootstrap,
  correlationDeltaBootstrap,
  type CorrelationKind,
} from '../../src/stats/correlation-bootstrap.js'
import {scoreColumns, detailLevels, tokenBudget} from '../../src/engine/importance/score.js'
import type {Weights} from '../../src/engine/importance/space.js'
import type {Plan} from '../plan.js'
import type {PhaseContext, StudyDataset} from './context.js'
import type {Interval, DeltaInterval} from '../../src/report/types.js'

export type {CorrelationKind}

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

const resampleSets = new WeakMap<StudyDataset, ResampleCounts>()

/**
 * The bootstrap resamples of a dataset: one seeded set per dataset and run, shared by every
 * interval on it, so competing configurations are compared on the same resamples.
 */
function resamplesFor(ctx: PhaseContext, ds: StudyDataset): ResampleCounts {
  let set = resampleSets.get(ds)
  if (!set) {
    set = new ResampleCounts(ds.signals.n, ctx.plan.plan.bootstrap.resamples, ctx.rng(`bootstrap/${ds.id}`))
    resampleSets.set(ds, set)
  }
  return set
}

/** Correlation of scores with the truth, with a percentile bootstrap interval. */
export function correlationInterval(
  ctx: PhaseContext,
  kind: CorrelationKind,
  scores: Float64Array,
  ds: StudyDataset,
): Interval {
  const r = correlationBootstrap(kind, scores, ds.truth, resamplesFor(ctx, ds), ctx.plan.plan.bootstrap.confidence)
  return {
    estimate: r.estimate,
    low: r.low,
    high: r.high,
    confidence: r.confidence,
    resamples: r.resamples,
    undefined_resamples: r.undefinedResamples,
    ...(r.estimate === null ? {note: 'undefined: the scores are constant, so the correlation does not exist'} : {}),
  }
}

/** Absolute change (B - A) of a correlation with the truth, by paired bootstrap. */
export function correlationDelta(
  ctx: PhaseContext,
  kind: CorrelationKind,
  a: Float64Array,
  b: Float64Array,
  ds: StudyDataset,
): DeltaInterval {
  const r = correlationDeltaBootstrap(kind, a, b, ds.truth, resamplesFor(ctx, ds), ctx.plan.plan.bootstrap.confidence)
  return {
    kind: 'absolute',
    unit: `${kind} correlation`,
    estimate: r.estimate,
    low: r.low,
    high: r.high,
    confidence: r.confidence,
    resamples: r.resamples,
    undefined_resamples: r.undefinedResamples,
  }
}
