import {buildCsr, GrowableArray, Vocabulary, type Csr} from './vocabulary.js'

/**
 * Okapi BM25 (Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework: BM25 and
 * Beyond") over an inverted index. k1 and b are query-time parameters, so the index stores raw
 * term frequencies and document lengths. IDF is Lucene's non-negative variant
 * ln(1 + (N - df + 0.5) / (df + 0.5)) (Lucene BM25Similarity), so very common terms never
 * subtract from a score.
 */
export class Bm25Index {
  readonly vocabulary = new Vocabulary()
  /** Postings per term: doc ids (`cols`) and term frequencies (`values`). */
  readonly postings: Csr
  readonly idf: Float64Array
  readonly docLength: Float32Array
  readonly averageLength: number
  readonly docCount: number
  /** Postings the last score() call scanned (its inner-loop steps; the engine's work count). */
  lastPostings = 0

  /** `docs[i]` is the list of (stemmed) terms of document i. */
  constructor(docs: readonly (readonly string[])[]) {
    this.docCount = docs.length
    this.docLength = new Float32Array(docs.length)
    const termOf = new GrowableArray()
    const docOf = new GrowableArray()
    const tfOf = new GrowableArray()
    let total = 0
    docs.forEach((terms, d) => {
      this.docLength[d] = terms.length
      total += terms.length
      const counts = new Map<number, number>()
      for (const t of terms) {
        const id = this.vocabulary.intern(t)
        counts.set(id, (counts.get(id) ?? 0) + 1)
      }
      for (const [id, tf] of counts) {
        termOf.push(id)
        docOf.push(d)
        tfOf.push(tf)
      }
    })
    this.averageLength = docs.length === 0 ? 0 : total / docs.length
    this.postings = buildCsr(this.vocabulary.size, termOf.view(), docOf.view(), tfOf.view())
    this.idf = new Float64Array(this.vocabulary.size)
    for (let t = 0; t < this.vocabulary.size; t++) {
      const df = this.postings.start[t + 1] - this.postings.start[t]
      this.idf[t] = bm25Idf(this.docCount, df)
    }
  }

  /** Distinct known term ids of a query's terms (a repeated query term counts once). */
  queryTerms(terms: readonly string[]): number[] {
    const ids: number[] = []
    for (const t of terms) {
      const id = this.vocabulary.lookup(t)
      if (id >= 0 && !ids.includes(id)) ids.push(id)
    }
    return ids
  }

  /**
   * Adds each document's BM25 score for the query into `out` (which must be zero where it is
   * untouched) and appends newly touched documents to `touched`; returns the new touched count.
   */
  score(
    queryTermIds: readonly number[],
    k1: number,
    b: number,
    out: Float32Array,
    touched: Int32Array,
    touchedCount: number,
  ): number {
    const {start, cols, values} = this.postings
    const avg = this.averageLength > 0 ? this.averageLength : 1
    let count = touchedCount
    let scanned = 0
    for (const t of queryTermIds) {
      const idf = this.idf[t]
      scanned += start[t + 1] - start[t]
      for (let p = start[t]; p < start[t + 1]; p++) {
        const d = cols[p]
        const tf = values[p]
        const norm = k1 * (1 - b + (b * this.docLength[d]) / avg)
        if (out[d] === 0) touched[count++] = d
        out[d] += (idf * tf * (k1 + 1)) / (tf + norm)
      }
    }
    this.lastPostings = scanned
    return count
  }
}

/** Lucene's BM25 IDF: ln(1 + (N - df + 0.5) / (df + 0.5)). */
export function bm25Idf(docCount: number, df: number): number {
  return Math.log(1 + (docCount - df + 0.5) / (df + 0.5))
}
