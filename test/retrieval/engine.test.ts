import {describe, expect, it} from 'vitest'
import {pathTypes} from '../../src/engine/retrieval/activation.js'
import {AccessLog} from '../../src/engine/retrieval/actr.js'
import {classifyQuery, routedConfig, DEFAULT_OVERRIDES} from '../../src/engine/retrieval/classifier.js'
import {RetrievalEngine, defaultRetrievalConfig, indexedText} from '../../src/engine/retrieval/engine.js'
import {CANDIDATE_FEATURES, candidateFeatures} from '../../src/engine/retrieval/features.js'
import {RETRIEVAL_SPACE} from '../../src/engine/retrieval/space.js'
import {checkSpace, configKeys} from '../../src/space/space.js'
import {InputError} from '../../src/util/errors.js'

import {conversation, DAY, T0} from './tiny-conversation.js'

describe('the retrieval space', () => {
  it('is a valid table of about twenty parameters with KT_ env vars and a floored fusion simplex', () => {
    checkSpace(RETRIEVAL_SPACE)
    expect(configKeys(RETRIEVAL_SPACE).length).toBeGreaterThanOrEqual(20)
    for (const p of RETRIEVAL_SPACE.params) {
      if (p.kind === 'simplex') {
        expect(p.floor).toBe(0.05)
        expect(p.members.map((m) => m.name)).toEqual(['fusion.bm25', 'fusion.vector', 'fusion.graph'])
        for (const m of p.members) expect(m.env).toMatch(/^KT_/)
      } else expect(p.env).toMatch(/^KT_/)
    }
  })
})

describe('the engine on a tiny conversation', () => {
  const engine = new RetrievalEngine(conversation)
  const config = defaultRetrievalConfig()

  it('indexes speaker, text and image caption', () => {
    expect(indexedText({speaker: 'Ann', text: 'hi', caption: 'a dog'})).toBe('Ann: hi [image: a dog]')
  })

  it('measures ages from the latest turn by default', () => {
    expect(engine.referenceTime).toBe(T0 + 10 * DAY)
    expect(Array.from(engine.ageDays)).toEqual([10, 10, 10, 0, 0, 0])
    expect(new RetrievalEngine(conversation, {referenceTime: T0 + 20 * DAY}).ageDays[0]).toBe(20)
  })

  it('extracts entities into the graph', () => {
    expect(engine.graph.entityNode.has('name:cleo')).toBe(true)
    expect(engine.graph.entityNode.has('name:porto')).toBe(true)
    expect(engine.graph.sessionCount).toBe(2)
  })

  it('reaches the second fact of a chain through the graph', () => {
    // "sister" is only in D1:1; the job is only in D2:2, which shares the entity Cleo with D1:1.
    const q = "What job did Ann's sister get?"
    expect(engine.ids(engine.searchBm25(q, 3))).toEqual(['D1:1', 'D1:3', 'D2:2'])
    // Graph-dominated fusion, spreading along semantic edges only, from the single best text match.
    const semantic = {
      ...config,
      'fusion.bm25': 0.05,
      'fusion.vector': 0.05,
      'fusion.graph': 0.9,
      'speaker.boost': 0,
      'seeds.count': 1,
      'seeds.entity': 0,
      'spread.inhibition': 0,
      'actr.alpha': 1,
      'edge.episodic': 0,
      'edge.semantic': 1,
      'edge.temporal': 0,
      'edge.hierarchical': 0,
      'edge.associative': 0,
    }
    const rows = candidateFeatures(engine, q, semantic, 3)
    expect(rows[0].id).toBe('D2:2')
    const f = rows[0].features
    expect(f[CANDIDATE_FEATURES.indexOf('activation')]).toBeGreaterThan(0)
    expect(f[CANDIDATE_FEATURES.indexOf('hops')]).toBe(1)
    expect(pathTypes(f[CANDIDATE_FEATURES.indexOf('path_edge_types')])).toEqual(['semantic'])
  })

  it('applies the speaker prior to turns of a named speaker (also by a name prefix)', () => {
    expect(engine.namedSpeakers('What did Ann say?')).toBe(1)
    expect(engine.namedSpeakers('What did Bo say?')).toBe(0) // "Bo" is shorter than a name prefix may be
    expect(engine.namedSpeakers('Did An say it?')).toBe(0)
    const both = new RetrievalEngine({
      ...conversation,
      turns: conversation.turns.map((t) => (t.speaker === 'Bo' ? {...t, speaker: 'Bonita'} : t)),
    })
    expect(both.namedSpeakers('Did Ann and Bon talk?')).toBe(3)
  })

  it('gives feature rows in CANDIDATE_FEATURES order', () => {
    expect(CANDIDATE_FEATURES).toHaveLength(12)
    const rows = candidateFeatures(engine, 'pottery class', config, 6)
    const top = rows[0]
    expect(top.id).toBe('D2:1')
    const f = (name: (typeof CANDIDATE_FEATURES)[number]): number => top.features[CANDIDATE_FEATURES.indexOf(name)]
    const bm25 = engine.searchBm25('pottery class', 1, config['bm25.k1'] as number, config['bm25.b'] as number)
    expect(f('bm25')).toBeCloseTo(bm25.scores[0], 5)
    expect(f('hops')).toBe(0) // a seed
    expect(f('age_days')).toBe(0)
    expect(f('access_count')).toBe(0)
    expect(f('last_access_days')).toBe(0)
    expect(f('content_tier')).toBe(1)
    const chitChat = candidateFeatures(engine, 'thanks so much', config, 6).find((r) => r.id === 'D1:3') as {
      features: Float64Array
    }
    expect(chitChat.features[CANDIDATE_FEATURES.indexOf('content_tier')]).toBe(0)
    for (const r of rows) expect(r.features).toHaveLength(12)
  })

  it('is deterministic across repeated and interleaved queries (buffers are cleared)', () => {
    const first = engine.search('Porto harbor', config, 6)
    engine.search('chemist lab water', config, 6)
    engine.searchBm25('pottery', 6)
    expect(engine.search('Porto harbor', config, 6)).toEqual(first)
  })

  it('rejects an invalid configuration with a one-line error', () => {
    expect(() => engine.search('x', {...config, 'fusion.graph': 0.5}, 3)).toThrow(InputError)
    expect(() => engine.search('x', {...config, 'spread.max_depth': 9}, 3)).toThrow(
      /spread\.max_depth: expected a number in \[1, 6\], got 9/,
    )
  })
})

