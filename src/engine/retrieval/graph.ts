import {GrowableArray} from './vocabulary.js'

/**
 * The memory graph: turn, session and entity nodes joined by five kinds of typed, weighted edges.
 * Nodes are numbered turns first [0, T), then sessions [T, T+S), then entities [T+S, N).
 * Adjacency is CSR with each node's edges sorted by weight, strongest first, so a fan-out limit
 * of F means "the F strongest edges". Every edge is stored in both directions.
 */
export const EDGE_TYPES = ['episodic', 'semantic', 'temporal', 'hierarchical', 'associative'] as const
type EdgeType = (typeof EDGE_TYPES)[number]
export const EPISODIC = 0
const SEMANTIC = 1
const TEMPORAL = 2
export const HIERARCHICAL = 3
const ASSOCIATIVE = 4

/**
 * Construction constants. These shape which edges exist; how much each kind of edge counts is
 * tuned at query time (edge.* parameters), so these need only be reasonable, not optimal.
 */
const GRAPH_CONSTANTS = {
  /** Semantic edges: each turn links to at most this many content-nearest turns. */
  semanticNeighbours: 5,
  /** Candidates for those neighbours: turns sharing an entity, the strongest this many by shared idf. */
  semanticCandidates: 20,
  /** An entity in more turns than this is too common to propose semantic neighbours. */
  semanticMaxEntityTurns: 50,
  /** Minimum cosine similarity for a semantic edge. */
  semanticMinCosine: 0.1,
  /** Temporal edges join each session to this many following sessions. */
  temporalNeighbours: 2,
  /** Temporal edge weight halves for every this many days between two sessions. */
  temporalHalfLifeDays: 14,
  /** Temporal edge weight when a session has no date. */
  temporalUnknownWeight: 0.5,
  /** Associative edges: each entity links to at most this many co-occurring entities. */
  associativeNeighbours: 5,
} as const

export const MS_PER_DAY = 86_400_000

export interface GraphInput {
  /** Session index (0-based, conversation order) of each turn; turns are in conversation order. */
  readonly turnSession: Int32Array
  /** Time of each session (ms since epoch) or null. */
  readonly sessionTimes: readonly (number | null)[]
  /** Entity keys of each turn. */
  readonly entitiesOf: readonly (readonly string[])[]
  /** Content similarity of two turns (cosine of their vectors). */
  readonly similarity: (a: number, b: number) => number
}

export interface MemoryGraph {
  readonly turnCount: number
  readonly sessionCount: number
  readonly entityCount: number
  readonly nodeCount: number
  readonly start: Int32Array
  readonly target: Int32Array
  readonly type: Uint8Array
  readonly weight: Float32Array
  /** Entity key -> node id. */
  readonly entityNode: ReadonlyMap<string, number>
  readonly entityKeys: readonly string[]
  /** Normalised idf of each entity (1 for the rarest), indexed by entity number (node - T - S). */
  readonly entityIdf: Float32Array
  /** Number of edges of each type (both directions counted), for reports. */
  readonly edgeCounts: Record<EdgeType, number>
}

/** Collects directed edges, then packs them into sorted CSR. */
class EdgeBuilder {
  readonly from = new GrowableArray()
  readonly to = new GrowableArray()
  readonly kind = new GrowableArray()
  readonly weight = new GrowableArray()

  /** Adds u -> v and v -> u. */
  both(u: number, v: number, kind: number, weight: number): void {
    this.one(u, v, kind, weight)
    this.one(v, u, kind, weight)
  }

  one(u: number, v: number, kind: number, weight: number): void {
    this.from.push(u)
    this.to.push(v)
    this.kind.push(kind)
    this.weight.push(weight)
  }
}

export function buildMemoryGraph(input: GraphInput): MemoryGraph {
  const T = input.turnSession.length
  const S = input.sessionTimes.length
  const entityNode = new Map<string, number>()
  const entityKeys: string[] = []
  const mentions: number[][] = []
  input.entitiesOf.forEach((keys, turn) => {
    for (const key of keys) {
      let e = entityNode.get(key)
      if (e === undefined) {
        e = entityKeys.length
        entityNode.set(key, e)
        entityKeys.push(key)
        mentions.push([])
      }
      const list = mentions[e]
      if (list[list.length - 1] !== turn) list.push(turn)
    }
  })
  const E = entityKeys.length
  for (const [key, e] of entityNode) entityNode.set(key, T + S + e)
  const entityIdf = entityIdfs(mentions, T)
  const edges = new EdgeBuilder()
  addEpisodic(edges, input.turnSession)
  addHierarchical(edges, input.turnSession, T, mentions, entityIdf, T + S)
  addSemantic(edges, input, mentions, entityIdf)
  addTemporal(edges, input.sessionTimes, T)
  addAssociative(edges, input.entitiesOf, entityNode, mentions, T + S)
  return pack(edges, T, S, E, entityNode, entityKeys, entityIdf)
}

