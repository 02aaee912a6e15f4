import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {defaultRetrievalConfig, RetrievalEngine} from '../../src/engine/retrieval/engine.js'
import {candidateFeatures} from '../../src/engine/retrieval/features.js'
import {CANDIDATE_FEATURES} from '../../src/engine/retrieval/space.js'
import {engineReranker} from '../../src/rank/apply.js'
import {MODEL_FORMAT, MODEL_VERSION, type SavedModel} from '../../src/rank/model.js'
import {layoutNames, layoutOf, maxNormalised, rankNormalised, rerankerInputs} from '../../src/rank/query-features.js'
import {deploy} from '../../src/rank/deploy.js'
import {loadReranker, rerankedSearch} from '../../src/rank/search.js'
import {conversation} from '../retrieval/tiny-conversation.js'

/** A saved model of the given trees over the given columns (metrics only what deploy needs). */
function model(featureNames: string[], trees: SavedModel['trees']): SavedModel {
  return {
    format: MODEL_FORMAT,
    version: MODEL_VERSION,
    feature_names: featureNames,
    params: {},
    metrics: {valid: {'ndcg@10': 0.5}},
    data: {},
    trees,
  }
}

const column = (name: string): number => CANDIDATE_FEATURES.indexOf(name as (typeof CANDIDATE_FEATURES)[number])

/** One split: x[feature] <= threshold scores `low`, else `high`. */
function stump(feature: number, threshold: number, low: number, high: number): SavedModel['trees'][number] {
  return {split_feature: [feature], threshold: [threshold], left: [~0], right: [~1], gain: [1], leaf_value: [low, high]}
}

describe('query-level columns', () => {
  it('divide by the largest absolute value, and rank largest first with tied ranks averaged', () => {
    expect(Array.from(maxNormalised(Float64Array.from([2, -4, 1])))).toEqual([0.5, -1, 0.25])
    expect(Array.from(maxNormalised(Float64Array.from([0, 0])))).toEqual([0, 0])
    // 5 -> rank 0; the two 3s share ranks 1 and 2 -> 1.5; 1 -> rank 3; scaled by n - 1 = 3
    expect(Array.from(rankNormalised(Float64Array.from([3, 5, 1, 3])))).toEqual([0.5, 0, 1, 0.5])
    expect(Array.from(rankNormalised(Float64Array.from([7])))).toEqual([0])
  })

  it('name the layouts a model may have and reject any other with the file and field', () => {
    expect(layoutOf(layoutNames({queryFeatures: ['qmax', 'qrank'], engineScore: true}), 'm.json')).toEqual({
      queryFeatures: ['qmax', 'qrank'],
      engineScore: true,
    })
    expect(layoutNames({queryFeatures: ['qrank'], engineScore: false}).slice(12, 14)).toEqual([
      'bm25@qrank',
      'vector@qrank',
    ])
    expect(() => layoutOf(['bm25', 'vector'], 'm.json')).toThrow(
      /^m.json field feature_names: expected the engine's features \(bm25, vector, .*got bm25, vector$/,
    )
    // the right names in another order are another model's columns
    expect(() => layoutOf([...CANDIDATE_FEATURES].reverse(), 'm.json')).toThrow(/^m.json field feature_names: expected/)
    expect(() => layoutOf([...CANDIDATE_FEATURES, 'engine_score', 'bm25@qmax'], 'm.json')).toThrow(
      /^m.json field feature_names: expected/,
    )
  })
})

