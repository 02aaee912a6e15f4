import type {Conversation} from '../../data/conversations/types.js'
import type {Config} from '../../space/types.js'
import {defaultConfig} from '../../space/space.js'
import {ActivationState, INHIBITION_WINNERS, lateralInhibition, type Seed} from './activation.js'
import {AccessLog, baseLevelActivation} from './actr.js'
import {Bm25Index} from './bm25.js'
import {DEFAULT_OVERRIDES, classifyQuery, routedConfig, type QueryType, type RoutedOverrides} from './classifier.js'
import {HashedTfidfEmbedder, type Embedder, type VectorIndex} from './embedder.js'
import {extractEntities, queryEntityKeys} from './entities.js'
import {fuse} from './fusion.js'
import {buildMemoryGraph, MS_PER_DAY, type MemoryGraph} from './graph.js'
import type {QueryWork} from './cost.js'
import {PprState} from './ppr.js'
import {RETRIEVAL_SPACE, resolveParams, validateRetrievalConfig, type RetrievalParams} from './space.js'
import {terms, words} from './tokenize.js'

/** Default BM25 parameters for the plain-BM25 baseline (Robertson & Zaragoza 2009). */
const BASELINE_BM25 = {k1: 1.2, b: 0.75} as const

/**
 * Speaker prior: a query that names a speaker ("What did Caroline research?") is about what that
 * speaker said, so their turns' fused scores are multiplied by 1 + speaker.boost. Speakers are
 * tracked in a 31-bit set; a conversation rarely has more than a handful.
 */
const MAX_SPEAKERS = 31
const NO_SPEAKER = 31
/** Shortest query word that counts as (a prefix of) a speaker's name. */
const MIN_NAME_PREFIX = 3
const CAPITALISED = /\b[A-Z][a-z]+/g

/** Content tiers (a reranker feature): chit-chat, ordinary, fact-bearing (names a date, number or name). */
const CONTENT_TIER = {chitChat: 0, ordinary: 1, factBearing: 2} as const
/** Turns with fewer content terms than this are chit-chat ("Thanks so much!"). */
const CHIT_CHAT_MAX_TERMS = 3

export interface EngineOptions {
  /** "Now" for ages and recency (ms since epoch). Default: the latest turn time in the conversation. */
  readonly referenceTime?: number
  /** The vector signal's embedder. Default: hashed word and character n-gram TF-IDF. */
  readonly embedder?: Embedder
  /** Accesses after creation (ACT-R presentations). Default: none. */
  readonly accessLog?: AccessLog
  /** Per-type overrides used when router.enabled is on. Default: DEFAULT_OVERRIDES. */
  readonly overrides?: RoutedOverrides
}

/** A ranking: turn indices best first, with their scores. */
export interface Ranked {
  readonly turns: number[]
  readonly scores: number[]
}

/**
 * Text a turn is indexed under: speaker, text, and the caption of a shared image, so that "what
 * did Caroline say about the mural" can match the speaker and the picture.
 */
export function indexedText(turn: {speaker: string; text: string; caption?: string}): string {
  const speaker = turn.speaker === '' ? '' : `${turn.speaker}: `
  return turn.caption === undefined ? `${speaker}${turn.text}` : `${speaker}${turn.text} [image: ${turn.caption}]`
}

/**
 * The retrieval engine over one conversation: BM25, vector similarity, spreading activation on
 * the memory graph, ACT-R recency, optional personalized PageRank, fused on the simplex. Pure:
 * no I/O and no clock; buffers are reused between queries (one query at a time per engine).
 */
