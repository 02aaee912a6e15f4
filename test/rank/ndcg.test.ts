import {describe, expect, it} from 'vitest'
import fc from 'fast-check'
import {DatasetBuilder} from '../../src/rank/dataset.js'
import {idealDcg, NdcgEvaluator, reportEvaluator, topK, topKForEvaluation} from '../../src/rank/ndcg.js'
import {generateSynthetic} from '../../src/rank/synthetic.js'
import {ndcgAtK} from '../../src/stats/ranking.js'
import {Rng} from '../../src/util/rng.js'

function oneQuery(labels: number[]) {
  const b = new DatasetBuilder()
  b.beginQuery('q')
  for (const l of labels) b.addRow(l, Float64Array.of(0))
  return b.build('t')
}

describe('NDCG', () => {
  it('agrees with src/stats/ranking.ts ndcgAtK (exp2 gain) query by query and on the mean', () => {
    const data = generateSynthetic({queries: 40, minDocs: 1, maxDocs: 25, seed: 3})
    const rng = new Rng(9)
    const scores = Float64Array.from({length: data.labels.length}, () => rng.next())
    for (const k of [1, 3, 5, 10]) {
      let sum = 0
      let counted = 0
      for (let q = 0; q < data.queryIds.length; q++) {
        const begin = data.queryOffsets[q]
        const end = data.queryOffsets[q + 1]
        const labels = Array.from(data.labels.subarray(begin, end))
        const ranked = labels
          .map((l, i) => ({l, s: scores[begin + i]}))
          .sort((a, b) => b.s - a.s)
          .map((x) => x.l)
        const reference = ndcgAtK(ranked, labels, k, 'exp2')
        if (reference === null) continue // convention: skipped
        sum += reference
        counted++
      }
      expect(new NdcgEvaluator(data, [k]).mean(scores)).toBeCloseTo(sum / counted, 12)
      const perQuery = new NdcgEvaluator(data, [1, 3, 5, 10]).perQuery(scores, k)
      expect(perQuery.length).toBe(counted)
      expect(perQuery.reduce((a, b) => a + b, 0) / counted).toBeCloseTo(sum / counted, 12)
    }
  })

  it('hand example: labels [0, 2, 1] ranked by scores [3, 2, 1]', () => {
    // DCG@3 = 0 + 3/log2(3) + 1/2 = 2.3927892607; ideal = 3 + 1/log2(3) = 3.6309297536
    const data = oneQuery([0, 2, 1])
    expect(new NdcgEvaluator(data, [3]).mean(Float64Array.of(3, 2, 1))).toBeCloseTo(2.3927892607 / 3.6309297536, 9)
    // NDCG@1 = 0 (an irrelevant document first).
    expect(new NdcgEvaluator(data, [1]).mean(Float64Array.of(3, 2, 1))).toBe(0)
    expect(idealDcg(Float64Array.of(0, 2, 1), 0, 3, 3)).toBeCloseTo(3.6309297536, 9)
  })

  it('breaks score ties pessimistically (a constant scorer gets the worst order)', () => {
    const data = oneQuery([2, 0, 0])
    // Worst order puts the relevant document last: DCG@3 = 3 / log2(4) = 1.5, ideal 3.
    expect(new NdcgEvaluator(data, [3]).mean(Float64Array.of(0, 0, 0))).toBeCloseTo(0.5, 12)
  })

  it('skips queries without relevant documents, and refuses a split that has none', () => {
    const b = new DatasetBuilder()
    b.beginQuery('a')
    b.addRow(1, Float64Array.of(0))
    b.addRow(0, Float64Array.of(0))
    b.beginQuery('none')
    b.addRow(0, Float64Array.of(0))
    b.addRow(0, Float64Array.of(0))
    const data = b.build('t')
    const evaluator = new NdcgEvaluator(data, [10])
    expect(evaluator.judgedQueries).toBe(1)
    expect(evaluator.mean(Float64Array.of(1, 0, 5, 4))).toBe(1) // not (1 + 1) / 2 nor (1 + 0) / 2
    expect(() => reportEvaluator(oneQuery([0, 0]))).toThrow(/t: expected at least one query with a relevant document/)
  })

  it('the one-pass top-k used for evaluation equals partial selection with pessimistic ties', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({min: 0, max: 3}), fc.integer({min: 0, max: 4})), {minLength: 1, maxLength: 30}),
        fc.integer({min: 1, max: 12}),
        (docs, k) => {
          const scores = Float64Array.from(docs.map((d) => d[1]))
          const labels = Float64Array.from(docs.map((d) => d[0]))
          const a = new Int32Array(docs.length)
          const b = new Int32Array(docs.length)
          const m = topK(scores, labels, 0, docs.length, k, a, true)
          expect(topKForEvaluation(scores, labels, 0, docs.length, k, b)).toBe(m)
          expect(Array.from(b.subarray(0, m))).toEqual(Array.from(a.subarray(0, m)))
        },
      ),
      {seed: 5, numRuns: 300},
    )
  })
})
