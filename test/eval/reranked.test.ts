import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {loadMemoryDataset} from '../../src/data/conversations/index.js'
import {defaultRetrievalConfig} from '../../src/engine/retrieval/engine.js'
import {candidateFeatures} from '../../src/engine/retrieval/features.js'
import {CANDIDATE_FEATURES} from '../../src/engine/retrieval/space.js'
import {evaluateSystem, prepareEvaluation, rankQuery} from '../../src/eval/harness.js'
import {restrictConversations} from '../../src/data/conversations/queries.js'
import {evaluateReranked, rankReranked, resolveRerankPool, runRerankedEvaluation} from '../../src/eval/reranked.js'
import {engineReranker} from '../../src/rank/apply.js'
import {MODEL_FORMAT, MODEL_VERSION, type SavedModel} from '../../src/rank/model.js'
import {layoutNames} from '../../src/rank/query-features.js'
import {fixturesDir} from '../../src/util/paths.js'
import {kt} from '../cli/helpers.js'

/**
 * The committed synthetic memory fixture (two conversations, 28 questions each). The model used
 * here is hand-built so its effect is known: one stump on the within-query rank of the engine's
 * fused score puts the engine's ranks 11..20 of a pool of 20 above its ranks 1..10 (tied scores
 * share a rank). So the reranked top 20 is the engine's, and where no tie crosses ranks 10/11 the
 * reranked top 10 is the engine's 11..20.
 */
const data = join(fixturesDir, 'memory_small.json')
const names = layoutNames({queryFeatures: ['qrank'], engineScore: false})
const swapHalves: SavedModel = {
  format: MODEL_FORMAT,
  version: MODEL_VERSION,
  feature_names: names,
  params: {},
  metrics: {},
  data: {},
  // engine_score@qrank of ranks 0..19 is r / 19: <= 0.5 for the top 10, > 0.5 for the rest
  trees: [
    {
      split_feature: [names.indexOf('engine_score@qrank')],
      threshold: [0.5],
      left: [~0],
      right: [~1],
      gain: [1],
      leaf_value: [0, 1],
    },
  ],
}
const constant: SavedModel = {
  ...swapHalves,
  feature_names: [...CANDIDATE_FEATURES],
  trees: [{split_feature: [], threshold: [], left: [], right: [], gain: [], leaf_value: [0.5]}],
}
const POOL = 20
const ks = [1, 5, 10, 20]

/**
 * The swap model's order worked out from the engine's scores: the candidate at 0-based position r
 * of n, whose tied group spans positions a..b, has rank (a + b) / 2 / (n - 1) and moves up when that
 * is above 0.5; each side keeps the engine's order.
 */
function swappedByHand(scores: number[], ids: string[]): string[] {
  const n = scores.length
  const up: string[] = []
  const stay: string[] = []
  for (let r = 0; r < n; r++) {
    let a = r
    let b = r
    while (a > 0 && scores[a - 1] === scores[r]) a--
    while (b < n - 1 && scores[b + 1] === scores[r]) b++
    ;((a + b) / 2 / (n - 1) > 0.5 ? up : stay).push(ids[r])
  }
  return [...up, ...stay]
}

describe('evaluating the engine followed by a reranker', () => {
  const dataset = loadMemoryDataset(data)
  const prepared = prepareEvaluation(dataset)
  const config = defaultRetrievalConfig()

  it("a model that swaps the halves of the pool: reranked top 10 = the engine's 11..20, same top 20", () => {
    const reranker = engineReranker(swapHalves, 'swap.json')
    const engine = evaluateSystem(prepared, 'engine', config, {ks})
    const reranked = evaluateReranked(prepared, config, {reranker, pool: POOL, ks})
    let untied = 0
    prepared.selection.queries.forEach((q, i) => {
      const rows = candidateFeatures(prepared.engines.get(q.conversation)!, q.text, config, POOL)
      expect(rows.map((r) => r.id)).toEqual(rankQuery(prepared, q, 'engine', config, POOL))
      expect(rankReranked(prepared, q, config, POOL, {reranker, pool: POOL})).toEqual(
        swappedByHand(
          rows.map((r) => r.score),
          rows.map((r) => r.id),
        ),
      )
      expect(reranked.rows[i]['recall@20']).toBe(engine.rows[i]['recall@20'])
      // a full pool with no tie across ranks 10 and 11: exactly the engine's 11..20 on top
      if (rows.length === POOL && rows[9].score > rows[10].score) {
        untied++
        expect(reranked.rows[i]['recall@10']).toBeCloseTo(engine.rows[i]['recall@20'] - engine.rows[i]['recall@10'], 12)
      }
    })
    expect(untied).toBeGreaterThan(prepared.selection.queries.length / 2)
    expect(reranked.report.overall['ndcg@10']).toBeLessThan(engine.report.overall['ndcg@10'])
  })

  it("a constant model keeps the engine's order, at a pool deeper than the cut-offs too", () => {
    const reranker = engineReranker(constant, 'constant.json')
    const engine = evaluateSystem(prepared, 'engine', config, {ks}).report
    for (const pool of [20, 50]) expect(evaluateReranked(prepared, config, {reranker, pool, ks}).report).toEqual(engine)
  })

  it('reports the reranked system beside the others, with a paired comparison and its timing apart', () => {
    const reranker = engineReranker(swapHalves, 'swap.json')
    const one = restrictConversations(dataset, ['synth-7-2'], '--conversation')
    const out = runRerankedEvaluation(one, config, {
      reranker,
      pool: POOL,
      ks,
      identity: {file: 'swap.json', trees: 1, featureNames: names},
    })
    expect(out.conversations).toBe(1)
    expect(out.reranked!.overall.n).toBe(out.engine.overall.n)
    expect(Object.keys(out.reranked!.by_category)).toEqual(Object.keys(out.engine.by_category))
    const ndcg = out.reranked!.vs_engine.find((d) => d.metric === 'ndcg@10')!
    expect(ndcg.engine).toBeCloseTo(out.engine.overall['ndcg@10'], 12)
    expect(ndcg.delta).toBeCloseTo(out.reranked!.overall['ndcg@10'] - out.engine.overall['ndcg@10'], 12)
    expect(ndcg.high!).toBeLessThan(0)
    expect(out.reranked!.latency_ms.model.p50).toBeGreaterThanOrEqual(0)
    expect(() => restrictConversations(dataset, ['conv-9'], '--conversation')).toThrow(
      `--conversation: expected conversation ids of ${data} (synth-7-1, synth-7-2), got "conv-9"`,
    )
    expect(() => evaluateReranked(prepared, config, {reranker, pool: 10, ks})).toThrow(
      '--rerank-pool: expected an integer >= the ranking depth the cut-offs need (20), got 10',
    )
  })
})