export class RetrievalEngine {
  readonly turnIds: readonly string[]
  /** Distinct speakers (at most MAX_SPEAKERS), the speaker index of each turn, their name words. */
  readonly speakers: readonly string[]
  private readonly speakerOf: Int8Array
  private readonly speakerNames: readonly (readonly string[])[]
  readonly graph: MemoryGraph
  readonly bm25: Bm25Index
  readonly vectors: VectorIndex
  readonly referenceTime: number
  /** Age of each turn in days at the reference time. */
  readonly ageDays: Float64Array
  readonly contentTier: Uint8Array
  private readonly names: Set<string>
  private readonly accessLog: AccessLog | undefined
  private readonly overrides: RoutedOverrides
  private readonly paramCache = new WeakMap<Config, Map<QueryType | 'base', RetrievalParams>>()
  // Scratch buffers, one slot per turn (or node).
  private readonly bm25Score: Float32Array
  private readonly bm25Touched: Int32Array
  private readonly vecScore: Float32Array
  private readonly vecTouched: Int32Array
  private readonly mark: Uint8Array
  readonly graphScore: Float64Array
  readonly boost: Float64Array
  readonly penalty: Float64Array
  private readonly activation: ActivationState
  private readonly ppr: PprState
  private readonly candidates: Int32Array
  /** Per-turn scratch scores (fused or text-only), valid for the current candidates. */
  private readonly scratch: Float64Array
  private candidateCount = 0
  private bm25Count = 0
  private vecCount = 0
  private maxBm25 = 0
  private maxVec = 0
  private maxGraph = 0
  /**
   * Work of the last query: its inner-loop steps (BM25 and vector postings scanned, edges scanned
   * by spreading activation and by PageRank over all iterations, candidates fused), the
   * deterministic input of the latency cost model (cost.ts). Set by search(), run() (no fusion),
   * searchBm25() and searchVector() (their one signal's postings).
   */
  lastWork = 0
  private workBm25 = 0
  private workVector = 0
  private workActivation = 0
  private workPpr = 0
  private workFused = 0

  constructor(conversation: Conversation, options: EngineOptions = {}) {
    const turns = conversation.turns
    const T = turns.length
    this.turnIds = turns.map((t) => t.id)
    this.speakers = [...new Set(turns.map((t) => t.speaker))].slice(0, MAX_SPEAKERS)
    const speakerIndex = new Map(this.speakers.map((s, i) => [s, i]))
    // Speakers beyond the first MAX_SPEAKERS get no speaker prior.
    this.speakerOf = Int8Array.from(turns.map((t) => speakerIndex.get(t.speaker) ?? NO_SPEAKER))
    this.speakerNames = this.speakers.map((s) => words(s).filter((w) => w.length >= MIN_NAME_PREFIX))
    const texts = turns.map(indexedText)
    const termsOf = texts.map(terms)
    this.bm25 = new Bm25Index(termsOf)
    this.vectors = (options.embedder ?? new HashedTfidfEmbedder()).fit(texts)
    const sessionIndex = new Map(conversation.sessions.map((s, i) => [s.id, i]))
    const turnSession = Int32Array.from(turns.map((t) => sessionIndex.get(t.session) ?? 0))
    const rawTexts = turns.map((t) => (t.caption === undefined ? t.text : `${t.text} ${t.caption}`))
    const speakers = [...new Set(turns.map((t) => t.speaker))]
    const entitiesOf = extractEntities(rawTexts, termsOf, speakers)
    this.graph = buildMemoryGraph({
      turnSession,
      sessionTimes: conversation.sessions.map((s) => s.time),
      entitiesOf,
      similarity: (a, b) => this.vectors.documentSimilarity(a, b),
    })
    this.names = new Set(this.graph.entityKeys.filter((k) => k.startsWith('name:')).map((k) => k.slice(5)))
    const times = turns.map((t) => t.time).filter((t): t is number => t !== null)
    this.referenceTime = options.referenceTime ?? (times.length > 0 ? Math.max(...times) : 0)
    const oldest = times.length > 0 ? Math.min(...times) : this.referenceTime
    // An undated turn is treated as the oldest dated one: no evidence that it is recent.
    this.ageDays = Float64Array.from(
      turns.map((t) => Math.max(0, this.referenceTime - (t.time ?? oldest)) / MS_PER_DAY),
    )
    this.contentTier = Uint8Array.from(entitiesOf.map((ents, i) => tierOf(ents, termsOf[i].length, turns[i].speaker)))
    this.accessLog = options.accessLog
    this.overrides = options.overrides ?? DEFAULT_OVERRIDES
    this.bm25Score = new Float32Array(T)
    this.bm25Touched = new Int32Array(T)
    this.vecScore = new Float32Array(T)
    this.vecTouched = new Int32Array(T)
    this.mark = new Uint8Array(T)
    this.graphScore = new Float64Array(T)
    this.boost = new Float64Array(T)
    this.penalty = new Float64Array(T)
    this.activation = new ActivationState(this.graph.nodeCount)
    this.ppr = new PprState(this.graph.nodeCount)
    this.candidates = new Int32Array(T)
    this.scratch = new Float64Array(T)
  }

