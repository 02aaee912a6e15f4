import {hashString} from '../../util/rng.js'
import {STOP_WORDS, stem, words} from './tokenize.js'
import {buildCsr, GrowableArray, type Csr} from './vocabulary.js'

/**
 * The vector-similarity signal behind one interface, so that a real sentence-embedding model
 * can replace the offline default later: an Embedder is fitted on a corpus and returns a
 * VectorIndex that scores a query against every document.
 */
export interface Embedder {
  readonly name: string
  fit(texts: readonly string[]): VectorIndex
}

export interface VectorIndex {
  readonly size: number
  /**
   * Adds the cosine similarity (clipped at 0) of the query to each document into `out` (zero
   * where untouched), appends newly touched documents to `touched`; returns the touched count.
   */
  similarities(query: string, out: Float32Array, touched: Int32Array, touchedCount: number): number
  /** Cosine similarity of two indexed documents. */
  documentSimilarity(a: number, b: number): number
}

/** Feature families and their weights in the hashed vector (word stems carry the topic). */
export interface HashedTfidfOptions {
  /** Weight of word-stem unigram features. */
  readonly wordWeight: number
  /** Weight of adjacent content-word bigram features. */
  readonly bigramWeight: number
  /** Weight of character n-gram features (each word yields many, so each weighs less). */
  readonly charWeight: number
  /** Character n-gram sizes, inclusive (3..5 is the usual range for fuzzy word matching). */
  readonly charMin: number
  readonly charMax: number
  /** log2 of the number of hash buckets. */
  readonly hashBits: number
}

/**
 * Defaults. The character n-gram range 3..5 follows fastText's subword features (Bojanowski et
 * al. 2017 use 3..6); 2^20 buckets keep collisions rare for corpora of this size. The family
 * weights balance the many character features of a word against its one stem feature.
 */
export const DEFAULT_HASHED_TFIDF: HashedTfidfOptions = {wordWeight: 1, bigramWeight: 0.5, charWeight: 0.25, charMin: 3, charMax: 5, hashBits: 20}

/** Hashed word and character n-gram TF-IDF vectors (the "hashing trick", Weinberger et al. 2009). */
export class HashedTfidfEmbedder implements Embedder {
  readonly name = 'hashed-tfidf'
  constructor(readonly options: HashedTfidfOptions = DEFAULT_HASHED_TFIDF) {}

  fit(texts: readonly string[]): VectorIndex {
    return new HashedTfidfIndex(texts, this.options)
  }
}

/** A hashed feature's occurrence count in a text and its family weight. */
export interface FeatureCount {
  count: number
  weight: number
}

/** Hashed features of a text: bucket -> count and family weight (on a collision, the larger weight). */
export function hashedFeatures(text: string, options: HashedTfidfOptions): Map<number, FeatureCount> {
  const mask = (1 << options.hashBits) - 1
  const counts = new Map<number, FeatureCount>()
  const add = (key: string, weight: number): void => {
    const bucket = hashString(key) & mask
    const known = counts.get(bucket)
    if (known) {
      known.count++
      if (weight > known.weight) known.weight = weight
    } else counts.set(bucket, {count: 1, weight})
  }
  let previous: string | undefined
  for (const w of words(text)) {
    if (STOP_WORDS.has(w)) {
      previous = undefined
      continue
    }
    const s = stem(w)
    add(`w:${s}`, options.wordWeight)
    if (previous !== undefined) add(`b:${previous} ${s}`, options.bigramWeight)
    previous = s
    const padded = `<${w}>`
    for (let n = options.charMin; n <= options.charMax; n++) {
      for (let i = 0; i + n <= padded.length; i++) add(`c:${padded.slice(i, i + n)}`, options.charWeight)
    }
  }
  return counts
}

/**
 * Feature weight = family weight x (1 + ln tf) x idf, idf = ln((1 + N) / (1 + df)) + 1 (the
 * smoothed idf of scikit-learn's TfidfVectorizer), vectors L2-normalised so dot = cosine.
 */