describe('the pool a reranker is served with', () => {
  const qrank = {file: 'swap.json', reranker: engineReranker(swapHalves)}
  const raw = {file: 'raw.json', reranker: engineReranker(constant)}

  it("defaults to the model's recorded pool and refuses another one for query-level columns", () => {
    expect(resolveRerankPool(undefined, {...qrank, pool: 20})).toEqual({
      pool: 20,
      from: 'swap.json field pool (the default --rerank-pool)',
    })
    expect(resolveRerankPool(20, {...qrank, pool: 20})).toEqual({pool: 20, from: '--rerank-pool'})
    expect(() => resolveRerankPool(50, {...qrank, pool: 20})).toThrow(
      "--rerank-pool: expected 20, the pool swap.json's query-level columns were computed over (omit the flag to use it), got 50",
    )
    // raw columns do not depend on the pool: any pool, the recorded one by default
    expect(resolveRerankPool(30, {...raw, pool: 20}).pool).toBe(30)
    expect(resolveRerankPool(undefined, {...raw, pool: 20}).pool).toBe(20)
    expect(resolveRerankPool(undefined, raw)).toEqual({pool: 50, from: '--rerank-pool (default 50)'})
  })

  it('warns when a query-level model records no pool', () => {
    expect(resolveRerankPool(20, qrank)).toEqual({
      pool: 20,
      from: '--rerank-pool',
      warning:
        "swap.json has query-level columns but records no candidate pool: serving with pool 20, which must equal its training log's --pool",
    })
  })
})

describe('kt eval --reranker (built CLI)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kt-eval-rerank-'))
  const model = join(dir, 'swap.json')
  writeFileSync(model, JSON.stringify(swapHalves))
  const pooled = join(dir, 'swap-pool20.json')
  writeFileSync(pooled, JSON.stringify({...swapHalves, pool: POOL}))

  it('adds the engine+reranker system to the table and the JSON', () => {
    // the pool comes from the model (no --rerank-pool)
    const json = kt(['eval', '--data', data, '--reranker', pooled, '--conversation', 'synth-7-1', '--json'])
    expect(json.status, json.stderr).toBe(0)
    expect(json.stderr).toBe('')
    const out = JSON.parse(json.stdout)
    expect(out.conversations).toBe(1)
    expect(out.reranked.system).toBe('engine+reranker')
    expect(out.reranked.model).toBe(pooled)
    expect(out.reranked.pool).toBe(POOL)
    expect(out.reranked.overall['recall@20']).toBeCloseTo(out.engine.overall['recall@20'], 12)
    expect(out.reranked.overall['recall@10']).toBeCloseTo(
      out.engine.overall['recall@20'] - out.engine.overall['recall@10'],
      12,
    )
    const human = kt(['eval', '--data', data, '--reranker', model, '--rerank-pool', '20'])
    expect(human.status, human.stderr).toBe(0)
    expect(human.stdout).toMatch(/^overall +engine +52 /m)
    expect(human.stdout).toMatch(/^ +engine\+reranker +52 /m)
    expect(human.stdout).toMatch(/latency per query \(engine\+reranker, pool 20\): p50 [\d.]+ ms/)
    // a query-level model that records no pool: served as asked, with a one-line warning
    expect(human.stderr).toBe(
      `kt: warning: ${model} has query-level columns but records no candidate pool: serving with pool 20, which must equal its training log's --pool\n`,
    )
  })

  it('a model whose feature_names the engine cannot supply is one line naming the file and field', () => {
    const misfit = join(dir, 'letor.json')
    writeFileSync(misfit, JSON.stringify({...swapHalves, feature_names: ['1', '2'], trees: []}))
    const r = kt(['eval', '--data', data, '--reranker', misfit])
    expect(r.status).toBe(2)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(new RegExp(`^kt: ${misfit} field feature_names: expected the engine's features`))
    // other bad models (schema, tree structure, JSON, nothing deployed): loadReranker in test/rank/search.test.ts
  })
})
