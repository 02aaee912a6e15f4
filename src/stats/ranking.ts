/**
 * Information-retrieval metrics of one ranked result list (Manning, Raghavan & Schuetze 2008,
 * "Introduction to Information Retrieval", ch. 8). Average them over queries for a run score.
 *
 * Cut-off k: a non-negative integer or Infinity (the whole list); a list shorter than k is scored
 * as it is (missing positions count as non-relevant).
 * A metric that is undefined for a query (no relevant item exists) is null, never 0, so callers
 * decide explicitly whether to skip such queries.
 */

/**
 * How a relevance grade becomes a gain: 'exp2' is 2^rel - 1 (Burges et al. 2005, the common
 * "industry" nDCG, stresses highly relevant items); 'linear' is rel itself (Jaervelin & Kekaelaeinen
 * 2002). The two agree on binary relevance.
 */
export type GainKind = 'exp2' | 'linear'

/** Throws unless k is a cut-off: a non-negative integer or Infinity. */
function checkK(k: number, where: string): void {
  if (!(k === Infinity || (Number.isInteger(k) && k >= 0))) {
    throw new RangeError(`${where}: expected k as an integer >= 0 or Infinity, got ${k}`)
  }
}

/** Gain of one relevance grade. */
export function gain(relevance: number, gainKind: GainKind): number {
  return gainKind === 'exp2' ? Math.pow(2, relevance) - 1 : relevance
}

/** Discount of 0-based rank position i, 1 / log2(i + 2) (dcgAtK divides by its inverse). */
export function discount(position: number): number {
  return 1 / Math.log2(position + 2)
}

/**
 * Discounted cumulative gain at k of relevance grades in ranked order:
 *   DCG@k = sum over positions i = 0..k-1 of gain(rel_i) / log2(i + 2),
 * so the first position is undiscounted. E.g. grades 3,2,3,0,1,2 give DCG@6 = 6.861 (linear).
 */
export function dcgAtK(relevances: ArrayLike<number>, k: number, gainKind: GainKind): number {
  checkK(k, 'dcgAtK')
  const end = Math.min(k, relevances.length)
  let total = 0
  for (let i = 0; i < end; i++) total += gain(relevances[i], gainKind) / Math.log2(i + 2)
  return total
}

/**
 * Normalized DCG at k: DCG@k of the ranking divided by the ideal DCG@k, the DCG of all judged
 * grades of the query (`allLabels`, including items the ranking missed) sorted descending.
 * In [0, 1] when rankedLabels are drawn from allLabels. Null when the ideal DCG is 0 (no relevant
 * item: nDCG is undefined, not 0).
 */
export function ndcgAtK(
  rankedLabels: ArrayLike<number>,
  allLabels: ArrayLike<number>,
  k: number,
  gainKind: GainKind,
): number | null {
  checkK(k, 'ndcgAtK')
  const ideal = dcgAtK(Float64Array.from(allLabels).sort().reverse(), k, gainKind)
  if (Number.isNaN(ideal)) return NaN
  if (!(ideal > 0)) return null
  return dcgAtK(rankedLabels, k, gainKind) / ideal
}

/**
 * Reciprocal rank: 1 / (1-based position of the first relevant item) within the first k
 * positions, 0 if none is relevant there. Average over queries for MRR.
 */
export function reciprocalRank(rankedIsRelevant: ArrayLike<boolean | number>, k: number = Infinity): number {
  checkK(k, 'reciprocalRank')
  const end = Math.min(k, rankedIsRelevant.length)
  for (let i = 0; i < end; i++) if (rankedIsRelevant[i]) return 1 / (i + 1)
  return 0
}

/** The distinct relevant items among the first k ranked ids (repeats in the ranking count once). */
function relevantInTopK<T>(rankedIds: ArrayLike<T>, relevant: ReadonlySet<T>, k: number): number {
  const found = new Set<T>()
  const end = Math.min(k, rankedIds.length)
  for (let i = 0; i < end; i++) if (relevant.has(rankedIds[i])) found.add(rankedIds[i])
  return found.size
}

/**
 * Recall at k: the share of the relevant ids found among the first k ranked ids.
 * Null when there are no relevant ids (recall is undefined, not 0).
 */
export function recallAtK<T>(rankedIds: ArrayLike<T>, relevantIds: Iterable<T>, k: number): number | null {
  checkK(k, 'recallAtK')
  const relevant = new Set(relevantIds)
  if (relevant.size === 0) return null
  return relevantInTopK(rankedIds, relevant, k) / relevant.size
}

/**
 * Precision at k: the share of the first k positions holding a distinct relevant id; divides by k
 * even when the ranking is shorter (missing results are not relevant). Null for k = 0 or Infinity.
 */
export function precisionAtK<T>(rankedIds: ArrayLike<T>, relevantIds: Iterable<T>, k: number): number | null {
  checkK(k, 'precisionAtK')
  if (k === 0 || k === Infinity) return null
  return relevantInTopK(rankedIds, new Set(relevantIds), k) / k
}

/**
 * Hit at k (success@k): 1 if any relevant id is among the first k ranked ids, else 0.
 * Null when there are no relevant ids.
 */
export function hitAtK<T>(rankedIds: ArrayLike<T>, relevantIds: Iterable<T>, k: number): number | null {
  checkK(k, 'hitAtK')
  const relevant = new Set(relevantIds)
  if (relevant.size === 0) return null
  const end = Math.min(k, rankedIds.length)
  for (let i = 0; i < end; i++) if (relevant.has(rankedIds[i])) return 1
  return 0
}