describe("rerankedSearch: a hand-built model reorders the engine's candidates", () => {
  const engine = new RetrievalEngine(conversation)
  const config = defaultRetrievalConfig()

  it("one tree on age_days puts the recent session first, keeping the engine's order within each side", () => {
    const query = "Where does Ann's sister live?"
    // the engine's own order (precondition of the hand computation below)
    expect(engine.ids(engine.search(query, config, 6))).toEqual(['D1:1', 'D1:3', 'D2:2', 'D1:2', 'D2:1', 'D2:3'])
    // session 2 is ten days after session 1: its turns are 0 days old, session 1's are 10
    const recentFirst = engineReranker(model([...CANDIDATE_FEATURES], [stump(column('age_days'), 5, 1, 0)]))
    const result = rerankedSearch(engine, recentFirst, query, config, 6, 6)
    expect(result.ids).toEqual(['D2:2', 'D2:1', 'D2:3', 'D1:1', 'D1:3', 'D1:2'])
    expect(result.scores).toEqual([1, 1, 1, 0, 0, 0])
    expect(result.turns.map((t) => engine.turnIds[t])).toEqual(result.ids)
    // k cuts the reordered pool; a pool shallower than k is refused
    expect(rerankedSearch(engine, recentFirst, query, config, 2, 6).ids).toEqual(['D2:2', 'D2:1'])
    expect(() => rerankedSearch(engine, recentFirst, query, config, 7, 6)).toThrow(RangeError)
  })

  it('a two-split tree reads a within-query rank column computed at query time', () => {
    const query = 'Where does Cleo work?'
    expect(engine.ids(engine.search(query, config, 6))).toEqual(['D2:2', 'D1:1', 'D2:1', 'D2:3', 'D1:2', 'D1:3'])
    const names = layoutNames({queryFeatures: ['qrank'], engineScore: false})
    const rows = candidateFeatures(engine, query, config, 6)
    // vector similarity: D2:2 > D1:1 > D2:1 > the other three (all 0, mean rank 4 of 0..5)
    const inputs = rerankerInputs(rows, layoutOf(names, 'test'))
    expect(rows.map((_, d) => inputs[d * names.length + names.indexOf('vector@qrank')])).toEqual([
      0, 0.2, 0.4, 0.8, 0.8, 0.8,
    ])
    // chit-chat (content tier 0) last; otherwise the lower half by vector rank ahead of the upper half
    const tree = {
      split_feature: [column('content_tier'), names.indexOf('vector@qrank')],
      threshold: [0.5, 0.25],
      left: [~0, ~1],
      right: [1, ~2],
      gain: [1, 1],
      leaf_value: [-1, 0, 1],
    }
    const result = rerankedSearch(engine, engineReranker(model(names, [tree])), query, config, 6, 6)
    // content tiers: D2:2 2, D1:1 2, D2:1 1, D2:3 1, D1:2 2, D1:3 0
    expect(result.ids).toEqual(['D2:1', 'D2:3', 'D1:2', 'D2:2', 'D1:1', 'D1:3'])
    expect(result.scores).toEqual([1, 1, 1, 0, 0, -1])
  })

  it("adds the engine's fused score as the last column when the model reads it", () => {
    const query = 'Where does Cleo work?'
    const names = layoutNames({queryFeatures: [], engineScore: true})
    // engine scores: D2:2 0.997, D1:1 0.884, then below 0.2: split at 0.5 keeps the top two on top
    const reranker = engineReranker(
      model(names, [stump(names.length - 1, 0.5, 0, 2), stump(column('age_days'), 5, 1, 0)]),
    )
    expect(reranker.usesEngineScore).toBe(true)
    expect(rerankedSearch(engine, reranker, query, config, 6, 6).ids).toEqual([
      'D2:2',
      'D1:1',
      'D2:1',
      'D2:3',
      'D1:2',
      'D1:3',
    ])
    expect(rerankedSearch(engine, reranker, query, config, 6, 6).scores).toEqual([3, 2, 1, 1, 0, 0])
  })
})

describe('loadReranker', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kt-rank-load-'))
  const good = join(dir, 'good.json')
  writeFileSync(good, JSON.stringify(model([...CANDIDATE_FEATURES], [stump(0, 1, 0, 1)])))

  it('reads a model file, or the registry\'s current version as "deployed"', () => {
    expect(loadReranker(good, join(dir, 'none')).trees).toBe(1)
    const registry = join(dir, 'registry')
    expect(() => loadReranker('deployed', registry)).toThrow(
      `${join(registry, 'registry.json')}: expected a deployed reranker (kt rerank deploy MODEL), got none`,
    )
    deploy(registry, good, {force: 'loader test'})
    const deployed = loadReranker('deployed', registry)
    expect(deployed.version).toBe('v1')
    expect(deployed.file).toBe(join(registry, 'v1.json'))
  })

  it('names the file and field of a bad model in one line', () => {
    const misfit = join(dir, 'letor.json')
    writeFileSync(misfit, JSON.stringify(model(['1', '2'], [stump(0, 1, 0, 1)])))
    expect(() => loadReranker(misfit, dir)).toThrow(
      `${misfit} field feature_names: expected the engine's features (bm25, vector,`,
    )
    const broken = join(dir, 'broken.json')
    writeFileSync(
      broken,
      JSON.stringify({...model([...CANDIDATE_FEATURES], []), trees: [{...stump(0, 1, 0, 1), leaf_value: [1]}]}),
    )
    expect(() => loadReranker(broken, dir)).toThrow(
      `${broken} field trees.0.leaf_value: expected 2 entries (splits + 1), got 1`,
    )
    const notJson = join(dir, 'nope.json')
    writeFileSync(notJson, '{"format": ')
    expect(() => loadReranker(notJson, dir)).toThrow(new RegExp(`^${notJson}(:1(:\\d+)?)?: expected valid JSON`))
  })
})