  get turnCount(): number {
    return this.turnIds.length
  }

  /** The query type by the rule-based classifier, with this conversation's name index. */
  classify(query: string): QueryType {
    return classifyQuery(query, {isName: (w) => this.names.has(w)})
  }

  /** The top k turns for a query under a configuration (validated once per config object). */
  search(query: string, config: Config, k: number): Ranked {
    const p = this.paramsFor(query, config)
    this.run(query, p)
    const scores = this.scratch
    const {bm25, vector, graph} = p.fusion
    // Inlined fuse(): this loop runs over every candidate of every query.
    const fb = this.maxBm25 > 0 ? bm25 / this.maxBm25 : 0
    const fv = this.maxVec > 0 ? vector / this.maxVec : 0
    const fg = this.maxGraph > 0 ? graph / this.maxGraph : 0
    const named = p.speakerBoost > 0 ? this.namedSpeakers(query) : 0
    for (let i = 0; i < this.candidateCount; i++) {
      const t = this.candidates[i]
      const fused = fb * this.bm25Score[t] + fv * this.vecScore[t] + fg * this.graphScore[t]
      scores[t] = (named & (1 << this.speakerOf[t])) !== 0 ? fused * (1 + p.speakerBoost) : fused
    }
    this.workFused = this.candidateCount
    this.lastWork += this.candidateCount
    return this.topCandidates(k, scores)
  }

  /**
   * Bit set of the speakers a query names: a capitalised query word equal to a word of the
   * speaker's name, or a prefix of it of at least MIN_NAME_PREFIX letters ("Mel" for Melanie).
   */
  namedSpeakers(query: string): number {
    let named = 0
    for (const m of query.matchAll(CAPITALISED)) {
      const w = m[0].toLowerCase()
      if (w.length < MIN_NAME_PREFIX) continue
      this.speakerNames.forEach((names, i) => {
        for (const n of names) if (n === w || n.startsWith(w)) named |= 1 << i
      })
    }
    return named
  }

  /** Plain BM25 over the same index (baseline). */
  searchBm25(query: string, k: number, k1: number = BASELINE_BM25.k1, b: number = BASELINE_BM25.b): Ranked {
    this.clear()
    this.bm25Count = this.bm25.score(this.bm25.queryTerms(terms(query)), k1, b, this.bm25Score, this.bm25Touched, 0)
    this.workBm25 = this.lastWork = this.bm25.lastPostings
    this.candidateCount = 0
    for (let i = 0; i < this.bm25Count; i++) this.candidates[this.candidateCount++] = this.bm25Touched[i]
    return this.topCandidates(k, this.bm25Score)
  }

  /** Vector similarity only (baseline). */
  searchVector(query: string, k: number): Ranked {
    this.clear()
    this.vecCount = this.vectors.similarities(query, this.vecScore, this.vecTouched, 0)
    this.workVector = this.lastWork = this.vectors.lastWork ?? this.vectors.size
    this.candidateCount = 0
    for (let i = 0; i < this.vecCount; i++) this.candidates[this.candidateCount++] = this.vecTouched[i]
    return this.topCandidates(k, this.vecScore)
  }

  /** Turn ids of a ranking. */
  ids(ranked: Ranked): string[] {
    return ranked.turns.map((t) => this.turnIds[t])
  }

  private lastParams!: RetrievalParams

  /** Resolved parameters for a query: the base config, or its routed variant when the router is on. */
  paramsFor(query: string, config: Config): RetrievalParams {
    let byType = this.paramCache.get(config)
    if (!byType) {
      validateRetrievalConfig(config, 'retrieval configuration')
      byType = new Map([['base', resolveParams(config)]])
      this.paramCache.set(config, byType)
    }
    const base = byType.get('base') as RetrievalParams
    if (!base.routerEnabled) return base
    const type = this.classify(query)
    let routed = byType.get(type)
    if (!routed) {
      const merged = routedConfig(config, type, this.overrides)
      validateRetrievalConfig(merged, `routed configuration for ${type} queries`)
      routed = resolveParams(merged)
      byType.set(type, routed)
    }
    return routed
  }

