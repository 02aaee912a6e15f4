import {discount, gain} from '../stats/ranking.js'
import {InputError} from '../util/errors.js'
import {MAX_LABEL, numQueries, type LtrDataset} from './dataset.js'

/**
 * NDCG for the reranker, written for repeated evaluation over flat score arrays: the gain 2^rel - 1
 * and discount of stats/ranking.ts (Burges 2010, "From RankNet to LambdaRank to LambdaMART", s. 3).
 * - Ties in score are broken pessimistically (lower label first, then file order): a scorer gets no
 *   credit for an order it does not express, so a constant feature scores like the worst order.
 * - CONVENTION for queries with no relevant document (ideal DCG = 0): they are SKIPPED, i.e. left
 *   out of the mean (NDCG is undefined there; LightGBM counts them as 1, which raises every scorer
 *   by the same amount and shrinks the visible differences). The same rule holds in training
 *   (such queries give zero lambdas), tuning of the baselines and every reported number.
 */

/** The cut-offs kt reports: NDCG@1, @3, @5, @10. */
export const NDCG_CUTOFFS = [1, 3, 5, 10] as const

/** The cut-off that model selection (early stopping, coordinate ascent, deploy) optimises. */
export const PRIMARY_CUTOFF = 10

export type NdcgReport = Record<`ndcg@${number}`, number>

/** Graded gain 2^rel - 1 (stats/ranking.ts, 'exp2'), tabulated for labels 0..MAX_LABEL. */
export function labelGain(label: number): number {
  return label <= MAX_LABEL ? GAINS[label] : gain(label, 'exp2')
}

/** Discount of 0-based rank position p (stats/ranking.ts), tabulated for the first positions. */
export function positionDiscount(position: number): number {
  return position < DISCOUNTS.length ? DISCOUNTS[position] : discount(position)
}

/** Tabulated because evaluation runs thousands of times in tuning; the table covers every reported cut-off. */
const GAINS = Float64Array.from({length: MAX_LABEL + 1}, (_, label) => gain(label, 'exp2'))
const TABULATED_POSITIONS = 1024
const DISCOUNTS = Float64Array.from({length: TABULATED_POSITIONS}, (_, p) => discount(p))

/** DCG@k of the labels of documents begin..end-1 when sorted by label, best first. */
export function idealDcg(labels: ArrayLike<number>, begin: number, end: number, k: number): number {
  const sorted = Array.prototype.slice.call(labels, begin, end) as number[]
  sorted.sort((a, b) => b - a)
  let dcg = 0
  for (let p = 0; p < Math.min(k, sorted.length); p++) dcg += labelGain(sorted[p]) * positionDiscount(p)
  return dcg
}

/**
 * Partial selection sort: fills `order[0..n)` with the documents begin..end-1 and moves the top
 * m = min(k, n) by score, best first, into `order[0..m)`; returns m. Ties: lower label first when
 * `pessimisticTies` (evaluation), else file order. O(n m), and k is small (10) next to typical n.
 */
export function topK(
  scores: Float64Array,
  labels: Float64Array,
  begin: number,
  end: number,
  k: number,
  order: Int32Array,
  pessimisticTies: boolean,
): number {
  const n = end - begin
  for (let i = 0; i < n; i++) order[i] = begin + i
  const m = Math.min(k, n)
  for (let p = 0; p < m; p++) {
    let bestAt = p
    for (let i = p + 1; i < n; i++) {
      const d = order[i]
      const best = order[bestAt]
      if (
        scores[d] > scores[best] ||
        (scores[d] === scores[best] &&
          (pessimisticTies ? labels[d] < labels[best] || (labels[d] === labels[best] && d < best) : d < best))
      )
        bestAt = i
    }
    const chosen = order[bestAt]
    order[bestAt] = order[p]
    order[p] = chosen
  }
  return m
}

/**
 * Evaluation's top-k: fills `order[0..m)` with the m = min(k, n) best documents of begin..end-1,
 * best first, ties pessimistic (lower label first, then file order). One pass keeping a sorted
 * buffer of k: cheaper than selection when n is a few times k, and evaluation runs thousands of
 * times inside coordinate ascent.
 */
export function topKForEvaluation(
  scores: Float64Array,
  labels: Float64Array,
  begin: number,
  end: number,
  k: number,
  order: Int32Array,
): number {
  let m = 0
  for (let d = begin; d < end; d++) {
    const s = scores[d]
    const l = labels[d]
    if (m === k) {
      const last = order[m - 1]
      // Later documents lose file-order ties, so d must be strictly better than the last kept.
      if (!(s > scores[last] || (s === scores[last] && l < labels[last]))) continue
    } else m++
    let i = m - 1
    while (i > 0) {
      const prev = order[i - 1]
      if (!(s > scores[prev] || (s === scores[prev] && l < labels[prev]))) break
      order[i] = prev
      i--
    }
    order[i] = d
  }
  return m
}

