import {RETRIEVAL_STOP_WORDS, stem, words} from './tokenize.js'
import {buildCsr, type Csr} from './vocabulary.js'

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
   * Inner-loop steps of the last similarities() call, for the engine's work count (cost.ts): the
   * postings scanned by an inverted index, the documents compared by a brute-force index. An
   * index that leaves it out is counted as brute force (`size` steps a query).
   */
  readonly lastWork?: number
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
  /**
   * Features in more than this share of documents are left out of the inverted index (they stay
   * in the vectors' norms): they carry little idf weight yet have the longest posting lists, so
   * skipping them bounds query time on large corpora.
   */
  readonly maxDfFraction: number
}

/**
 * Defaults. maxDfFraction 0.1 cut query time at 10,000 turns by about half while vector-only
 * recall@10 on the LoCoMo sample moved from .625 to .621. The character n-gram range 3..5 follows fastText's subword features (Bojanowski et
 * al. 2017 use 3..6); 2^20 buckets keep collisions rare for corpora of this size. The family
 * weights balance the many character features of a word against its one stem feature.
 */
const DEFAULT_HASHED_TFIDF: HashedTfidfOptions = {
  wordWeight: 1,
  bigramWeight: 0.5,
  charWeight: 0.25,
  charMin: 3,
  charMax: 5,
  hashBits: 20,
  maxDfFraction: 0.1,
}

/** Features are never pruned from the index below this document frequency (small corpora keep all). */
const MIN_PRUNED_DF = 50

/** Hashed word and character n-gram TF-IDF vectors (the "hashing trick", Weinberger et al. 2009). */
export class HashedTfidfEmbedder implements Embedder {
  readonly name = 'hashed-tfidf'
  constructor(readonly options: HashedTfidfOptions = DEFAULT_HASHED_TFIDF) {}

  fit(texts: readonly string[]): VectorIndex {
    return new HashedTfidfIndex(texts, this.options)
  }
}

/** FNV-1a constants (Fowler, Noll, Vo), as in util/rng hashString, applied incrementally. */
const FNV_OFFSET = 0x811c9dc5
const FNV_PRIME = 0x01000193

function fnvStep(h: number, code: number): number {
  return Math.imul(h ^ code, FNV_PRIME) >>> 0
}

function fnvString(h: number, text: string): number {
  for (let i = 0; i < text.length; i++) h = fnvStep(h, text.charCodeAt(i))
  return h
}

/** Hash states after the family prefixes, so a feature hashes as FNV-1a of "prefix + text". */
const WORD_PREFIX = fnvString(FNV_OFFSET, 'w:')
const BIGRAM_PREFIX = fnvString(FNV_OFFSET, 'b:')
const CHAR_PREFIX = fnvString(FNV_OFFSET, 'c:')
const WORD_START = '<'.charCodeAt(0)
const WORD_END = '>'.charCodeAt(0)
const SPACE = ' '.charCodeAt(0)

/**
 * Hashed features of a text, as parallel arrays sorted by bucket with duplicates merged: each
 * bucket's occurrence count and family weight (on a collision between families, the larger).
 * Features: `w:<stem>`, `b:<stem> <stem>` for adjacent content words, and `c:<n-gram>` of each
 * content word padded as `<word>`. Hashing runs over characters without building n-gram strings.
 */
interface HashedFeatures {
  readonly buckets: Int32Array
  readonly counts: Float64Array
  readonly weights: Float64Array
  readonly length: number
}

/** Feature families, coded in the low bits of a sort key (bucket << FAMILY_BITS | family). */
const FAMILY_WORD = 0
const FAMILY_BIGRAM = 1
const FAMILY_CHAR = 2
const FAMILY_BITS = 2
const FAMILY_MASK = (1 << FAMILY_BITS) - 1

