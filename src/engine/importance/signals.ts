import {TfIdfModel, cosine} from '../../data/text/tfidf.js'
import {contentTokens, estimateTokens} from '../../data/text/tokenize.js'

// the scorer's input and signal columns are the datasets' vocabulary too: defined below in data
export type {TurnInput, ImportanceInput, SignalColumns} from '../../data/importance/input.js'

import type {ImportanceInput, SignalColumns} from '../../data/importance/input.js'
import {MS_PER_HOUR} from '../../data/importance/input.js'

/** decay = exp(-age_hours / time_scale_hours); a turn at the reference time has decay 1. */
export function decaySignal(ageHours: number, timeScaleHours: number): number {
  return Math.exp(-Math.max(0, ageHours) / timeScaleHours)
}

/**
 * Habituation as novelty: 1 / (1 + r), where r counts earlier turns (by time, then input order)
 * with the same content fingerprint (the set of content words). A first mention scores 1, its
 * first repeat 1/2, and so on: repetition dampens, as habituation does.
 */
export function habituationSignal(texts: readonly string[], timesMs: ArrayLike<number>): Float64Array {
  const order = texts.map((_, i) => i).sort((a, b) => timesMs[a] - timesMs[b] || a - b)
  const seen = new Map<string, number>()
  const out = new Float64Array(texts.length)
  for (const i of order) {
    const fingerprint = [...new Set(contentTokens(texts[i]))].sort().join(' ')
    const repeats = seen.get(fingerprint) ?? 0
    out[i] = 1 / (1 + repeats)
    seen.set(fingerprint, repeats + 1)
  }
  return out
}

/** Relevance: cosine of TF-IDF vectors (fitted on the turns and queries) of each turn and its query. */
export function relevanceSignal(texts: readonly string[], queries: readonly string[]): Float64Array {
  const model = new TfIdfModel([...texts, ...new Set(queries)])
  const queryVectors = new Map<string, ReturnType<TfIdfModel['vectorize']>>()
  const out = new Float64Array(texts.length)
  for (let i = 0; i < texts.length; i++) {
    let q = queryVectors.get(queries[i])
    if (q === undefined) {
      q = model.vectorize(queries[i])
      queryVectors.set(queries[i], q)
    }
    out[i] = cosine(model.vectorize(texts[i]), q)
  }
  return out
}

/** Computes every signal column for a dataset. */
export function computeSignals(input: ImportanceInput, timeScaleHours: number): SignalColumns {
  const n = input.turns.length
  const texts = input.turns.map((t) => t.text)
  const times = Float64Array.from(input.turns, (t) => t.timeMs)
  const ageHours = Float64Array.from(input.turns, (t) => (input.referenceTimeMs - t.timeMs) / MS_PER_HOUR)
  return {
    n,
    decay: ageHours.map((a) => decaySignal(a, timeScaleHours)),
    surprise: Float64Array.from(input.turns, (t) => t.surprise),
    relevance: relevanceSignal(
      texts,
      input.turns.map((t) => t.query),
    ),
    habituation: habituationSignal(texts, times),
    ageHours,
    tokens: Float64Array.from(texts, estimateTokens),
  }
}
