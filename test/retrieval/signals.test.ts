import {describe, expect, it} from 'vitest'
import {ActivationState, UNREACHED, lateralInhibition, pathTypes} from '../../src/engine/retrieval/activation.js'
import {baseLevelActivation, recencyFromBaseLevels, ACTR_MIN_AGE_DAYS} from '../../src/engine/retrieval/actr.js'
import {Bm25Index, bm25Idf} from '../../src/engine/retrieval/bm25.js'
import {fuse, projectFlooredSimplex, sampleFlooredSimplex} from '../../src/engine/retrieval/fusion.js'
import {EPISODIC, HIERARCHICAL, buildMemoryGraph, graphFromEdges} from '../../src/engine/retrieval/graph.js'
import {PprState} from '../../src/engine/retrieval/ppr.js'
import {Rng} from '../../src/util/rng.js'

const ZERO_EDGE_WEIGHTS = [0, 0, 0, 0, 0]

describe('BM25', () => {
  // d0 = apple banana, d1 = apple apple cherry, d2 = banana; N = 3, avgdl = 2.
  const index = new Bm25Index([['appl', 'banana'], ['appl', 'appl', 'cherri'], ['banana']])

  it('uses the Lucene idf ln(1 + (N - df + .5)/(df + .5))', () => {
    expect(bm25Idf(3, 2)).toBeCloseTo(Math.log(1.6), 12)
    expect(index.idf[index.vocabulary.lookup('cherri')]).toBeCloseTo(Math.log(1 + 2.5 / 1.5), 12)
  })

  it('scores documents as computed by hand (k1 1.2, b .75)', () => {
    const out = new Float32Array(3)
    const touched = new Int32Array(3)
    const count = index.score(index.queryTerms(['appl']), 1.2, 0.75, out, touched, 0)
    expect(count).toBe(2)
    // d0: tf 1, dl 2 = avgdl: idf * 1 * 2.2 / (1 + 1.2) = idf
    expect(out[0]).toBeCloseTo(Math.log(1.6), 5)
    // d1: tf 2, dl 3: norm = 1.2 * (.25 + .75 * 1.5) = 1.65; 2 * 2.2 / 3.65
    expect(out[1]).toBeCloseTo(Math.log(1.6) * (4.4 / 3.65), 5)
    expect(out[2]).toBe(0)
  })

  it('b = 0 ignores document length', () => {
    const out = new Float32Array(3)
    index.score(index.queryTerms(['banana']), 1.2, 0, out, new Int32Array(3), 0)
    expect(out[0]).toBeCloseTo(out[2], 6)
  })

  it('counts a repeated query term once and ignores unknown terms', () => {
    expect(index.queryTerms(['appl', 'appl', 'zebra'])).toEqual([index.vocabulary.lookup('appl')])
  })
})

