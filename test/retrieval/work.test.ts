import {describe, expect, it} from 'vitest'
import {ActivationState} from '../../src/engine/retrieval/activation.js'
import {Bm25Index} from '../../src/engine/retrieval/bm25.js'
import {
  FIXED_QUERY_OVERHEAD_MS,
  NS_PER_WORK_UNIT,
  estimatedLatencyMs,
  fitLatencyModel,
  totalWork,
} from '../../src/engine/retrieval/cost.js'
import {DenseEmbedder, HashedTfidfEmbedder} from '../../src/engine/retrieval/embedder.js'
import {RetrievalEngine, defaultRetrievalConfig} from '../../src/engine/retrieval/engine.js'
import {EPISODIC, buildMemoryGraph, graphFromEdges} from '../../src/engine/retrieval/graph.js'
import {PprState} from '../../src/engine/retrieval/ppr.js'
import type {Config} from '../../src/space/types.js'
import {conversation} from './tiny-conversation.js'

const ZERO_EDGE_WEIGHTS = [0, 0, 0, 0, 0]

describe('work counts of each signal, by hand', () => {
  it('BM25 counts the postings of each distinct known query term', () => {
    // appl in d0, d1; banana in d0, d2; cherri in d1.
    const index = new Bm25Index([['appl', 'banana'], ['appl', 'appl', 'cherri'], ['banana']])
    const run = (terms: string[]): number => {
      index.score(index.queryTerms(terms), 1.2, 0.75, new Float32Array(3), new Int32Array(3), 0)
      return index.lastPostings
    }
    expect(run(['appl', 'banana'])).toBe(4)
    // A repeated term counts once, an unknown term scans nothing.
    expect(run(['appl', 'appl', 'zebra'])).toBe(2)
    expect(run(['zebra'])).toBe(0)
  })

  it('the hashed vector index counts the postings of the query features', () => {
    const index = new HashedTfidfEmbedder().fit(['zebra', 'zebra kite', 'moon pillow'])
    const run = (query: string): number => {
      index.similarities(query, new Float32Array(3), new Int32Array(3), 0)
      return index.lastWork as number
    }
    // "zebra": the stem feature and the 3-, 4- and 5-grams of "<zebra>" (5 + 4 + 3): 13 features, each in documents 0 and 1.
    expect(run('zebra')).toBe(26)
    // "moon": 1 + (4 + 3 + 2) features in document 2; the bigram "zebra moon" is in no document.
    expect(run('zebra moon')).toBe(36)
  })

  it('a dense (brute-force) index counts the documents it compares', () => {
    const index = new DenseEmbedder('ones', (texts) => texts.map(() => Float32Array.from([1, 1]))).fit([
      'a',
      'b',
      'c',
      'd',
    ])
    index.similarities('x', new Float32Array(4), new Int32Array(4), 0)
    expect(index.lastWork).toBe(4)
  })

  describe('spreading activation on a three-turn session', () => {
    // Turns 0-1-2 in one session (node 3): episodic 0-1, 1-2; hierarchical 3-0, 3-1, 3-2.
    // Degrees: node 0: 2, node 1: 3, node 2: 2, node 3: 3.
    const graph = buildMemoryGraph({
      turnSession: Int32Array.from([0, 0, 0]),
      sessionTimes: [0],
      entitiesOf: [[], [], []],
      similarity: () => 0,
    })
    const params = {retention: 0.5, maxDepth: 2, fanOut: 16, threshold: 0.01, edgeWeights: [0.6, 0, 0, 0.3, 0]}
    const spread = (p: Partial<typeof params>): number => {
      const state = new ActivationState(graph.nodeCount)
      state.spread(graph, [{node: 0, activation: 1}], {...params, ...p})
      return state.lastEdges
    }

    it('counts the fan-out edges of every node that fired', () => {
      // Hop 1: the seed fires (2 edges) and reaches turn 1 (.3) and the session (.15); hop 2: both fire (3 + 3).
      expect(spread({})).toBe(8)
      expect(spread({maxDepth: 1})).toBe(2)
      // Threshold .2: the session (.15) does not fire.
      expect(spread({threshold: 0.2})).toBe(5)
      expect(spread({maxDepth: 1, fanOut: 1})).toBe(1)
    })

    it('counts edges the loop visits even when they pass nothing', () => {
      expect(spread({edgeWeights: ZERO_EDGE_WEIGHTS})).toBe(2)
    })
  })

  describe('personalized PageRank on the path 0 - 1 - 2', () => {
    const graph = graphFromEdges(3, 0, 0, [
      [0, 1, EPISODIC, 1],
      [1, 2, EPISODIC, 1],
    ])

    it('counts two passes over the edges of every node holding mass, over all iterations', () => {
      const state = new PprState(3)
      state.compute(graph, [{node: 0, activation: 1}], {
        teleport: 0.5,
        iterations: 2,
        fanOut: 8,
        edgeWeights: [1, 0, 0, 0, 0],
      })
      // Iteration 1: node 0 (1 edge, twice) = 2; iteration 2: node 1 (2 edges, twice) + node 0 = 6.
      expect(state.lastEdges).toBe(8)
    })

    it('counts one pass when a node has no usable edge, and nothing without seeds', () => {
      const state = new PprState(3)
      state.compute(graph, [{node: 0, activation: 1}], {
        teleport: 0.5,
        iterations: 5,
        fanOut: 8,
        edgeWeights: ZERO_EDGE_WEIGHTS,
      })
      expect(state.lastEdges).toBe(5)
      state.reset()
      state.compute(graph, [], {teleport: 0.5, iterations: 5, fanOut: 8, edgeWeights: ZERO_EDGE_WEIGHTS})
      expect(state.lastEdges).toBe(0)
    })
  })
})