describe('ACT-R accesses', () => {
  it('an access counts as a presentation: it lifts recency and shows in the features', () => {
    const log = new AccessLog(conversation.turns.length)
    log.record(0, T0 + 10 * DAY - DAY / 2)
    log.record(0, T0 + 20 * DAY) // after the reference time: ignored
    const engine = new RetrievalEngine(conversation, {accessLog: log})
    expect(engine.accessStats(0)).toEqual({count: 1, lastDays: 0.5})
    // B = ln(10^-d + 0.5^-d) with d = .5
    expect(engine.baseLevel(0, 0.5)).toBeCloseTo(Math.log(Math.pow(10, -0.5) + Math.pow(0.5, -0.5)), 12)
    expect(engine.baseLevel(1, 0.5)).toBeCloseTo(Math.log(Math.pow(10, -0.5)), 12)
  })
})

describe('query classifier and routing', () => {
  const names = {isName: (w: string) => w === 'ann' || w === 'bo'}

  it('assigns the five types by its rules', () => {
    expect(classifyQuery('When did Ann move to Porto?', names)).toBe('temporal')
    expect(classifyQuery('What year did Bo graduate?', names)).toBe('temporal')
    expect(classifyQuery('What do Ann and Bo both like?', names)).toBe('multi_hop')
    expect(classifyQuery('Would Ann enjoy a concert?', names)).toBe('multi_hop')
    expect(classifyQuery('Who is Ann dating?', names)).toBe('entity_lookup')
    expect(classifyQuery('What kind of music does Bo like?', names)).toBe('exploratory')
    expect(classifyQuery('What books has Ann read?', names)).toBe('exploratory')
    expect(classifyQuery('What has Ann painted?', names)).toBe('exploratory')
    expect(classifyQuery('What did Ann buy in May?', names)).toBe('simple_factual')
    expect(classifyQuery('', names)).toBe('simple_factual')
  })

  it('routes a query to its type overrides when the router is on', () => {
    const base = defaultRetrievalConfig()
    expect(routedConfig(base, 'temporal')).toEqual({...base, ...DEFAULT_OVERRIDES.temporal})
    const engine = new RetrievalEngine(conversation)
    const routed = {...base, 'router.enabled': true}
    expect(engine.paramsFor('When did Cleo get hired?', routed).edgeWeights[2]).toBe(
      DEFAULT_OVERRIDES.temporal?.['edge.temporal'],
    )
    expect(engine.paramsFor('When did Cleo get hired?', base).edgeWeights[2]).toBe(base['edge.temporal'])
  })
})
