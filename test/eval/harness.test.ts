import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {loadMemoryDataset} from '../../src/data/conversations/index.js'
import {defaultRetrievalConfig} from '../../src/engine/retrieval/engine.js'
import {classifierConfusion, evaluateSystem, prepareEvaluation, runEvaluation} from '../../src/eval/harness.js'
import {aggregate, queryMetrics} from '../../src/data/conversations/metrics.js'
import {fidelityTiers, tierForBudget} from '../../src/data/conversations/tiers.js'
import {tuneRetrieval} from '../../src/eval/tune.js'
import type {EvalQuery} from '../../src/data/conversations/queries.js'

const fixture = (name: string): string => join(import.meta.dirname, 'fixtures', name)

describe('per-query metrics', () => {
  it('match hand computation', () => {
    // evidence b and e; ranking a b c d: b at rank 2, e missing.
    const m = queryMetrics(['a', 'b', 'c', 'd'], ['b', 'e'], [1, 5])
    expect(m['recall@1']).toBe(0)
    expect(m['recall@5']).toBe(0.5)
    expect(m['hit@1']).toBe(0)
    expect(m['hit@5']).toBe(1)
    expect(m.mrr).toBe(0.5)
    // DCG = 1/log2(3); ideal = 1 + 1/log2(3)
    expect(m['ndcg@10']).toBeCloseTo(1 / Math.log2(3) / (1 + 1 / Math.log2(3)), 12)
  })

  it('count a repeated id once: NDCG of a ranking that repeats its one relevant id is 1, not 1.63', () => {
    expect(queryMetrics(['a', 'a', 'b'], ['a'], [1, 5])['ndcg@10']).toBe(1)
    // the repeat holds its slot: a at rank 2 only, DCG 1/log2(3), ideal 1
    expect(queryMetrics(['x', 'a', 'a'], ['a'], [5])['ndcg@10']).toBeCloseTo(1 / Math.log2(3), 12)
    // repeated evidence counts once in the ideal DCG
    expect(queryMetrics(['a'], ['a', 'a'], [1])['ndcg@10']).toBe(1)
    expect(queryMetrics(['a', 'a'], ['a', 'b'], [5])['recall@5']).toBe(0.5)
  })

  it('average overall and by category', () => {
    const q = (id: string, category: EvalQuery['category']): EvalQuery => ({
      id,
      conversation: 'c',
      text: id,
      category,
      evidence: ['x'],
    })
    const r = aggregate(
      [q('1', 'single-hop'), q('2', 'single-hop'), q('3', 'temporal')],
      [{mrr: 1}, {mrr: 0}, {mrr: 0.5}],
    )
    expect(r.overall).toEqual({n: 3, mrr: 0.5})
    expect(r.by_category).toEqual({'single-hop': {n: 2, mrr: 0.5}, temporal: {n: 1, mrr: 0.5}})
  })
})

describe('fidelity tiers', () => {
  const queries: EvalQuery[] = Array.from({length: 90}, (_, i) => ({
    id: `q${i}`,
    conversation: 'c',
    text: '',
    category: i % 3 === 0 ? 'temporal' : 'single-hop',
    evidence: ['x'],
  }))

  it('are nested, stratified, seeded, with budgets 1, 3, 9', () => {
    const tiers = fidelityTiers(queries, 5)
    expect(tiers.map((t) => [t.name, t.budget, t.queryIds.length])).toEqual([
      ['low', 1, 4 + 7],
      ['medium', 3, 10 + 20],
      ['high', 9, 90],
    ])
    const [low, medium, high] = tiers.map((t) => new Set(t.queryIds))
    for (const id of low) expect(medium.has(id)).toBe(true)
    for (const id of medium) expect(high.has(id)).toBe(true)
    expect(fidelityTiers(queries, 5)).toEqual(tiers)
    expect(fidelityTiers(queries, 6)[0].queryIds).not.toEqual(tiers[0].queryIds)
    expect(tierForBudget(tiers, 2).name).toBe('medium')
    expect(tierForBudget(tiers, 100).name).toBe('high')
  })
})

describe('evaluation on a small LoCoMo-format fixture', () => {
  const dataset = loadMemoryDataset(fixture('tiny-locomo.json'))

  it('skips adversarial and evidence-less questions, counting them, and reports every system', () => {
    const out = runEvaluation(dataset, defaultRetrievalConfig(), {ks: [1, 5]})
    expect(out.queries).toBe(4)
    expect(out.skipped).toEqual({adversarial: 1, no_evidence: 1})
    expect(Object.keys(out.engine.overall).sort()).toEqual([
      'hit@1',
      'hit@5',
      'mrr',
      'n',
      'ndcg@10',
      'recall@1',
      'recall@5',
    ])
    expect(Object.keys(out.engine.by_category).sort()).toEqual(['multi-hop', 'open-domain', 'single-hop', 'temporal'])
    expect(out.baselines.bm25.overall.n).toBe(4)
    // Five turns: the engine's top 5 holds every turn (text or graph reaches them all).
    expect(out.engine.overall['recall@5']).toBe(1)
    expect(out.latency_ms.p50).toBeGreaterThanOrEqual(0)
    expect(out.classifier.matrix.temporal.temporal).toBe(1)
  })

  it('ranks the obvious evidence first', () => {
    const prepared = prepareEvaluation(dataset)
    for (const system of ['engine', 'bm25', 'vector'] as const) {
      const r = evaluateSystem(prepared, system, defaultRetrievalConfig(), {ks: [1]})
      const where = r.queries.findIndex((q) => q.text === 'When did Ann start pottery?')
      expect(r.rows[where]['recall@1']).toBe(1)
    }
    expect(classifierConfusion(prepared).matrix['single-hop']).toBeDefined()
  })
})

describe('tuning on the committed synthetic fixture', () => {
  const dataset = loadMemoryDataset(join(import.meta.dirname, '..', '..', 'fixtures', 'memory_small.json'))

  it('random search is seeded and returns every trial with metrics', () => {
    const a = tuneRetrieval({dataset, method: 'random', budget: 3, seed: 11})
    const b = tuneRetrieval({dataset, method: 'random', budget: 3, seed: 11})
    expect(a.trials).toHaveLength(3)
    expect(a.trials.map((t) => t.config)).toEqual(b.trials.map((t) => t.config))
    expect(a.trials.map((t) => t.value)).toEqual(b.trials.map((t) => t.value))
    for (const t of a.trials) expect(t.tier).toBe('high')
    expect(a.best.metrics['recall@10']).toBe(Math.max(...a.trials.map((t) => t.value)))
    expect(a.defaults.metrics.n).toBe(52)
  })

  it('grid search covers the grid sub-space with the rest at defaults', () => {
    const r = tuneRetrieval({dataset, method: 'grid', budget: 2, seed: 3})
    expect(r.trials).toHaveLength(2)
    // two points of a larger grid: said so, not passed off as the grid (review R#10)
    expect(r.grid).toMatchObject({evaluated: 2, complete: false, subset: true})
    expect(r.grid!.points).toBeGreaterThan(2)
    const defaults = defaultRetrievalConfig()
    for (const t of r.trials) expect(t.config['bm25.k1']).toBe(defaults['bm25.k1'])
  })
})