/** Episodic: each turn to the next turn of its session. */
function addEpisodic(edges: EdgeBuilder, turnSession: Int32Array): void {
  for (let t = 0; t + 1 < turnSession.length; t++)
    if (turnSession[t] === turnSession[t + 1]) edges.both(t, t + 1, EPISODIC, 1)
}

/** Hierarchical: session to each of its turns (weight 1); entity to each turn mentioning it (weight = its idf). */
function addHierarchical(
  edges: EdgeBuilder,
  turnSession: Int32Array,
  T: number,
  mentions: number[][],
  entityIdf: Float32Array,
  entityBase: number,
): void {
  for (let t = 0; t < turnSession.length; t++) edges.both(T + turnSession[t], t, HIERARCHICAL, 1)
  mentions.forEach((turns, e) => {
    for (const t of turns) edges.both(entityBase + e, t, HIERARCHICAL, entityIdf[e])
  })
}

/**
 * Semantic: each turn to its content-nearest turns among those sharing a not-too-common entity,
 * weight = cosine similarity. Candidates are ranked by the idf mass of shared entities first so
 * the number of cosines per turn stays bounded.
 */
function addSemantic(edges: EdgeBuilder, input: GraphInput, mentions: number[][], entityIdf: Float32Array): void {
  const C = GRAPH_CONSTANTS
  const T = input.turnSession.length
  const shared = new Float64Array(T)
  const touched: number[] = []
  const linked = new Set<number>()
  const entityIds = input.entitiesOf.map(() => [] as number[])
  mentions.forEach((turns, e) => {
    if (turns.length <= C.semanticMaxEntityTurns) for (const t of turns) entityIds[t].push(e)
  })
  for (let t = 0; t < T; t++) {
    for (const e of entityIds[t]) {
      for (const u of mentions[e]) {
        if (u === t) continue
        if (shared[u] === 0) touched.push(u)
        shared[u] += entityIdf[e]
      }
    }
    const candidates = touched.sort((a, b) => shared[b] - shared[a] || a - b).slice(0, C.semanticCandidates)
    const scored = candidates.map((u) => ({u, cos: input.similarity(t, u)})).filter((x) => x.cos >= C.semanticMinCosine)
    scored.sort((a, b) => b.cos - a.cos || a.u - b.u)
    for (const {u, cos} of scored.slice(0, C.semanticNeighbours)) {
      const key = Math.min(t, u) * T + Math.max(t, u)
      if (linked.has(key)) continue
      linked.add(key)
      edges.both(t, u, SEMANTIC, cos)
    }
    for (const u of touched) shared[u] = 0
    touched.length = 0
  }
}

/** Temporal: each session to its next few sessions in time, weight halving per half-life of days apart. */
function addTemporal(edges: EdgeBuilder, sessionTimes: readonly (number | null)[], T: number): void {
  const C = GRAPH_CONSTANTS
  // Sessions in time order; undated sessions keep their conversation position (stable sort, compared as equal).
  const order = sessionTimes.map((_, i) => i)
  const dated = order
    .filter((i) => sessionTimes[i] !== null)
    .sort((a, b) => (sessionTimes[a] as number) - (sessionTimes[b] as number) || a - b)
  let k = 0
  const sorted = order.map((i) => (sessionTimes[i] === null ? i : dated[k++]))
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j <= i + C.temporalNeighbours && j < sorted.length; j++) {
      const a = sessionTimes[sorted[i]]
      const b = sessionTimes[sorted[j]]
      const weight =
        a === null || b === null
          ? C.temporalUnknownWeight
          : Math.pow(2, -Math.abs(b - a) / MS_PER_DAY / C.temporalHalfLifeDays)
      edges.both(T + sorted[i], T + sorted[j], TEMPORAL, weight)
    }
  }
}

