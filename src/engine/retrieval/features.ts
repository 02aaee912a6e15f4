import type {Config} from '../../space/types.js'
import {UNREACHED} from './activation.js'
import type {RetrievalEngine} from './engine.js'
import {CANDIDATE_FEATURES} from './space.js'

/** How many candidates per query get feature rows by default (a reranker's usual pool). */
export const DEFAULT_CANDIDATE_POOL = 50

/** One candidate turn of a query with its fused score and its feature row (CANDIDATE_FEATURES order). */
export interface CandidateRow {
  readonly turn: number
  readonly id: string
  /** The engine's fused score (its ranking key). */
  readonly score: number
  readonly features: Float64Array
}

/**
 * The engine's top `pool` candidates for a query with the twelve reranker features:
 * bm25 and vector (raw scores), activation (received spreading activation after inhibition),
 * base_level_boost ((1 - alpha) x ACT-R recency, added to the graph score), inhibition_penalty,
 * hops (from the nearest seed; -1 if the spread never reached it), access_count, age_days,
 * last_access_days (the age when never accessed), content_tier (0 chit-chat, 1 ordinary,
 * 2 fact-bearing), path_edge_types (bit mask over EDGE_TYPES of the strongest activation path)
 * and fan_in (number of contributions received).
 */
export function candidateFeatures(
  engine: RetrievalEngine,
  query: string,
  config: Config,
  pool: number = DEFAULT_CANDIDATE_POOL,
): CandidateRow[] {
  const ranked = engine.search(query, config, pool)
  const state = engine.activationState
  return ranked.turns.map((t, i) => {
    const {bm25, vector} = engine.textScores(t)
    const access = engine.accessStats(t)
    const hops = state.hops[t]
    const row = [
      bm25,
      vector,
      state.activation[t],
      engine.boost[t],
      engine.penalty[t],
      hops === UNREACHED ? -1 : hops,
      access.count,
      engine.ageDays[t],
      access.lastDays,
      engine.contentTier[t],
      state.pathMask[t],
      state.fanIn[t],
    ]
    return {turn: t, id: engine.turnIds[t], score: ranked.scores[i], features: Float64Array.from(row)}
  })
}

/** Column names, re-exported beside the extractor so the order has one source. */
export {CANDIDATE_FEATURES}