  /** Fused score of a turn after run(): weighted max-normalised BM25, vector and graph scores. */
  fused(t: number, p: RetrievalParams): number {
    return fuse(
      this.bm25Score[t],
      this.vecScore[t],
      this.graphScore[t],
      this.maxBm25,
      this.maxVec,
      this.maxGraph,
      p.fusion,
    )
  }

  /**
   * Computes every signal for a query into the scratch buffers and the candidate list (turns
   * touched by any signal). Public so the feature extractor can read the buffers.
   */
  run(query: string, p: RetrievalParams): void {
    this.clear()
    this.lastParams = p
    const T = this.turnCount
    this.bm25Count = this.bm25.score(this.bm25.queryTerms(terms(query)), p.k1, p.b, this.bm25Score, this.bm25Touched, 0)
    this.vecCount = this.vectors.similarities(query, this.vecScore, this.vecTouched, 0)
    this.workBm25 = this.bm25.lastPostings
    this.workVector = this.vectors.lastWork ?? this.vectors.size
    this.maxBm25 = maxOver(this.bm25Score, this.bm25Touched, this.bm25Count)
    this.maxVec = maxOver(this.vecScore, this.vecTouched, this.vecCount)
    // Candidates: the union of turns either text signal touched.
    this.candidateCount = 0
    for (let i = 0; i < this.bm25Count; i++) this.addCandidate(this.bm25Touched[i])
    for (let i = 0; i < this.vecCount; i++) this.addCandidate(this.vecTouched[i])
    const seeds = this.seeds(query, p)
    this.activation.spread(this.graph, seeds, {
      retention: p.retention,
      maxDepth: p.maxDepth,
      fanOut: p.fanOut,
      threshold: p.threshold,
      edgeWeights: p.edgeWeights,
    })
    this.workActivation = this.activation.lastEdges
    const act = this.activation.activation
    const activated: number[] = []
    for (let i = 0; i < this.activation.touchedCount; i++) {
      const v = this.activation.touched[i]
      if (v < T) {
        activated.push(v)
        // Every activated turn is a candidate, so clear() also resets its penalty and boost.
        this.addCandidate(v)
      }
    }
    lateralInhibition(act, activated, p.inhibition, INHIBITION_WINNERS, this.penalty)
    let maxAct = 0
    for (const t of activated) if (act[t] > maxAct) maxAct = act[t]
    const structural = this.graphScore
    const reached: number[] = []
    for (const t of activated) {
      if (act[t] > 0 && maxAct > 0) {
        structural[t] = (p.pprEnabled ? 1 - p.pprMix : 1) * (act[t] / maxAct)
        reached.push(t)
      }
    }
    if (p.pprEnabled) this.addPageRank(seeds, p, reached)
    this.mixRecency(reached, p)
    this.maxGraph = 0
    for (const t of reached) {
      this.addCandidate(t)
      if (this.graphScore[t] > this.maxGraph) this.maxGraph = this.graphScore[t]
    }
    this.lastWork = this.workBm25 + this.workVector + this.workActivation + this.workPpr
  }

  /** The last query's work by stage; its total is `lastWork`. */
  lastWorkBreakdown(): QueryWork {
    return {
      bm25Postings: this.workBm25,
      vectorPostings: this.workVector,
      activationEdges: this.workActivation,
      pprEdges: this.workPpr,
      candidatesFused: this.workFused,
    }
  }