describe('spreading activation on a three-turn session', () => {
  // Turns 0-1-2 in one session (node 3): episodic 0-1, 1-2; hierarchical 3-0, 3-1, 3-2; all weight 1.
  const graph = buildMemoryGraph({
    turnSession: Int32Array.from([0, 0, 0]),
    sessionTimes: [0],
    entitiesOf: [[], [], []],
    similarity: () => 0,
  })
  const edgeWeights = [0.6, 0, 0, 0.3, 0] // episodic .6, hierarchical .3
  const params = {retention: 0.5, maxDepth: 2, fanOut: 16, threshold: 0.01, edgeWeights}

  it('builds the expected edges', () => {
    expect(graph.nodeCount).toBe(4)
    expect(graph.edgeCounts.episodic).toBe(4)
    expect(graph.edgeCounts.hierarchical).toBe(6)
  })

  it('spreads two hops exactly as computed by hand', () => {
    const state = new ActivationState(graph.nodeCount)
    state.spread(graph, [{node: 0, activation: 1}], params)
    // hop 1: t1 = 1*.5*.6 = .3, s = 1*.5*.3 = .15
    // hop 2: t1 fires .3 -> t0 .09, t2 .09, s .045; s fires .15 -> t0, t1, t2 .0225 each
    // The seed's own starting activation (1) is not counted, only what it receives back.
    expect(state.activation[0]).toBeCloseTo(0.09 + 0.0225, 12)
    expect(state.activation[1]).toBeCloseTo(0.3 + 0.0225, 12)
    expect(state.activation[2]).toBeCloseTo(0.09 + 0.0225, 12)
    expect(state.activation[3]).toBeCloseTo(0.15 + 0.045, 12)
    expect(Array.from(state.hops)).toEqual([0, 1, 2, 1])
    expect(Array.from(state.fanIn)).toEqual([2, 2, 2, 2])
    expect(pathTypes(state.pathMask[2])).toEqual(['episodic'])
    expect(pathTypes(state.pathMask[3])).toEqual(['hierarchical'])
  })

  it('depth 1 stops after one hop; a high threshold stops firing', () => {
    const state = new ActivationState(graph.nodeCount)
    state.spread(graph, [{node: 0, activation: 1}], {...params, maxDepth: 1})
    expect(state.activation[2]).toBe(0)
    expect(state.hops[2]).toBe(UNREACHED)
    state.reset()
    state.spread(graph, [{node: 0, activation: 1}], {...params, threshold: 0.2})
    // t1 (.3) fires, s (.15) does not.
    expect(state.activation[2]).toBeCloseTo(0.09, 12)
    expect(state.activation[0]).toBeCloseTo(0.09, 12)
  })

  it('fan-out 1 passes along only the strongest edge (ties: lower target id)', () => {
    const state = new ActivationState(graph.nodeCount)
    state.spread(graph, [{node: 0, activation: 1}], {...params, maxDepth: 1, fanOut: 1})
    expect(state.activation[1]).toBeCloseTo(0.3, 12)
    expect(state.activation[3]).toBe(0)
  })

  it('reset clears everything a query touched', () => {
    const state = new ActivationState(graph.nodeCount)
    state.spread(graph, [{node: 0, activation: 1}], params)
    state.reset()
    expect(Array.from(state.activation)).toEqual([0, 0, 0, 0])
    expect(Array.from(state.hops)).toEqual([UNREACHED, UNREACHED, UNREACHED, UNREACHED])
    state.spread(graph, [{node: 0, activation: 1}], params)
    expect(state.activation[1]).toBeCloseTo(0.3225, 12)
  })
})

describe('lateral inhibition', () => {
  it('subtracts strength x the gap below the mean of the leading turns', () => {
    const activation = Float64Array.from([1, 0.5, 0.1])
    const penalty = new Float64Array(3)
    const mean = lateralInhibition(activation, [0, 1, 2], 0.5, 2, penalty)
    expect(mean).toBeCloseTo(0.75, 12)
    expect(Array.from(penalty).map((x) => +x.toFixed(12))).toEqual([0, 0.125, 0.1])
    expect(Array.from(activation).map((x) => +x.toFixed(12))).toEqual([1, 0.375, 0])
  })

  it('strength 0 changes nothing', () => {
    const activation = Float64Array.from([1, 0.5])
    lateralInhibition(activation, [0, 1], 0, 2, new Float64Array(2))
    expect(Array.from(activation)).toEqual([1, 0.5])
  })
})

describe('ACT-R base-level activation', () => {
  it('is ln(sum t^-d)', () => {
    // ages 1 and 4 days, d = .5: 1 + 1/2
    expect(baseLevelActivation([1, 4], 0.5)).toBeCloseTo(Math.log(1.5), 12)
    expect(baseLevelActivation([9], 0.5)).toBeCloseTo(Math.log(1 / 3), 12)
  })

  it('clamps ages at the minimum', () => {
    expect(baseLevelActivation([0], 0.5)).toBeCloseTo(-0.5 * Math.log(ACTR_MIN_AGE_DAYS), 12)
  })

  it('recency is (t_min / t)^d with one presentation each', () => {
    const b = Float64Array.from([baseLevelActivation([1], 0.5), baseLevelActivation([4], 0.5)])
    const out = new Float64Array(2)
    recencyFromBaseLevels(b, [0, 1], out)
    expect(out[0]).toBeCloseTo(1, 12)
    expect(out[1]).toBeCloseTo(0.5, 12)
  })
})