class HashedTfidfIndex implements VectorIndex {
  readonly size: number
  private readonly featureId = new Map<number, number>()
  private readonly idf: Float64Array
  /** Document vectors by row (feature ids ascending), for document-to-document similarity. */
  private readonly docs: Csr
  /** Inverted index: feature -> (doc, weight). */
  private readonly postings: Csr

  constructor(texts: readonly string[], private readonly options: HashedTfidfOptions) {
    this.size = texts.length
    const perDoc = texts.map((t) => hashedFeatures(t, options))
    const df: number[] = []
    for (const feats of perDoc) {
      for (const bucket of feats.keys()) {
        let id = this.featureId.get(bucket)
        if (id === undefined) {
          id = df.length
          this.featureId.set(bucket, id)
          df.push(0)
        }
        df[id]++
      }
    }
    this.idf = new Float64Array(df.length)
    for (let f = 0; f < df.length; f++) this.idf[f] = Math.log((1 + texts.length) / (1 + df[f])) + 1
    const rowOf = new GrowableArray()
    const colOf = new GrowableArray()
    const valOf = new GrowableArray()
    perDoc.forEach((feats, d) => {
      const entries = this.weigh(feats)
      for (const [f, w] of entries) {
        rowOf.push(d)
        colOf.push(f)
        valOf.push(w)
      }
    })
    this.docs = buildCsr(texts.length, rowOf.view(), colOf.view(), valOf.view())
    this.postings = buildCsr(df.length, colOf.view(), rowOf.view(), valOf.view())
  }

  /** Known features of a text with their normalised weights, feature ids ascending. */
  private weigh(feats: Map<number, FeatureCount>): Array<[number, number]> {
    const entries: Array<[number, number]> = []
    let norm = 0
    for (const [bucket, {count, weight}] of feats) {
      const f = this.featureId.get(bucket)
      if (f === undefined) continue
      const w = weight * (1 + Math.log(count)) * this.idf[f]
      entries.push([f, w])
      norm += w * w
    }
    norm = Math.sqrt(norm)
    entries.sort((a, b) => a[0] - b[0])
    if (norm > 0) for (const e of entries) e[1] /= norm
    return entries
  }

  similarities(query: string, out: Float32Array, touched: Int32Array, touchedCount: number): number {
    const q = this.weigh(hashedFeatures(query, this.options))
    const {start, cols, values} = this.postings
    let count = touchedCount
    for (const [f, qw] of q) {
      for (let p = start[f]; p < start[f + 1]; p++) {
        const d = cols[p]
        if (out[d] === 0) touched[count++] = d
        out[d] += qw * values[p]
      }
    }
    return count
  }

  documentSimilarity(a: number, b: number): number {
    const {start, cols, values} = this.docs
    let i = start[a]
    let j = start[b]
    let dot = 0
    while (i < start[a + 1] && j < start[b + 1]) {
      if (cols[i] === cols[j]) dot += values[i++] * values[j++]
      else if (cols[i] < cols[j]) i++
      else j++
    }
    return dot
  }
}

/**
 * Adapter for a dense embedding model (e.g. a sentence encoder): brute-force cosine over the
 * document vectors. `embed` must return one vector per text, all of the same length.
 */
export class DenseEmbedder implements Embedder {
  constructor(readonly name: string, private readonly embed: (texts: readonly string[]) => Float32Array[]) {}

  fit(texts: readonly string[]): VectorIndex {
    const vectors = this.embed(texts).map(normalised)
    const embed = this.embed
    return {
      size: texts.length,
      similarities(query, out, touched, touchedCount) {
        const q = normalised(embed([query])[0])
        let count = touchedCount
        vectors.forEach((v, d) => {
          const s = Math.max(0, dot(q, v))
          if (s > 0) {
            if (out[d] === 0) touched[count++] = d
            out[d] += s
          }
        })
        return count
      },
      documentSimilarity: (a, b) => dot(vectors[a], vectors[b]),
    }
  }
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0
  for (let i = 0; i < a.length; i++) s += a[i] * b[i]
  return s
}

function normalised(v: Float32Array): Float32Array {
  const n = Math.sqrt(dot(v, v))
  return n > 0 ? v.map((x) => x / n) : v
}