/** Evaluates mean NDCG@k of score arrays on one data set; ideal DCGs are computed once. */
export class NdcgEvaluator {
  private readonly ideal: Float64Array[] = []
  private readonly order: Int32Array

  /** Cut-offs in ascending order. */
  readonly cutoffs: readonly number[]

  constructor(
    readonly data: LtrDataset,
    cutoffs: readonly number[] = NDCG_CUTOFFS,
  ) {
    this.cutoffs = [...cutoffs].sort((a, b) => a - b)
    const {labels, queryOffsets} = data
    this.order = new Int32Array(Math.max(1, widestQuery(data)))
    for (const k of this.cutoffs) {
      const ideal = new Float64Array(numQueries(data))
      for (let q = 0; q < ideal.length; q++) ideal[q] = idealDcg(labels, queryOffsets[q], queryOffsets[q + 1], k)
      this.ideal.push(ideal)
    }
  }

  /** Queries with at least one relevant document (the ones that count). */
  get judgedQueries(): number {
    return this.ideal[0].reduce((n, v) => n + (v > 0 ? 1 : 0), 0)
  }

  /** Mean NDCG at each cut-off (same order as `cutoffs`), skipping queries with ideal DCG 0. */
  meanAll(scores: Float64Array): number[] {
    const sums = new Float64Array(this.cutoffs.length)
    let counted = 0
    this.eachJudged(scores, (ndcg) => {
      counted++
      for (let c = 0; c < ndcg.length; c++) sums[c] += ndcg[c]
    })
    return Array.from(sums, (s) => (counted === 0 ? Number.NaN : s / counted))
  }

  /**
   * NDCG at cut-off `k` (one of `cutoffs`) of every judged query, in query order: the per-query
   * values whose mean meanAll reports (for paired comparisons of two scorers on the same queries).
   */
  perQuery(scores: Float64Array, k: number): Float64Array {
    const c = this.cutoffs.indexOf(k)
    if (c < 0) throw new RangeError(`perQuery: cut-off ${k} is not one of ${this.cutoffs.join(', ')}`)
    const out: number[] = []
    this.eachJudged(scores, (ndcg) => out.push(ndcg[c]))
    return Float64Array.from(out)
  }

  /** Calls `visit` with the NDCG at every cut-off of each judged query, in query order (one buffer, reused). */
  private eachJudged(scores: Float64Array, visit: (ndcg: Float64Array) => void): void {
    const {labels, queryOffsets} = this.data
    const {cutoffs, order} = this
    const ndcg = new Float64Array(cutoffs.length)
    for (let q = 0; q < numQueries(this.data); q++) {
      if (!(this.ideal[0][q] > 0)) continue
      const m = topKForEvaluation(scores, labels, queryOffsets[q], queryOffsets[q + 1], cutoffs.at(-1)!, order)
      let dcg = 0
      let p = 0
      for (let c = 0; c < cutoffs.length; c++) {
        for (; p < Math.min(cutoffs[c], m); p++) dcg += labelGain(labels[order[p]]) * positionDiscount(p)
        ndcg[c] = dcg / this.ideal[c][q]
      }
      visit(ndcg)
    }
  }

  /** Mean NDCG at the smallest cut-off (construct with one cut-off for a single number). */
  mean(scores: Float64Array): number {
    return this.meanAll(scores)[0]
  }

  /** NDCG at each reported cut-off, keyed "ndcg@k". */
  report(scores: Float64Array): NdcgReport {
    const values = this.meanAll(scores)
    const out: NdcgReport = {}
    this.cutoffs.forEach((k, i) => (out[`ndcg@${k}`] = values[i]))
    return out
  }
}

/** An evaluator for the reported cut-offs; a split with no relevant document at all is an error. */
export function reportEvaluator(data: LtrDataset): NdcgEvaluator {
  const evaluator = new NdcgEvaluator(data, NDCG_CUTOFFS)
  if (evaluator.judgedQueries === 0) {
    throw new InputError(data.source, 'at least one query with a relevant document (label > 0)', 'none')
  }
  return evaluator
}

/** The largest number of documents in one query. */
export function widestQuery(data: LtrDataset): number {
  let widest = 0
  for (let q = 0; q < numQueries(data); q++) widest = Math.max(widest, data.queryOffsets[q + 1] - data.queryOffsets[q])
  return widest
}
