import {meanStatistic, pairedBootstrapDelta} from '../stats/bootstrap.js'
import {Rng} from '../util/rng.js'
import {PRIMARY_CUTOFF} from './ndcg.js'

/**
 * LambdaMART minus a baseline in NDCG@PRIMARY_CUTOFF on one split, as an absolute difference of
 * means over the split's judged queries, with a paired percentile bootstrap interval (both scorers
 * on the same resampled queries, so shared query difficulty cancels).
 */
export interface ScorerComparison {
  baseline: 'linear' | 'best_feature' | 'engine' | 'xgboost'
  metric: string
  kind: 'absolute'
  delta: number
  low: number | null
  high: number | null
  confidence: number
  queries: number
}

/** Bootstrap resamples (over queries) of the comparisons' intervals. */
const COMPARISON_RESAMPLES = 2000
/**
 * Fewest judged queries for an interval: below it a percentile bootstrap has too few distinct
 * resamples to mean anything (one query gives a zero-width interval), so low/high are null.
 */
export const COMPARISON_MIN_QUERIES = 5

/** Paired comparison of LambdaMART's per-query NDCG with a baseline's on the same queries. */
export function compareScorers<B extends string = ScorerComparison['baseline']>(
  baseline: B,
  model: Float64Array,
  other: Float64Array,
  seed: number,
  resamples = COMPARISON_RESAMPLES,
): Omit<ScorerComparison, 'baseline'> & {baseline: B} {
  const r = pairedBootstrapDelta(model.length, meanStatistic(other), meanStatistic(model), {
    rng: new Rng(seed),
    resamples,
  })
  const interval = model.length >= COMPARISON_MIN_QUERIES
  return {
    baseline,
    metric: `ndcg@${PRIMARY_CUTOFF}`,
    kind: 'absolute',
    delta: r.estimate ?? Number.NaN,
    low: interval ? r.low : null,
    high: interval ? r.high : null,
    confidence: r.confidence,
    queries: model.length,
  }
}

/** Mean of per-query values in query order (the plain left-to-right sum every reranker figure uses). */
export function judgedMean(values: Float64Array): number {
  let sum = 0
  for (const v of values) sum += v
  return sum / values.length
}
