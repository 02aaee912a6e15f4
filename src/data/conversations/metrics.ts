import {hitAtK, ndcgAtK, recallAtK, reciprocalRank} from '../../stats/ranking.js'
import {SCORED_CATEGORIES} from './types.js'
import type {EvalQuery} from './queries.js'

/** Default cut-offs of recall@k and hit@k (the LoCoMo retrieval convention). */
export const DEFAULT_KS = [1, 5, 10, 20] as const

/** The metric tuning maximises by default: overall evidence recall@10 (the target). */
export const DEFAULT_TUNING_METRIC = 'recall@10'
/** NDCG is reported at this cut-off. */
export const NDCG_K = 10

/** Metric name -> value, e.g. {"recall@10": 0.62, "hit@10": 0.8, "ndcg@10": 0.5, "mrr": 0.45}. */
export type MetricValues = Record<string, number>

/** How deep a ranking must be to compute every metric for these cut-offs. */
export function rankingDepth(ks: readonly number[]): number {
  return Math.max(NDCG_K, ...ks)
}

/** Every metric name queryMetrics reports for these cut-offs (the choices of --metric). */
export function retrievalMetricNames(ks: readonly number[] = DEFAULT_KS): string[] {
  return [...ks.flatMap((k) => [`recall@${k}`, `hit@${k}`]), `ndcg@${NDCG_K}`, 'mrr']
}

/**
 * Per-query metrics of a ranking of turn ids against the gold evidence: recall@k and hit@k for
 * each k, NDCG@10 with binary relevance, and the reciprocal rank within the ranking's depth (MRR
 * once averaged; a query whose evidence is not in the ranking contributes 0).
 */
export function queryMetrics(
  ranked: readonly string[],
  evidence: readonly string[],
  ks: readonly number[],
): MetricValues {
  const out: MetricValues = {}
  const relevant = new Set(evidence)
  for (const k of ks) {
    out[`recall@${k}`] = recallAtK(ranked, relevant, k) as number
    out[`hit@${k}`] = hitAtK(ranked, relevant, k) as number
  }
  // A repeated id holds a slot but earns nothing the second time (as recall@k counts it once), and
  // repeated evidence ids count once in the ideal DCG: otherwise NDCG exceeds 1 (1.63 was seen).
  const seen = new Set<string>()
  const labels = ranked.map((id) => {
    const gain = relevant.has(id) && !seen.has(id) ? 1 : 0
    seen.add(id)
    return gain
  })
  out[`ndcg@${NDCG_K}`] = ndcgAtK(
    labels,
    [...relevant].map(() => 1),
    NDCG_K,
    'linear',
  ) as number
  out.mrr = reciprocalRank(labels)
  return out
}

/** Metrics averaged over queries overall and per category (categories in LoCoMo order). */
export interface MetricReport {
  readonly overall: MetricValues & {readonly n: number}
  readonly by_category: Record<string, MetricValues & {readonly n: number}>
}

/** Means of per-query metric rows, overall and by the queries' categories. */
export function aggregate(queries: readonly EvalQuery[], rows: readonly MetricValues[]): MetricReport {
  const byCategory: Record<string, MetricValues & {n: number}> = {}
  for (const category of SCORED_CATEGORIES) {
    const idx = queries.map((q, i) => (q.category === category ? i : -1)).filter((i) => i >= 0)
    if (idx.length > 0) byCategory[category] = meanRows(idx.map((i) => rows[i]))
  }
  return {overall: meanRows(rows), by_category: byCategory}
}

function meanRows(rows: readonly MetricValues[]): MetricValues & {n: number} {
  const out: MetricValues & {n: number} = {n: rows.length}
  if (rows.length === 0) return out
  for (const key of Object.keys(rows[0])) {
    let s = 0
    for (const r of rows) s += r[key]
    out[key] = s / rows.length
  }
  return out
}
