import {InputError} from '../util/errors.js'
import {Rng} from '../util/rng.js'

/**
 * A learning-to-rank data set held in flat typed arrays: one row of features per candidate
 * document, rows of one query contiguous, query boundaries in `queryOffsets`.
 */
export interface LtrDataset {
  /** Where the rows came from (file path), for messages. */
  readonly source: string
  /** One name per feature column ("1", "2", ... for LETOR files; the key names for JSONL logs). */
  readonly featureNames: readonly string[]
  /** Row-major features: document d's feature f is `features[d * numFeatures + f]`. */
  readonly features: Float64Array
  /** Graded relevance per document: an integer in 0..MAX_LABEL. */
  readonly labels: Float64Array
  /** Query id per query, in file order. */
  readonly queryIds: readonly string[]
  /** Query q owns documents queryOffsets[q] .. queryOffsets[q + 1] - 1; length = queries + 1. */
  readonly queryOffsets: Int32Array
  /**
   * The logging engine's own score per document (its fixed fusion), when the data is a kt feature
   * log that records it: the ranking a learned reranker has to improve on.
   */
  readonly engineScores?: Float64Array
  /**
   * The engine's candidate pool per query the rows were logged with (`kt rerank log --pool`), when
   * the data is a kt feature log that records it: query-level columns (`@qmax`, `@qrank`) are
   * computed over this pool, so a model reading them must be served with the same pool.
   */
  readonly pool?: number
}

/**
 * Largest accepted relevance grade. LightGBM's default `label_gain` table has 31 entries
 * (2^i - 1 for i = 0..30); grades above that would overflow its gains, and no public LTR set
 * uses more than 4, so a larger label is almost surely a wrong column.
 */
export const MAX_LABEL = 30

export function numFeatures(data: LtrDataset): number {
  return data.featureNames.length
}

export function numDocs(data: LtrDataset): number {
  return data.labels.length
}

export function numQueries(data: LtrDataset): number {
  return data.queryIds.length
}

/** Collects rows one query at a time and freezes them into an LtrDataset. */
export class DatasetBuilder {
  private rows: Float64Array[] = []
  private labels: number[] = []
  private queryIds: string[] = []
  private offsets: number[] = [0]
  private engineScores: number[] = []
  private width = 0

  /** Starts a new query; the following rows belong to it. */
  beginQuery(qid: string): void {
    if (this.queryIds.length > 0 && this.offsets[this.offsets.length - 1] === this.labels.length) {
      // The previous query got no rows: drop it rather than keep an empty group.
      this.queryIds[this.queryIds.length - 1] = qid
      return
    }
    if (this.queryIds.length > 0) this.offsets.push(this.labels.length)
    this.queryIds.push(qid)
  }

  /**
   * Adds one document row (dense, may be shorter than the final width; missing = 0). The engine
   * score is kept only if every row has one.
   */
  addRow(label: number, row: Float64Array, engineScore?: number): void {
    if (this.queryIds.length === 0) throw new Error('DatasetBuilder: addRow before beginQuery')
    if (engineScore !== undefined) this.engineScores.push(engineScore)
    this.rows.push(row)
    this.labels.push(label)
    if (row.length > this.width) this.width = row.length
  }

  get rowCount(): number {
    return this.labels.length
  }

  build(source: string, featureNames?: readonly string[]): LtrDataset {
    const width = featureNames ? featureNames.length : this.width
    const names = featureNames ?? Array.from({length: width}, (_, i) => String(i + 1))
    const features = new Float64Array(this.labels.length * width)
    this.rows.forEach((row, d) => features.set(row.subarray(0, width), d * width))
    const offsets = this.queryIds.length === 0 ? [0] : [...this.offsets, this.labels.length]
    return {
      source,
      featureNames: names,
      features,
      labels: Float64Array.from(this.labels),
      queryIds: [...this.queryIds],
      queryOffsets: Int32Array.from(offsets),
      ...(this.labels.length > 0 && this.engineScores.length === this.labels.length
        ? {engineScores: Float64Array.from(this.engineScores)}
        : {}),
    }
  }
}

/**
 * The same data with `width` feature columns (LETOR files are sparse: a file whose highest feature
 * index is lower than another split's gets zero columns appended, as SVMlight readers do).
 */
export function widenTo(data: LtrDataset, names: readonly string[]): LtrDataset {
  const from = numFeatures(data)
  const width = names.length
  if (from === width) return {...data, featureNames: names}
  const n = numDocs(data)
  const features = new Float64Array(n * width)
  const copy = Math.min(from, width)
  for (let d = 0; d < n; d++) {
    features.set(data.features.subarray(d * from, d * from + copy), d * width)
  }
  return {...data, featureNames: names, features}
}

/** The documents of a subset of queries (by query index), in the given order. */
export function selectQueries(data: LtrDataset, queries: readonly number[], source = data.source): LtrDataset {
  const width = numFeatures(data)
  let total = 0
  for (const q of queries) total += data.queryOffsets[q + 1] - data.queryOffsets[q]
  const features = new Float64Array(total * width)
  const labels = new Float64Array(total)
  const offsets = new Int32Array(queries.length + 1)
  const engineScores = data.engineScores ? new Float64Array(total) : undefined
  let at = 0
  queries.forEach((q, i) => {
    const begin = data.queryOffsets[q]
    const end = data.queryOffsets[q + 1]
    features.set(data.features.subarray(begin * width, end * width), at * width)
    labels.set(data.labels.subarray(begin, end), at)
    engineScores?.set(data.engineScores!.subarray(begin, end), at)
    at += end - begin
    offsets[i + 1] = at
  })
  return {
    source,
    featureNames: data.featureNames,
    features,
    labels,
    queryIds: queries.map((q) => data.queryIds[q]),
    queryOffsets: offsets,
    ...(engineScores ? {engineScores} : {}),
    ...(data.pool !== undefined ? {pool: data.pool} : {}),
  }
}

/**
 * Splits a data set by query: a seeded uniform `fraction` of its queries (at least one, at most
 * all but one) becomes the validation part, the rest stays for training, each in file order.
 */
export function carveValidation(
  data: LtrDataset,
  fraction: number,
  seed: number,
): {train: LtrDataset; valid: LtrDataset} {
  const n = numQueries(data)
  if (n < 2) throw new InputError(data.source, 'at least 2 queries to carve a validation split from', String(n))
  const take = Math.min(n - 1, Math.max(1, Math.round(fraction * n)))
  const rng = new Rng(seed)
  const order = Array.from({length: n}, (_, i) => i)
  for (let i = n - 1; i > 0; i--) {
    const j = rng.int(i + 1)
    ;[order[i], order[j]] = [order[j], order[i]]
  }
  const chosen = new Set(order.slice(0, take))
  const all = Array.from({length: n}, (_, i) => i)
  return {
    train: selectQueries(
      data,
      all.filter((q) => !chosen.has(q)),
      `${data.source} (training part)`,
    ),
    valid: selectQueries(
      data,
      all.filter((q) => chosen.has(q)),
      `${data.source} (validation part, ${take} of ${n} queries)`,
    ),
  }
}