  /** Seeds: the top text matches (by the fusion's text weights) and the entities the query names. */
  private seeds(query: string, p: RetrievalParams): Seed[] {
    const textWeights = {
      bm25: p.fusion.bm25 / (p.fusion.bm25 + p.fusion.vector),
      vector: p.fusion.vector / (p.fusion.bm25 + p.fusion.vector),
      graph: 0,
    }
    const fb = this.maxBm25 > 0 ? textWeights.bm25 / this.maxBm25 : 0
    const fv = this.maxVec > 0 ? textWeights.vector / this.maxVec : 0
    const text = this.scratch
    for (let i = 0; i < this.candidateCount; i++) {
      const t = this.candidates[i]
      text[t] = fb * this.bm25Score[t] + fv * this.vecScore[t]
    }
    const top = this.topCandidates(p.seedCount, text)
    const seeds: Seed[] = top.turns.map((t, i) => ({node: t, activation: top.scores[i]}))
    if (p.entitySeed > 0) {
      const base = this.graph.turnCount + this.graph.sessionCount
      for (const key of queryEntityKeys(query)) {
        const node = this.graph.entityNode.get(key)
        if (node !== undefined) seeds.push({node, activation: p.entitySeed * this.graph.entityIdf[node - base]})
      }
    }
    return seeds
  }

  private addPageRank(seeds: readonly Seed[], p: RetrievalParams, reached: number[]): void {
    this.ppr.reset()
    this.ppr.compute(this.graph, seeds, {
      teleport: p.teleport,
      iterations: p.pprIterations,
      fanOut: p.fanOut,
      edgeWeights: p.edgeWeights,
    })
    this.workPpr = this.ppr.lastEdges
    const T = this.turnCount
    let maxRank = 0
    for (const v of this.ppr.nodes) if (v < T && this.ppr.rank[v] > maxRank) maxRank = this.ppr.rank[v]
    if (maxRank <= 0) return
    for (const v of this.ppr.nodes) {
      if (v >= T) continue
      if (this.graphScore[v] === 0) reached.push(v)
      this.graphScore[v] += p.pprMix * (this.ppr.rank[v] / maxRank)
    }
  }

  /** graph = alpha * structural + (1 - alpha) * ACT-R recency, over the reached turns. */
  private mixRecency(reached: readonly number[], p: RetrievalParams): void {
    if (reached.length === 0) return
    const base = new Float64Array(reached.length)
    let maxBase = -Infinity
    reached.forEach((t, i) => {
      base[i] = this.baseLevel(t, p.decay)
      if (base[i] > maxBase) maxBase = base[i]
    })
    reached.forEach((t, i) => {
      const recency = Math.exp(base[i] - maxBase)
      this.boost[t] = (1 - p.alpha) * recency
      this.graphScore[t] = p.alpha * this.graphScore[t] + this.boost[t]
    })
  }

  /** ACT-R base-level activation of a turn: its creation plus any logged accesses. */
  baseLevel(t: number, decay: number): number {
    const accesses = this.accessLog?.accessesBefore(t, this.referenceTime) ?? []
    if (accesses.length === 0) return baseLevelActivation([this.ageDays[t]], decay)
    return baseLevelActivation([this.ageDays[t], ...accesses.map((a) => (this.referenceTime - a) / MS_PER_DAY)], decay)
  }

  /** Number of logged accesses and days since the last one (the age if none) of a turn. */
  accessStats(t: number): {count: number; lastDays: number} {
    const accesses = this.accessLog?.accessesBefore(t, this.referenceTime) ?? []
    if (accesses.length === 0) return {count: 0, lastDays: this.ageDays[t]}
    return {count: accesses.length, lastDays: (this.referenceTime - Math.max(...accesses)) / MS_PER_DAY}
  }

  /** Per-node activation state of the last run (hops, path masks, fan-in). */
  get activationState(): ActivationState {
    return this.activation
  }

  /** Candidates of the last run, for feature extraction. */
  candidateTurns(): Int32Array {
    return this.candidates.subarray(0, this.candidateCount)
  }

  /** Raw BM25 and vector scores of a turn from the last run. */
  textScores(t: number): {bm25: number; vector: number} {
    return {bm25: this.bm25Score[t], vector: this.vecScore[t]}
  }

  private addCandidate(t: number): void {
    if (this.mark[t] === 0) {
      this.mark[t] = 1
      this.candidates[this.candidateCount++] = t
    }
  }

