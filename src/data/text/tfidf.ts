import {contentTokens} from './tokenize.js'

/** A sparse L2-normalised TF-IDF vector: parallel arrays of term ids and weights. */
export interface SparseVector {
  readonly terms: Int32Array
  readonly weights: Float64Array
}

/**
 * TF-IDF over a fixed corpus (Salton & Buckley 1988): tf = 1 + ln(count), smoothed
 * idf = ln((1 + N) / (1 + df)) + 1 (the scikit-learn default), vectors L2-normalised so that the
 * dot product is the cosine similarity.
 */
export class TfIdfModel {
  private readonly vocabulary = new Map<string, number>()
  private readonly idf: number[] = []

  constructor(documents: readonly string[]) {
    const df: number[] = []
    for (const doc of documents) {
      for (const term of new Set(contentTokens(doc))) {
        let id = this.vocabulary.get(term)
        if (id === undefined) {
          id = this.vocabulary.size
          this.vocabulary.set(term, id)
          df.push(0)
        }
        df[id]++
      }
    }
    const n = documents.length
    for (let i = 0; i < df.length; i++) this.idf.push(Math.log((1 + n) / (1 + df[i])) + 1)
  }

  /** Vector of a text; terms outside the corpus vocabulary are ignored (they cannot match). */
  vectorize(text: string): SparseVector {
    const counts = new Map<number, number>()
    for (const term of contentTokens(text)) {
      const id = this.vocabulary.get(term)
      if (id !== undefined) counts.set(id, (counts.get(id) ?? 0) + 1)
    }
    const ids = [...counts.keys()].sort((a, b) => a - b)
    const weights = new Float64Array(ids.length)
    let norm = 0
    ids.forEach((id, k) => {
      const w = (1 + Math.log(counts.get(id)!)) * this.idf[id]
      weights[k] = w
      norm += w * w
    })
    norm = Math.sqrt(norm)
    if (norm > 0) for (let k = 0; k < weights.length; k++) weights[k] /= norm
    return {terms: Int32Array.from(ids), weights}
  }
}

/** Cosine similarity of two normalised sparse vectors (merge of sorted term ids); 0 if either is empty. */
export function cosine(a: SparseVector, b: SparseVector): number {
  let i = 0,
    j = 0,
    dot = 0
  while (i < a.terms.length && j < b.terms.length) {
    if (a.terms[i] === b.terms[j]) dot += a.weights[i++] * b.weights[j++]
    else if (a.terms[i] < b.terms[j]) i++
    else j++
  }
  // rounding can push the cosine of identical vectors a hair past 1
  return Math.min(1, Math.max(0, dot))
}
