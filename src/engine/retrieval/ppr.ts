import type {MemoryGraph} from './graph.js'
import type {Seed} from './activation.js'

/**
 * Personalized PageRank (Haveliwala 2002; used for memory retrieval in HippoRAG, Gutierrez et al.
 * 2024): r = c s + (1 - c) P^T r, with s the seeds' activations normalised to sum 1, c the teleport
 * probability and P the random walk over each node's `fanOut` strongest edges, weighted by
 * edgeTypeWeight[type] * edgeWeight. Mass at a node with no usable edge teleports back to s.
 * Computed by a fixed number of power iterations started from s, sparsely: only nodes holding
 * mass are visited, and entries below PPR_PRUNE are dropped (their total is bounded by the count
 * of dropped entries times PPR_PRUNE, negligible for ranking).
 */
export interface PprParams {
  readonly teleport: number
  readonly iterations: number
  readonly fanOut: number
  readonly edgeWeights: ArrayLike<number>
}

const PPR_PRUNE = 1e-7

export class PprState {
  rank: Float64Array
  private next: Float64Array
  /** Nodes with nonzero rank after compute(). */
  nodes: number[] = []
  /**
   * Edge visits of the last compute(), over all iterations: each node holding mass scans its
   * fan-out edges once for the out-weight and, if that is positive, once more to pass mass on.
   * The engine's work count.
   */
  lastEdges = 0

  constructor(readonly nodeCount: number) {
    this.rank = new Float64Array(nodeCount)
    this.next = new Float64Array(nodeCount)
  }

  reset(): void {
    for (const u of this.nodes) this.rank[u] = 0
    this.nodes = []
  }

  compute(graph: MemoryGraph, seeds: readonly Seed[], params: PprParams): void {
    const {start, target, type, weight} = graph
    this.lastEdges = 0
    let total = 0
    for (const s of seeds) if (s.activation > 0) total += s.activation
    if (total <= 0) return
    const seedNodes: number[] = []
    const seedMass = new Map<number, number>()
    for (const s of seeds) {
      if (!(s.activation > 0)) continue
      if (!seedMass.has(s.node)) seedNodes.push(s.node)
      seedMass.set(s.node, (seedMass.get(s.node) ?? 0) + s.activation / total)
    }
    let current = seedNodes.slice()
    for (const u of seedNodes) this.rank[u] = seedMass.get(u) as number
    const c = params.teleport
    let scanned = 0
    for (let it = 0; it < params.iterations; it++) {
      const touched: number[] = []
      const add = (v: number, m: number): void => {
        if (this.next[v] === 0) touched.push(v)
        this.next[v] += m
      }
      let dangling = 0
      for (const u of current) {
        const mass = this.rank[u] * (1 - c)
        const end = Math.min(start[u + 1], start[u] + params.fanOut)
        scanned += end - start[u]
        let out = 0
        for (let e = start[u]; e < end; e++) out += params.edgeWeights[type[e]] * weight[e]
        if (out <= 0) {
          dangling += mass
          continue
        }
        scanned += end - start[u]
        for (let e = start[u]; e < end; e++) {
          const w = params.edgeWeights[type[e]] * weight[e]
          if (w > 0) add(target[e], (mass * w) / out)
        }
      }
      // Teleport (c of the mass) and the dangling mass both return to the seeds.
      for (const u of seedNodes) add(u, (c + dangling) * (seedMass.get(u) as number))
      for (const u of current) this.rank[u] = 0
      const kept: number[] = []
      for (const v of touched) {
        const m = this.next[v]
        this.next[v] = 0
        if (m >= PPR_PRUNE) {
          this.rank[v] = m
          kept.push(v)
        }
      }
      current = kept
    }
    this.nodes = current
    this.lastEdges = scanned
  }
}