describe('personalized PageRank on a three-node path a - b - c', () => {
  const graph = graphFromEdges(3, 0, 0, [
    [0, 1, EPISODIC, 1],
    [1, 2, EPISODIC, 1],
  ])
  const edgeWeights = [1, 0, 0, 0, 0]

  it('two iterations match the hand computation', () => {
    const state = new PprState(3)
    state.compute(graph, [{node: 0, activation: 1}], {teleport: 0.5, iterations: 2, fanOut: 8, edgeWeights})
    // r1 = [.5, .5, 0]; r2 = [.5 + .125, .25, .125]
    expect(state.rank[0]).toBeCloseTo(0.625, 12)
    expect(state.rank[1]).toBeCloseTo(0.25, 12)
    expect(state.rank[2]).toBeCloseTo(0.125, 12)
  })

  it('converges to the fixed point (7/12, 1/3, 1/12)', () => {
    const state = new PprState(3)
    state.compute(graph, [{node: 0, activation: 3}], {teleport: 0.5, iterations: 60, fanOut: 8, edgeWeights})
    expect(state.rank[0]).toBeCloseTo(7 / 12, 9)
    expect(state.rank[1]).toBeCloseTo(1 / 3, 9)
    expect(state.rank[2]).toBeCloseTo(1 / 12, 9)
  })

  it('sends the mass of a node without usable edges back to the seeds', () => {
    const state = new PprState(3)
    state.compute(graph, [{node: 0, activation: 1}], {
      teleport: 0.5,
      iterations: 5,
      fanOut: 8,
      edgeWeights: ZERO_EDGE_WEIGHTS,
    })
    expect(state.rank[0]).toBeCloseTo(1, 12)
    expect(state.rank[1]).toBe(0)
  })
})

describe('fusion on the floored simplex', () => {
  it('mixes max-normalised scores', () => {
    // b = 2/4, v = .3/.6, g = 0/0 -> .5 * .5 + .3 * .5 + .2 * 0
    expect(fuse(2, 0.3, 0, 4, 0.6, 0, {bm25: 0.5, vector: 0.3, graph: 0.2})).toBeCloseTo(0.4, 12)
    expect(fuse(4, 0.6, 1, 4, 0.6, 2, {bm25: 0.5, vector: 0.3, graph: 0.2})).toBeCloseTo(0.9, 12)
  })

  it('projects onto the floored simplex', () => {
    expect(projectFlooredSimplex([0.5, 0.3, 0.2], 0.05)).toEqual([0.5, 0.3, 0.2].map((x) => expect.closeTo(x, 12)))
    const p = projectFlooredSimplex([1, 0, 0], 0.05)
    expect(p[0]).toBeCloseTo(0.9, 12)
    expect(p[1]).toBeCloseTo(0.05, 12)
    expect(p[2]).toBeCloseTo(0.05, 12)
    const q = projectFlooredSimplex([2, 2, -5], 0.05)
    expect(q.reduce((s, x) => s + x, 0)).toBeCloseTo(1, 12)
    expect(q[0]).toBeCloseTo(0.475, 12)
  })

  it('samples stay on the floored simplex', () => {
    const rng = new Rng(7)
    for (let i = 0; i < 50; i++) {
      const w = sampleFlooredSimplex(rng, 3, 0.05)
      expect(w.reduce((s, x) => s + x, 0)).toBeCloseTo(1, 12)
      for (const x of w) expect(x).toBeGreaterThanOrEqual(0.05 - 1e-12)
    }
  })
})

describe('graph construction', () => {
  it('links entity mentions hierarchically and co-occurring entities associatively', () => {
    const graph = buildMemoryGraph({
      turnSession: Int32Array.from([0, 0, 1]),
      sessionTimes: [0, 14 * 86_400_000],
      entitiesOf: [['name:ann', 'kw:pottery'], [], ['name:ann', 'kw:pottery']],
      similarity: (a, b) => (a + b === 2 ? 0.5 : 0),
    })
    const ann = graph.entityNode.get('name:ann') as number
    const pottery = graph.entityNode.get('kw:pottery') as number
    expect(ann).toBe(5)
    const neighbours = (u: number, type: number): number[] => {
      const out: number[] = []
      for (let e = graph.start[u]; e < graph.start[u + 1]; e++) if (graph.type[e] === type) out.push(graph.target[e])
      return out.sort()
    }
    expect(neighbours(ann, HIERARCHICAL)).toEqual([0, 2])
    expect(neighbours(ann, 4)).toEqual([pottery])
    // Semantic: turns 0 and 2 share entities and have cosine .5.
    expect(neighbours(0, 1)).toEqual([2])
    // Temporal: the two sessions, 14 days (one half-life) apart, weight .5.
    const s0 = 3
    for (let e = graph.start[s0]; e < graph.start[s0 + 1]; e++)
      if (graph.type[e] === 2) expect(graph.weight[e]).toBeCloseTo(0.5, 6)
    expect(graph.edgeCounts.temporal).toBe(2)
  })
})