function hashedFeatures(text: string, options: HashedTfidfOptions): HashedFeatures {
  const mask = (1 << options.hashBits) - 1
  // Keys bucket << 2 | family, so one numeric sort groups a bucket's occurrences.
  const keys: number[] = []
  let previous: string | undefined
  for (const w of words(text)) {
    if (RETRIEVAL_STOP_WORDS.has(w)) {
      previous = undefined
      continue
    }
    const s = stem(w)
    keys.push(((fnvString(WORD_PREFIX, s) & mask) << FAMILY_BITS) | FAMILY_WORD)
    if (previous !== undefined)
      keys.push(
        ((fnvString(fnvStep(fnvString(BIGRAM_PREFIX, previous), SPACE), s) & mask) << FAMILY_BITS) | FAMILY_BIGRAM,
      )
    previous = s
    // Padded word "<w>": position 0 is '<', position length + 1 is '>'.
    const padded = w.length + 2
    for (let i = 0; i + options.charMin <= padded; i++) {
      let h = CHAR_PREFIX
      for (let j = i; j < padded && j - i < options.charMax; j++) {
        h = fnvStep(h, j === 0 ? WORD_START : j === padded - 1 ? WORD_END : w.charCodeAt(j - 1))
        if (j - i + 1 >= options.charMin) keys.push(((h & mask) << FAMILY_BITS) | FAMILY_CHAR)
      }
    }
  }
  return mergeFeatures(Int32Array.from(keys).sort(), [options.wordWeight, options.bigramWeight, options.charWeight])
}

/** Merges sorted keys into (bucket, count, weight) with the largest family weight per bucket. */
function mergeFeatures(sorted: Int32Array, familyWeight: readonly number[]): HashedFeatures {
  const n = sorted.length
  const buckets = new Int32Array(n)
  const counts = new Float64Array(n)
  const weights = new Float64Array(n)
  let m = -1
  for (let k = 0; k < n; k++) {
    const bucket = sorted[k] >> FAMILY_BITS
    const weight = familyWeight[sorted[k] & FAMILY_MASK]
    if (m >= 0 && buckets[m] === bucket) {
      counts[m]++
      if (weight > weights[m]) weights[m] = weight
    } else {
      m++
      buckets[m] = bucket
      counts[m] = 1
      weights[m] = weight
    }
  }
  return {buckets, counts, weights, length: m + 1}
}

/**
 * Feature weight = family weight x (1 + ln tf) x idf, idf = ln((1 + N) / (1 + df)) + 1 (the
 * smoothed idf of scikit-learn's TfidfVectorizer), vectors L2-normalised so dot = cosine.
 */
class HashedTfidfIndex implements VectorIndex {
  readonly size: number
  /** Postings the last similarities() call scanned. */
  lastWork = 0
  private readonly featureId = new Map<number, number>()
  private readonly idf: Float64Array
  /** Document vectors by row (feature ids ascending), for document-to-document similarity. */
  private readonly docs: Csr
  /** Inverted index: feature -> (doc, weight). */
  private readonly postings: Csr
  // Query scratch: feature ids and weights of the current query.
  private queryFeatures = new Int32Array(256)
  private queryWeights = new Float64Array(256)