/**
 * Associative: entities that co-occur in turns, weight = co-occurrences / sqrt(df_a df_b) (the
 * cosine of their mention sets), each entity keeping its strongest few.
 */
function addAssociative(
  edges: EdgeBuilder,
  entitiesOf: readonly (readonly string[])[],
  entityNode: ReadonlyMap<string, number>,
  mentions: number[][],
  base: number,
): void {
  const cooc = new Map<number, number>()
  const E = mentions.length
  for (const keys of entitiesOf) {
    const ids = [...new Set(keys.map((k) => (entityNode.get(k) as number) - base))].sort((a, b) => a - b)
    for (let i = 0; i < ids.length; i++)
      for (let j = i + 1; j < ids.length; j++) {
        const key = ids[i] * E + ids[j]
        cooc.set(key, (cooc.get(key) ?? 0) + 1)
      }
  }
  const best: Array<Array<{other: number; w: number}>> = mentions.map(() => [])
  for (const [key, count] of cooc) {
    const a = Math.floor(key / E)
    const b = key % E
    const w = count / Math.sqrt(mentions[a].length * mentions[b].length)
    best[a].push({other: b, w})
    best[b].push({other: a, w})
  }
  const kept = new Set<number>()
  best.forEach((list, a) => {
    list.sort((x, y) => y.w - x.w || x.other - y.other)
    for (const {other, w} of list.slice(0, GRAPH_CONSTANTS.associativeNeighbours)) {
      const key = Math.min(a, other) * E + Math.max(a, other)
      if (kept.has(key)) continue
      kept.add(key)
      edges.both(base + a, base + other, ASSOCIATIVE, w)
    }
  })
}

/** Idf of each entity over turns, ln(1 + T / df), scaled so the rarest entity has 1. */
function entityIdfs(mentions: number[][], T: number): Float32Array {
  const idf = new Float32Array(mentions.length)
  let max = 0
  mentions.forEach((turns, e) => {
    idf[e] = Math.log(1 + T / turns.length)
    if (idf[e] > max) max = idf[e]
  })
  if (max > 0) for (let e = 0; e < idf.length; e++) idf[e] /= max
  return idf
}

/**
 * A graph from an explicit edge list (each edge stored in both directions), for tests and for
 * callers that build their own memory structure. Entity maps are left empty.
 */
export function graphFromEdges(
  turns: number,
  sessions: number,
  entities: number,
  list: ReadonlyArray<readonly [number, number, number, number]>,
): MemoryGraph {
  const edges = new EdgeBuilder()
  for (const [u, v, kind, w] of list) edges.both(u, v, kind, w)
  return pack(edges, turns, sessions, entities, new Map(), [], new Float32Array(entities).fill(1))
}

function pack(
  edges: EdgeBuilder,
  T: number,
  S: number,
  E: number,
  entityNode: Map<string, number>,
  entityKeys: string[],
  entityIdf: Float32Array,
): MemoryGraph {
  const N = T + S + E
  const from = edges.from.view()
  const to = edges.to.view()
  const kind = edges.kind.view()
  const w = edges.weight.view()
  const m = from.length
  const start = new Int32Array(N + 1)
  for (let i = 0; i < m; i++) start[from[i] + 1]++
  for (let u = 0; u < N; u++) start[u + 1] += start[u]
  const fill = start.slice(0, N)
  const order = new Int32Array(m)
  for (let i = 0; i < m; i++) order[fill[from[i]]++] = i
  const target = new Int32Array(m)
  const type = new Uint8Array(m)
  const weight = new Float32Array(m)
  const counts = Object.fromEntries(EDGE_TYPES.map((t) => [t, 0])) as Record<EdgeType, number>
  for (let u = 0; u < N; u++) {
    // Strongest first; ties by target id so the order (and any fan-out cut) is deterministic.
    const row = Array.from(order.subarray(start[u], start[u + 1])).sort((a, b) => w[b] - w[a] || to[a] - to[b])
    row.forEach((e, k) => {
      target[start[u] + k] = to[e]
      type[start[u] + k] = kind[e]
      weight[start[u] + k] = w[e]
      counts[EDGE_TYPES[kind[e]]]++
    })
  }
  return {
    turnCount: T,
    sessionCount: S,
    entityCount: E,
    nodeCount: N,
    start,
    target,
    type,
    weight,
    entityNode,
    entityKeys,
    entityIdf,
    edgeCounts: counts,
  }
}
