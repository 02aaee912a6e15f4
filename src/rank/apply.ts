import type {CandidateRow} from '../engine/retrieval/features.js'
import {CANDIDATE_FEATURES} from '../engine/retrieval/space.js'
import {InputError} from '../util/errors.js'
import {fromSavedModel, type SavedModel} from './model.js'
import {PackedEnsemble} from './packed.js'
import {ENGINE_SCORE_FEATURE} from './report.js'

/**
 * Applying a saved reranker to the engine's candidates (`candidateFeatures` rows): the model must
 * read exactly the engine's CANDIDATE_FEATURES, optionally followed by the engine's fused score
 * (models trained with --engine-score-feature). Rows are scored with the packed ensemble through
 * one reused feature buffer and returned best first (ties keep the engine's order).
 */
export interface EngineReranker {
  readonly packed: PackedEnsemble
  /** Whether the model's last column is the engine's fused score. */
  readonly usesEngineScore: boolean
  /** The packed score of one candidate. */
  score(row: CandidateRow): number
  /** The candidates re-ordered by the model, best first. */
  rerank(rows: readonly CandidateRow[]): CandidateRow[]
}

export function engineReranker(saved: SavedModel, where = 'model'): EngineReranker {
  const names = saved.feature_names
  const base = names.slice(0, CANDIDATE_FEATURES.length)
  const usesEngineScore = names.length === CANDIDATE_FEATURES.length + 1 && names[names.length - 1] === ENGINE_SCORE_FEATURE
  if (base.join(',') !== CANDIDATE_FEATURES.join(',') || (names.length !== CANDIDATE_FEATURES.length && !usesEngineScore)) {
    throw new InputError(`${where} field feature_names`, `the engine's features (${CANDIDATE_FEATURES.join(', ')}[, ${ENGINE_SCORE_FEATURE}])`, names.join(', '))
  }
  const packed = new PackedEnsemble(fromSavedModel(saved))
  const buffer = new Float64Array(names.length)
  const score = (row: CandidateRow): number => {
    buffer.set(row.features)
    if (usesEngineScore) buffer[CANDIDATE_FEATURES.length] = row.score
    return packed.score(buffer, 0)
  }
  return {
    packed,
    usesEngineScore,
    score,
    rerank(rows) {
      const scored = rows.map((row, i) => ({row, i, s: score(row)}))
      scored.sort((a, b) => b.s - a.s || a.i - b.i)
      return scored.map((x) => x.row)
    },
  }
}
