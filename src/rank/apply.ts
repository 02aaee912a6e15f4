import type {CandidateRow} from '../engine/retrieval/features.js'
import {fromSavedModel, type SavedModel} from './model.js'
import {PackedEnsemble} from './packed.js'
import {layoutNames, layoutOf, rerankerInputs, type FeatureLayout} from './query-features.js'

/**
 * Applying a saved reranker to the engine's candidates (`candidateFeatures` rows): the model must
 * read the engine's CANDIDATE_FEATURES, optionally followed by query-level blocks and the engine's
 * fused score (query-features.ts, whose `rerankerInputs` also writes the training logs). A query's
 * rows are laid out in one reused input buffer and scored by the packed ensemble (bit-identical to
 * the trainer); rerank() returns them best first (ties keep the engine's order).
 */
export interface EngineReranker {
  readonly packed: PackedEnsemble
  /** The columns the model reads. */
  readonly layout: FeatureLayout
  /** Whether the model's last column is the engine's fused score. */
  readonly usesEngineScore: boolean
  /** Packed scores of one query's candidates, in row order (valid until the next call). */
  scoreAll(rows: readonly CandidateRow[]): Float64Array
  /** The candidates re-ordered by the model, best first, with their model scores. */
  rerank(rows: readonly CandidateRow[]): {row: CandidateRow; score: number}[]
}

/** A reranker over the engine's candidates; `where` (the model file) names a misfit feature_names. */
export function engineReranker(saved: SavedModel, where = 'model'): EngineReranker {
  const layout = layoutOf(saved.feature_names, where)
  const width = layoutNames(layout).length
  const packed = new PackedEnsemble(fromSavedModel(saved))
  let inputs = new Float64Array(0)
  let scores = new Float64Array(0)
  const scoreAll = (rows: readonly CandidateRow[]): Float64Array => {
    if (scores.length < rows.length) {
      inputs = new Float64Array(rows.length * width)
      scores = new Float64Array(rows.length)
    }
    const used = inputs.subarray(0, rows.length * width)
    if (rerankerInputs(rows, layout, used) !== used)
      throw new Error(`engineReranker: ${width} columns expected by the model and by rerankerInputs differ`)
    return packed.scoreAll(used, rows.length, scores.subarray(0, rows.length))
  }
  return {
    packed,
    layout,
    usesEngineScore: layout.engineScore,
    scoreAll,
    rerank(rows) {
      const s = scoreAll(rows)
      return bestFirst(s).map((i) => ({row: rows[i], score: s[i]}))
    },
  }
}

/**
 * Candidate indices best first: higher score first, equal scores in index order, NaN scores (a
 * base term over a missing value) last in index order.
 */
export function bestFirst(scores: Float64Array): number[] {
  const order = Array.from({length: scores.length}, (_, i) => i)
  return order.sort((a, b) => {
    const x = scores[a]
    const y = scores[b]
    if (Number.isNaN(x) || Number.isNaN(y)) return Number.isNaN(x) ? (Number.isNaN(y) ? a - b : 1) : -1
    return y - x || a - b
  })
}
