import {labelGain, positionDiscount, topK} from './ndcg.js'

/**
 * LambdaRank gradients for NDCG@k (Burges 2010, "From RankNet to LambdaRank to LambdaMART: An
 * Overview", sections 4-7).
 *
 * For a pair (i, j) in one query with label_i > label_j and current scores s_i, s_j:
 *   rho_ij    = 1 / (1 + exp(sigma (s_i - s_j)))
 *   lambda_ij = sigma * rho_ij * |dNDCG_ij|                     (eq. for lambda with |Delta Z|)
 *   dC/ds_i  -= lambda_ij,   dC/ds_j += lambda_ij               (the more relevant document is pushed up)
 *   w_i, w_j += sigma^2 * rho_ij * (1 - rho_ij) * |dNDCG_ij|    (second derivative, for the Newton leaf)
 * where |dNDCG_ij| is the change in NDCG@k from swapping the two documents in the ranking by current
 * score: |gain_i - gain_j| * |D(pos_i) - D(pos_j)| / idealDCG@k, with gain 2^rel - 1 and the
 * discount D(p) = 1/log2(p + 2) for positions p < k and 0 beyond the truncation level k. Pairs with
 * both documents below the truncation have |dNDCG| = 0 and are skipped (what LightGBM's
 * `lambdarank_truncation_level` does).
 *
 * Signs: `grad` holds dC/ds (the cost's derivative), so a Newton leaf value is -sum(grad)/sum(hess).
 */

/** The k of NDCG@k the gradients use for a query of n documents (truncation 0: all n). */
export function truncationLevel(truncation: number, n: number): number {
  return truncation > 0 ? truncation : n
}

export interface LambdaParams {
  /**
   * Truncation level k of NDCG@k in |dNDCG| (LightGBM `lambdarank_truncation_level`); 0 = none:
   * every pair of differently labelled documents counts (XGBoost 1.7's rank:ndcg).
   */
  truncation: number
  /** Sigmoid steepness sigma (Burges 2010; LightGBM `sigmoid`, default 1). */
  sigma: number
}

/**
 * Writes the lambda gradients and Hessians of documents begin..end-1 of one query into grad/hess
 * (overwriting those entries). `idealDcg` is the query's ideal DCG at the truncation level; 0
 * means no relevant document and gives zero gradients. `order` is scratch of length >= end - begin.
 */
export function queryLambdas(
  scores: Float64Array,
  labels: Float64Array,
  begin: number,
  end: number,
  idealDcg: number,
  params: LambdaParams,
  order: Int32Array,
  grad: Float64Array,
  hess: Float64Array,
): void {
  grad.fill(0, begin, end)
  hess.fill(0, begin, end)
  if (!(idealDcg > 0)) return
  const n = end - begin
  // Training ranks ties in file order (no label peeking), like LightGBM's stable sort.
  const m = topK(scores, labels, begin, end, truncationLevel(params.truncation, n), order, false)
  const {sigma} = params
  for (let p = 0; p < m; p++) {
    const a = order[p]
    const discountA = positionDiscount(p)
    for (let r = p + 1; r < n; r++) {
      const b = order[r]
      if (labels[a] === labels[b]) continue
      const discountB = r < m ? positionDiscount(r) : 0
      const aHigher = labels[a] > labels[b]
      const hi = aHigher ? a : b
      const lo = aHigher ? b : a
      const deltaNdcg =
        (Math.abs(labelGain(labels[a]) - labelGain(labels[b])) * Math.abs(discountA - discountB)) / idealDcg
      const rho = 1 / (1 + Math.exp(sigma * (scores[hi] - scores[lo])))
      const lambda = sigma * rho * deltaNdcg
      const weight = sigma * sigma * rho * (1 - rho) * deltaNdcg
      grad[hi] -= lambda
      grad[lo] += lambda
      hess[hi] += weight
      hess[lo] += weight
    }
  }
}
