import type {CandidateRow} from '../engine/retrieval/features.js'
import {CANDIDATE_FEATURES} from '../engine/retrieval/space.js'
import {InputError} from '../util/errors.js'
import {ENGINE_SCORE_FEATURE, formatNameList} from './splits.js'

/**
 * The reranker's input columns for one query's candidates, computed by ONE function
 * (`rerankerInputs`) for both the training logs (`kt rerank log`) and query time (apply.ts), so a
 * logged row and a served row are the same numbers.
 *
 * Layout of a model's feature_names, in this order:
 * 1. the engine's CANDIDATE_FEATURES (always);
 * 2. optional query-level blocks, each one column per QUERY_FEATURE_SOURCES entry, named
 *    `<source>@<kind>`, in QUERY_FEATURE_KINDS order:
 *    - `qmax`: the value divided by the largest absolute value of that column among the query's
 *      candidates (0 when all are 0): the "query-level normalisation" of LETOR 4.0
 *      (Qin & Liu 2013, "Introducing LETOR 4.0 Datasets", section 3: QueryLevelNorm);
 *    - `qrank`: the candidate's rank by that column within the query, largest first, ties given
 *      their mean rank, scaled to 0 (largest) .. 1 (smallest);
 * 3. optional ENGINE_SCORE_FEATURE, the engine's raw fused score (appended by
 *    `kt rerank train --engine-score-feature` from the logged engine_score).
 * Raw scores are not comparable across queries (a BM25 of 9 is strong for one query and weak for
 * another); the engine itself fuses per-query-normalised signals, so trees on raw values have to
 * relearn that normalisation from few queries.
 */

const QUERY_FEATURE_KINDS = ['qmax', 'qrank'] as const
export type QueryFeatureKind = (typeof QUERY_FEATURE_KINDS)[number]

/** Columns a query-level block is computed from: the engine's features and its fused score. */
const QUERY_FEATURE_SOURCES: readonly string[] = [...CANDIDATE_FEATURES, ENGINE_SCORE_FEATURE]

/** Which columns a reranker reads, beyond the always-present CANDIDATE_FEATURES. */
export interface FeatureLayout {
  /** Query-level blocks, in QUERY_FEATURE_KINDS order. */
  readonly queryFeatures: readonly QueryFeatureKind[]
  /** Whether the last column is the engine's raw fused score. */
  readonly engineScore: boolean
}

/** Column names of a layout, in order. */
export function layoutNames(layout: FeatureLayout): string[] {
  const names: string[] = [...CANDIDATE_FEATURES]
  for (const kind of QUERY_FEATURE_KINDS)
    if (layout.queryFeatures.includes(kind)) names.push(...QUERY_FEATURE_SOURCES.map((s) => `${s}@${kind}`))
  if (layout.engineScore) names.push(ENGINE_SCORE_FEATURE)
  return names
}

/** Every layout a model may have (each subset of query blocks, with and without the engine score). */
function allLayouts(): FeatureLayout[] {
  const out: FeatureLayout[] = []
  for (let mask = 0; mask < 1 << QUERY_FEATURE_KINDS.length; mask++) {
    const queryFeatures = QUERY_FEATURE_KINDS.filter((_, i) => (mask & (1 << i)) !== 0)
    for (const engineScore of [false, true]) out.push({queryFeatures, engineScore})
  }
  return out
}

/** The layout whose names are exactly `names`, or an InputError naming `where` field feature_names. */
export function layoutOf(names: readonly string[], where: string): FeatureLayout {
  const joined = names.join(',')
  const found = allLayouts().find((layout) => layoutNames(layout).join(',') === joined)
  if (found) return found
  const shown = formatNameList(names)
  throw new InputError(
    `${where} field feature_names`,
    `the engine's features (${CANDIDATE_FEATURES.join(', ')}), then optional query blocks <feature>@${QUERY_FEATURE_KINDS.join('|@')}, then optional ${ENGINE_SCORE_FEATURE}`,
    shown,
  )
}

/**
 * Whether any column is query-level (`<source>@qmax`, `<source>@qrank`): such columns depend on the
 * candidate pool they were computed over.
 */
export function hasQueryLevelColumns(names: readonly string[]): boolean {
  return names.some((name) => QUERY_FEATURE_KINDS.some((kind) => name.endsWith(`@${kind}`)))
}

/** Parses a comma-separated list of query-feature kinds (`--query-features max,rank` style names accepted). */
export function parseQueryFeatureKinds(text: string, where: string): QueryFeatureKind[] {
  const wanted = new Set<QueryFeatureKind>()
  for (const raw of text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)) {
    const kind = (raw.startsWith('q') ? raw : `q${raw}`) as QueryFeatureKind
    if (!QUERY_FEATURE_KINDS.includes(kind))
      throw new InputError(where, `query feature kinds among ${QUERY_FEATURE_KINDS.join(', ')}`, JSON.stringify(raw))
    wanted.add(kind)
  }
  return QUERY_FEATURE_KINDS.filter((k) => wanted.has(k))
}

/** Value of query-feature source `s` (CANDIDATE_FEATURES index, or the engine score) of a row. */
function sourceValue(row: CandidateRow, s: number): number {
  return s < CANDIDATE_FEATURES.length ? row.features[s] : row.score
}

/**
 * The layout's columns for one query's candidates, row-major (`rows.length` x layoutNames(layout)
 * width) into `out` (allocated when absent or too small). See the module comment for each column.
 */
export function rerankerInputs(rows: readonly CandidateRow[], layout: FeatureLayout, out?: Float64Array): Float64Array {
  const base = CANDIDATE_FEATURES.length
  const sources = QUERY_FEATURE_SOURCES.length
  const width = base + sources * layout.queryFeatures.length + (layout.engineScore ? 1 : 0)
  const n = rows.length
  const matrix = out !== undefined && out.length >= n * width ? out : new Float64Array(n * width)
  for (let d = 0; d < n; d++) {
    matrix.set(rows[d].features, d * width)
    if (layout.engineScore) matrix[d * width + width - 1] = rows[d].score
  }
  let column = base
  for (const kind of QUERY_FEATURE_KINDS) {
    if (!layout.queryFeatures.includes(kind)) continue
    const values = new Float64Array(n)
    for (let s = 0; s < sources; s++, column++) {
      for (let d = 0; d < n; d++) values[d] = sourceValue(rows[d], s)
      const derived = kind === 'qmax' ? maxNormalised(values) : rankNormalised(values)
      for (let d = 0; d < n; d++) matrix[d * width + column] = derived[d]
    }
  }
  return matrix
}

/** x / max|x| over the query (0 for every candidate when the column is all zeros). */
export function maxNormalised(values: Float64Array): Float64Array {
  let largest = 0
  for (const v of values) largest = Math.max(largest, Math.abs(v))
  return values.map((v) => (largest > 0 ? v / largest : 0))
}

/**
 * Rank by value within the query, largest first, 0-based, ties sharing their mean rank, divided by
 * n - 1 (0 for a single candidate): 0 = the query's largest value, 1 = its smallest.
 */
export function rankNormalised(values: Float64Array): Float64Array {
  const n = values.length
  const order = Array.from({length: n}, (_, i) => i).sort((a, b) => values[b] - values[a] || a - b)
  const out = new Float64Array(n)
  const scale = n > 1 ? n - 1 : 1
  for (let start = 0; start < n;) {
    let end = start + 1
    while (end < n && values[order[end]] === values[order[start]]) end++
    const meanRank = (start + end - 1) / 2
    for (let i = start; i < end; i++) out[order[i]] = meanRank / scale
    start = end
  }
  return out
}
