import {SIGNALS, type Weights} from './space.js'
import type {SignalColumns} from './signals.js'

/**
 * importance = clamp01(w_decay * decay + w_surprise * surprise + w_relevance * relevance
 *                      + w_habituation * habituation)
 */
export function importanceOf(signals: Readonly<Record<(typeof SIGNALS)[number], number>>, w: Weights): number {
  const s =
    w.decay * signals.decay +
    w.surprise * signals.surprise +
    w.relevance * signals.relevance +
    w.habituation * signals.habituation
  return s < 0 ? 0 : s > 1 ? 1 : s
}

/**
 * The same score over columnar arrays, written for throughput: one pass, no allocation, four
 * multiply-adds and a clamp per turn. `out` may be reused across calls.
 */
export function scoreColumns(
  cols: Pick<SignalColumns, 'n' | 'decay' | 'surprise' | 'relevance' | 'habituation'>,
  w: Weights,
  out: Float64Array = new Float64Array(cols.n),
): Float64Array {
  const {decay, surprise, relevance, habituation} = cols
  const wd = w.decay,
    ws = w.surprise,
    wr = w.relevance,
    wh = w.habituation
  const n = cols.n
  for (let i = 0; i < n; i++) {
    const s = wd * decay[i] + ws * surprise[i] + wr * relevance[i] + wh * habituation[i]
    out[i] = s < 0 ? 0 : s > 1 ? 1 : s
  }
  return out
}

/** Detail levels from least to most detail; the index is the level's order. */
export const DETAIL_LEVELS = ['DROPPED', 'SUMMARY', 'CHUNKS', 'FULL'] as const
type DetailLevel = (typeof DETAIL_LEVELS)[number]

/** Minimum score for each kept level (a score below SUMMARY's is DROPPED). */
export interface DetailThresholds {
  readonly FULL: number
  readonly CHUNKS: number
  readonly SUMMARY: number
}

/** Share of a turn's tokens that each level keeps in the context. */
export type TokenCost = Readonly<Record<DetailLevel, number>>

/** Level index (into DETAIL_LEVELS) of a score: a monotone step function. */
export function detailLevelIndex(score: number, t: DetailThresholds): number {
  if (score >= t.FULL) return 3
  if (score >= t.CHUNKS) return 2
  if (score >= t.SUMMARY) return 1
  return 0
}

export function detailLevels(scores: Float64Array, t: DetailThresholds): Uint8Array {
  const out = new Uint8Array(scores.length)
  for (let i = 0; i < scores.length; i++) out[i] = detailLevelIndex(scores[i], t)
  return out
}

/** Tokens the kept turns cost in a context: sum of tokens x the level's share. */
export function tokenBudget(levels: Uint8Array, tokens: Float64Array, cost: TokenCost): number {
  const share = DETAIL_LEVELS.map((l) => cost[l])
  let total = 0
  for (let i = 0; i < levels.length; i++) total += tokens[i] * share[levels[i]]
  return total
}