  constructor(
    texts: readonly string[],
    private readonly options: HashedTfidfOptions,
  ) {
    this.size = texts.length
    const perDoc = texts.map((t) => hashedFeatures(t, options))
    const df: number[] = []
    let nnz = 0
    for (const feats of perDoc) {
      for (let k = 0; k < feats.length; k++) {
        let id = this.featureId.get(feats.buckets[k])
        if (id === undefined) {
          id = df.length
          this.featureId.set(feats.buckets[k], id)
          df.push(0)
        }
        df[id]++
      }
      nnz += feats.length
    }
    this.idf = new Float64Array(df.length)
    for (let f = 0; f < df.length; f++) this.idf[f] = Math.log((1 + texts.length) / (1 + df[f])) + 1
    const rowOf = new Int32Array(nnz)
    const colOf = new Int32Array(nnz)
    const valOf = new Float64Array(nnz)
    let at = 0
    const ids = new Int32Array(1024)
    const ws = new Float64Array(1024)
    perDoc.forEach((feats, d) => {
      const bufIds = feats.length <= ids.length ? ids : new Int32Array(feats.length)
      const bufWs = feats.length <= ws.length ? ws : new Float64Array(feats.length)
      const n = this.weigh(feats, bufIds, bufWs)
      for (let k = 0; k < n; k++) {
        rowOf[at] = d
        colOf[at] = bufIds[k]
        valOf[at] = bufWs[k]
        at++
      }
    })
    this.docs = buildCsr(texts.length, rowOf.subarray(0, at), colOf.subarray(0, at), valOf.subarray(0, at))
    const maxDf = Math.max(MIN_PRUNED_DF, Math.floor(options.maxDfFraction * texts.length))
    let kept = 0
    for (let i = 0; i < at; i++) {
      if (df[colOf[i]] > maxDf) continue
      rowOf[kept] = rowOf[i]
      colOf[kept] = colOf[i]
      valOf[kept] = valOf[i]
      kept++
    }
    this.postings = buildCsr(df.length, colOf.subarray(0, kept), rowOf.subarray(0, kept), valOf.subarray(0, kept))
  }

  /**
   * Writes the known features of a text with their L2-normalised weights into `ids`/`out`
   * (feature ids ascending within a document, since features are interned in first-seen order
   * and sorted here); returns how many.
   */
  private weigh(feats: HashedFeatures, ids: Int32Array, out: Float64Array): number {
    let n = 0
    let norm = 0
    for (let k = 0; k < feats.length; k++) {
      const f = this.featureId.get(feats.buckets[k])
      if (f === undefined) continue
      const w = feats.weights[k] * (1 + Math.log(feats.counts[k])) * this.idf[f]
      ids[n] = f
      out[n] = w
      norm += w * w
      n++
    }
    sortPairs(ids, out, n)
    norm = Math.sqrt(norm)
    if (norm > 0) for (let k = 0; k < n; k++) out[k] /= norm
    return n
  }

  similarities(query: string, out: Float32Array, touched: Int32Array, touchedCount: number): number {
    const feats = hashedFeatures(query, this.options)
    if (feats.length > this.queryFeatures.length) {
      this.queryFeatures = new Int32Array(feats.length)
      this.queryWeights = new Float64Array(feats.length)
    }
    const n = this.weigh(feats, this.queryFeatures, this.queryWeights)
    const {start, cols, values} = this.postings
    let count = touchedCount
    let scanned = 0
    for (let k = 0; k < n; k++) {
      const f = this.queryFeatures[k]
      const qw = this.queryWeights[k]
      scanned += start[f + 1] - start[f]
      for (let p = start[f]; p < start[f + 1]; p++) {
        const d = cols[p]
        if (out[d] === 0) touched[count++] = d
        out[d] += qw * values[p]
      }
    }
    this.lastWork = scanned
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

/** Sorts the first n (id, value) pairs by id (insertion sort: rows are short). */
function sortPairs(ids: Int32Array, values: Float64Array, n: number): void {
  for (let i = 1; i < n; i++) {
    const id = ids[i]
    const v = values[i]
    let j = i - 1
    while (j >= 0 && ids[j] > id) {
      ids[j + 1] = ids[j]
      values[j + 1] = values[j]
      j--
    }
    ids[j + 1] = id
    values[j + 1] = v
  }
}

/**
 * Adapter for a dense embedding model (e.g. a sentence encoder): brute-force cosine over the
 * document vectors. `embed` must return one vector per text, all of the same length.
 */
export class DenseEmbedder implements Embedder {
  constructor(
    readonly name: string,
    private readonly embed: (texts: readonly string[]) => Float32Array[],
  ) {}

  fit(texts: readonly string[]): VectorIndex {
    const vectors = this.embed(texts).map(normalised)
    const embed = this.embed
    return {
      size: texts.length,
      // Brute force has no postings: a query compares itself with every document.
      lastWork: texts.length,
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