describe("the engine's work per query", () => {
  // Every document gets the same positive vector, so the vector signal touches all six turns.
  const engine = new RetrievalEngine(conversation, {
    embedder: new DenseEmbedder('flat', (texts) => texts.map(() => Float32Array.from([1, 0]))),
  })
  // One seed, no entity seeds, edges that pass nothing: activation scans only the seed's fan-out.
  const quiet: Config = {
    ...defaultRetrievalConfig(),
    'seeds.count': 1,
    'seeds.entity': 0,
    'edge.episodic': 0,
    'edge.semantic': 0,
    'edge.temporal': 0,
    'edge.hierarchical': 0,
    'edge.associative': 0,
  }
  const fanOutOf = (node: number, fanOut: number): number =>
    Math.min(engine.graph.start[node + 1] - engine.graph.start[node], fanOut)

  it('sums BM25 postings, documents compared, seed fan-out and candidates fused', () => {
    const ranked = engine.search('Porto harbor', quiet, 3)
    const seed = ranked.turns[0]
    expect(engine.turnIds[seed]).toBe('D1:1')
    const work = engine.lastWorkBreakdown()
    // porto: D1:1, D1:2; harbor: D1:1.
    expect(work.bm25Postings).toBe(3)
    expect(work.vectorPostings).toBe(6)
    expect(work.activationEdges).toBe(fanOutOf(seed, quiet['spread.fan_out'] as number))
    expect(work.activationEdges).toBeGreaterThan(0)
    expect(work.pprEdges).toBe(0)
    expect(work.candidatesFused).toBe(6)
    expect(engine.lastWork).toBe(3 + 6 + work.activationEdges + 6)
    expect(engine.lastWork).toBe(totalWork(work))
  })

  it('adds PageRank edge visits over all iterations when PageRank is on', () => {
    const config: Config = {...quiet, 'ppr.enabled': true, 'ppr.iterations': 3}
    const seed = engine.search('Porto harbor', config, 3).turns[0]
    const work = engine.lastWorkBreakdown()
    const seedFan = fanOutOf(seed, config['spread.fan_out'] as number)
    // With no usable edge all mass stays on the seed: one pass over its fan-out per iteration.
    expect(work.pprEdges).toBe(3 * seedFan)
    expect(engine.lastWork).toBe(totalWork(engine.lastWorkBreakdown()))
  })

  it('is deterministic, and the baselines count their one signal', () => {
    const config = defaultRetrievalConfig()
    engine.search('What job did Cleo get?', config, 5)
    const first = engine.lastWork
    engine.search('Porto harbor', config, 5)
    engine.search('What job did Cleo get?', config, 5)
    expect(engine.lastWork).toBe(first)
    engine.searchBm25('Porto harbor', 3)
    expect(engine.lastWork).toBe(3)
    expect(engine.lastWorkBreakdown()).toEqual({
      bm25Postings: 3,
      vectorPostings: 0,
      activationEdges: 0,
      pprEdges: 0,
      candidatesFused: 0,
    })
    engine.searchVector('Porto harbor', 3)
    expect(engine.lastWork).toBe(6)
  })
})

describe('the latency cost model', () => {
  it('is linear in work with the committed constants', () => {
    expect(NS_PER_WORK_UNIT).toBeGreaterThan(0)
    expect(FIXED_QUERY_OVERHEAD_MS).toBeGreaterThan(0)
    expect(estimatedLatencyMs(0)).toBe(FIXED_QUERY_OVERHEAD_MS)
    expect(estimatedLatencyMs(2e6) - estimatedLatencyMs(1e6)).toBeCloseTo(NS_PER_WORK_UNIT, 9)
  })

  it('fits a least-squares line with its R^2, as computed by hand', () => {
    // Exactly ms = work * 5 ns + 0.1 ms.
    const exact = fitLatencyModel([0, 1e5, 2e5], [0.1, 0.6, 1.1])!
    expect(exact.nsPerWorkUnit).toBeCloseTo(5, 9)
    expect(exact.fixedOverheadMs).toBeCloseTo(0.1, 12)
    expect(exact.rSquared).toBeCloseTo(1, 12)
    // x = 0, 1, 2 (units of 1e6), y = 0, 2, 1: slope .5 ms per 1e6 = .5 ns, intercept .5,
    // SS_tot = 2, SS_res = .25 + 1 + .25 = 1.5, R^2 = .25.
    const noisy = fitLatencyModel([0, 1e6, 2e6], [0, 2, 1])!
    expect(noisy.nsPerWorkUnit).toBeCloseTo(0.5, 9)
    expect(noisy.fixedOverheadMs).toBeCloseTo(0.5, 12)
    expect(noisy.rSquared).toBeCloseTo(0.25, 12)
    expect(fitLatencyModel([5, 5], [1, 2])).toBeNull()
    expect(() => fitLatencyModel([1, 2], [1])).toThrow(RangeError)
  })
})
