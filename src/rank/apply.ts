import type {CandidateRow} from '../engine/retrieval/features.js'
import {fromSavedModel, type SavedModel} from './model.js'
import {PackedEnsemble} from './packed.js'
import {WasmEnsemble} from './wasm.js'
import {layoutNames, layoutOf, rerankerInputs, type FeatureLayout} from './query-features.js'

/**
 * Applying a saved reranker to the engine's candidates (`candidateFeatures` rows): the model must
 * read the engine's CANDIDATE_FEATURES, optionally followed by query-level blocks and the engine's
 * fused score (query-features.ts, whose `rerankerInputs` also writes the training logs). A query's
 * rows are laid out in the WebAssembly kernel's reused input buffer and scored there (wasm.ts,
 * bit-identical to the packed ensemble); rerank() returns them best first (ties keep the engine's order).
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
  const wasm = new WasmEnsemble(packed)
  const scoreAll = (rows: readonly CandidateRow[]): Float64Array => {
    const inputs = wasm.input(rows.length)
    if (rerankerInputs(rows, layout, inputs) !== inputs)
      throw new Error(`engineReranker: ${width} columns expected by the model and by rerankerInputs differ`)
    return wasm.scoreInput(rows.length)
  }
  return {
    packed,
    layout,
    usesEngineScore: layout.engineScore,
    scoreAll,
    rerank(rows) {
      const s = scoreAll(rows)
      const scored = rows.map((row, i) => ({row, i, score: s[i]}))
      scored.sort((a, b) => b.score - a.score || a.i - b.i)
      return scored.map(({row, score}) => ({row, score}))
    },
  }
}