  /** Clears the buffers a previous query touched. */
  private clear(): void {
    for (let i = 0; i < this.bm25Count; i++) this.bm25Score[this.bm25Touched[i]] = 0
    for (let i = 0; i < this.vecCount; i++) this.vecScore[this.vecTouched[i]] = 0
    for (let i = 0; i < this.candidateCount; i++) {
      const t = this.candidates[i]
      this.mark[t] = 0
      this.graphScore[t] = 0
      this.boost[t] = 0
      this.penalty[t] = 0
    }
    // Turns reached only by the graph are candidates too, so the loop above covers them.
    this.activation.reset()
    this.ppr.reset()
    this.bm25Count = 0
    this.vecCount = 0
    this.candidateCount = 0
    this.maxBm25 = this.maxVec = this.maxGraph = 0
    this.lastWork = this.workBm25 = this.workVector = this.workActivation = this.workPpr = this.workFused = 0
  }

  /** The k best candidates by `score[t]` (ties: lower turn index first), via a size-k min-heap. */
  private topCandidates(k: number, score: Float32Array | Float64Array): Ranked {
    const heap = new TopK(k)
    for (let i = 0; i < this.candidateCount; i++) {
      const t = this.candidates[i]
      const s = score[t]
      if (heap.admits(t, s)) heap.offer(t, s)
    }
    return heap.sorted()
  }
}

/** The default retrieval configuration (from the one parameter table). */
export function defaultRetrievalConfig(): Config {
  return defaultConfig(RETRIEVAL_SPACE)
}

function tierOf(entities: readonly string[], termCount: number, speaker: string): number {
  if (termCount < CHIT_CHAT_MAX_TERMS) return CONTENT_TIER.chitChat
  const own = `name:${speaker.toLowerCase()}`
  const fact = entities.some(
    (e) => (e.startsWith('date:') || e.startsWith('num:') || e.startsWith('name:')) && e !== own,
  )
  return fact ? CONTENT_TIER.factBearing : CONTENT_TIER.ordinary
}

function maxOver(values: Float32Array, touched: Int32Array, count: number): number {
  let max = 0
  for (let i = 0; i < count; i++) if (values[touched[i]] > max) max = values[touched[i]]
  return max
}

/** A bounded min-heap keeping the k best (item, score) pairs; ties prefer the lower item. */
class TopK {
  private readonly items: number[] = []
  private readonly scores: number[] = []

  constructor(private readonly k: number) {}

  /** True if (a, sa) ranks below (b, sb). */
  private static worse(sa: number, a: number, sb: number, b: number): boolean {
    return sa < sb || (sa === sb && a > b)
  }

  /** Whether (item, score) would enter the heap (a cheap test before offer). */
  admits(item: number, score: number): boolean {
    return this.items.length < this.k || TopK.worse(this.scores[0], this.items[0], score, item)
  }

  offer(item: number, score: number): void {
    if (this.k <= 0) return
    if (this.items.length < this.k) {
      this.items.push(item)
      this.scores.push(score)
      this.up(this.items.length - 1)
    } else if (TopK.worse(this.scores[0], this.items[0], score, item)) {
      this.items[0] = item
      this.scores[0] = score
      this.down(0)
    }
  }

  sorted(): Ranked {
    const order = this.items
      .map((_, i) => i)
      .sort((x, y) => this.scores[y] - this.scores[x] || this.items[x] - this.items[y])
    return {turns: order.map((i) => this.items[i]), scores: order.map((i) => this.scores[i])}
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!TopK.worse(this.scores[i], this.items[i], this.scores[parent], this.items[parent])) break
      this.swap(i, parent)
      i = parent
    }
  }

  private down(i: number): void {
    const n = this.items.length
    for (;;) {
      const l = 2 * i + 1
      const r = l + 1
      let m = i
      if (l < n && TopK.worse(this.scores[l], this.items[l], this.scores[m], this.items[m])) m = l
      if (r < n && TopK.worse(this.scores[r], this.items[r], this.scores[m], this.items[m])) m = r
      if (m === i) break
      this.swap(i, m)
      i = m
    }
  }

  private swap(a: number, b: number): void {
    ;[this.items[a], this.items[b]] = [this.items[b], this.items[a]]
    ;[this.scores[a], this.scores[b]] = [this.scores[b], this.scores[a]]
  }
}
