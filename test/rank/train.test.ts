import {describe, expect, it} from 'vitest'
import {join} from 'node:path'
import {fixturesDir} from '../../src/util/paths.js'
import {DatasetBuilder} from '../../src/rank/dataset.js'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {DEFAULT_LAMBDAMART, scoreDataset, trainLambdaMart} from '../../src/rank/lambdamart.js'
import {readModel} from '../../src/rank/model.js'
import {bestSingleFeature, scoreLinear, tuneLinear} from '../../src/rank/linear.js'
import {reportEvaluator} from '../../src/rank/ndcg.js'
import {compareScorers} from '../../src/rank/compare.js'
import {runTrainReport} from '../../src/rank/report.js'
import {generateSynthetic, splitByQueries} from '../../src/rank/synthetic.js'
import {Rng} from '../../src/util/rng.js'

const ltr = join(fixturesDir, 'ltr')
const ndcgKeys = ['ndcg@1', 'ndcg@3', 'ndcg@5', 'ndcg@10']

describe('kt rerank train report', () => {
  it("has the issue's JSON shape; a split not given is absent", () => {
    const report = JSON.parse(
      JSON.stringify(
        runTrainReport({
          files: {train: join(ltr, 'train.txt'), test: join(ltr, 'test.txt')},
          params: {...DEFAULT_LAMBDAMART, trees: 20},
          seed: 1,
        }),
      ),
    )
    expect(Object.keys(report.splits)).toEqual(['train', 'test'])
    for (const split of ['train', 'test']) {
      expect(Object.keys(report.splits[split])).toEqual(ndcgKeys)
      expect(Object.keys(report.baselines.linear[split])).toEqual(ndcgKeys)
      expect(Object.keys(report.baselines.best_feature[split])).toEqual(ndcgKeys)
      for (const value of Object.values(report.splits[split]) as number[]) expect(value >= 0 && value <= 1).toBe(true)
    }
    expect(report.trees).toBe(20)
    expect(report.warnings).toEqual([])
    expect(typeof report.train_ms).toBe('number')
    expect(report.ndcg_by_trees.length).toBe(20)
    expect(Object.keys(report.ndcg_by_trees[0])).toEqual(['trees', 'train', 'test'])
    expect(report.importance.length).toBe(12)
    expect(report.importance[0].gain).toBeGreaterThanOrEqual(report.importance[11].gain)
    // paired comparisons on every split but train; each delta is the difference of the reported means
    expect(Object.keys(report.comparisons)).toEqual(['test'])
    const [linear, best] = report.comparisons.test
    expect(linear).toMatchObject({baseline: 'linear', metric: 'ndcg@10', kind: 'absolute', confidence: 0.95})
    expect(linear.delta).toBeCloseTo(report.splits.test['ndcg@10'] - report.baselines.linear.test['ndcg@10'], 12)
    expect(best.delta).toBeCloseTo(report.splits.test['ndcg@10'] - report.baselines.best_feature.test['ndcg@10'], 12)
    expect(linear.low).toBeLessThanOrEqual(linear.delta)
    expect(linear.high).toBeGreaterThanOrEqual(linear.delta)
  })

  it('compares two scorers paired by query: a constant shift gives a zero-width interval', () => {
    const model = Float64Array.from([0.9, 0.5, 0.7, 0.3, 1])
    const c = compareScorers(
      'linear',
      model,
      model.map((x) => x - 0.1),
      3,
      200,
    )
    expect(c.delta).toBeCloseTo(0.1, 12)
    expect(c.low).toBeCloseTo(0.1, 12)
    expect(c.high).toBeCloseTo(0.1, 12)
    expect(c.queries).toBe(5)
    // below COMPARISON_MIN_QUERIES no interval is claimed
    const few = compareScorers(
      'linear',
      model.subarray(0, 4),
      model.subarray(0, 4).map((x) => x - 0.1),
      3,
      200,
    )
    expect(few.delta).toBeCloseTo(0.1, 12)
    expect(few.low).toBeNull()
    expect(few.high).toBeNull()
  })

  it('LambdaMART beats tuned linear fusion on held-out NDCG@10 when relevance has interactions', () => {
    const all = generateSynthetic({queries: 300, minDocs: 10, maxDocs: 20, seed: 8})
    const [train, test] = splitByQueries(all, [200, 100])
    const {model} = trainLambdaMart(train, {...DEFAULT_LAMBDAMART, trees: 60})
    const evaluator = reportEvaluator(test)
    const trees = evaluator.report(scoreDataset(model, test))['ndcg@10']
    const linear = evaluator.report(scoreLinear(tuneLinear(train, 1, 2), test))['ndcg@10']
    expect(trees).toBeGreaterThan(linear + 0.05)
  })

  it('early stopping keeps the prefix with the best validation NDCG@10', () => {
    const all = generateSynthetic({queries: 90, minDocs: 8, maxDocs: 16, seed: 5})
    const [train, valid] = splitByQueries(all, [60, 30])
    const outcome = trainLambdaMart(
      train,
      {...DEFAULT_LAMBDAMART, trees: 200, earlyStoppingRounds: 10, minDataInLeaf: 5},
      {valid},
    )
    const validCurve = outcome.curve.map((p) => p.ndcg10.valid)
    const best = Math.max(...validCurve)
    expect(outcome.treesGrown).toBeLessThan(200)
    expect(outcome.treesGrown - outcome.model.trees.length).toBe(10)
    expect(validCurve[outcome.model.trees.length - 1]).toBe(best)
    expect(validCurve.indexOf(best)).toBe(outcome.model.trees.length - 1)
  })
})

describe('a training run that grows no tree', () => {
  /** One query per row of labels; feature 1 = the label (a perfect split), feature 2 = `flat`. */
  function build(labels: number[][], flat = 0.5) {
    const b = new DatasetBuilder()
    labels.forEach((query, q) => {
      b.beginQuery(String(q))
      for (const label of query) b.addRow(label, Float64Array.from([label, flat]))
    })
    return b.build('tiny')
  }

  it('says why: too few documents for min-data, no gradient, or no split with gain', () => {
    expect(trainLambdaMart(build([[1, 0]])).noTreeReason).toBe(
      '2 training documents cannot fill two leaves of min-data 20 (lower --min-data, or add data)',
    )
    const minData1 = {...DEFAULT_LAMBDAMART, minDataInLeaf: 1}
    expect(
      trainLambdaMart(
        build([
          [0, 0],
          [2, 2, 2],
        ]),
        minData1,
      ).noTreeReason,
    ).toBe('every gradient is 0 (no training query has documents of different labels)')
    // both columns constant across documents: a single bin each, so no split exists at all
    const b = new DatasetBuilder()
    b.beginQuery('1')
    for (const label of [1, 0, 0]) b.addRow(label, Float64Array.from([0.3, 0.3]))
    expect(trainLambdaMart(b.build('flat'), minData1).noTreeReason).toMatch(
      /^no split had positive gain with at least min-data 1 documents/,
    )
    // a split exists: trees, no reason
    const grown = trainLambdaMart(
      build([
        [1, 0, 0],
        [0, 2, 1],
      ]),
      {...minData1, trees: 3},
    )
    expect(grown.model.trees.length).toBe(3)
    expect(grown.noTreeReason).toBeUndefined()
  })

  it('reports 0 trees with the reason as a warning, and still saves the model', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-rank-zero-'))
    const data = join(dir, 'two.txt')
    writeFileSync(data, '1 qid:1 1:0.5\n0 qid:1 1:0.2\n')
    const report = runTrainReport({
      files: {train: data},
      params: DEFAULT_LAMBDAMART,
      seed: 1,
      save: join(dir, 'zero.json'),
    })
    expect(report.trees).toBe(0)
    expect(report.warnings).toEqual([
      'LambdaMART grew 0 trees: 2 training documents cannot fill two leaves of min-data 20 (lower --min-data, or add data); the model scores every document equally',
    ])
    expect(readModel(join(dir, 'zero.json')).trees).toEqual([])
  })
})

describe('baselines', () => {
  /** Queries whose labels are 0..3 by the rank of feature `f` (descending when sign = 1). */
  function rankedBy(f: number, sign: 1 | -1) {
    const rng = new Rng(3)
    const b = new DatasetBuilder()
    for (let q = 0; q < 30; q++) {
      b.beginQuery(String(q))
      const rows = Array.from({length: 8}, () => Float64Array.from({length: 4}, () => rng.next()))
      const order = [...rows].sort((x, y) => sign * (y[f] - x[f]))
      for (const row of rows) b.addRow(Math.max(0, 3 - order.indexOf(row)), row)
    }
    return b.build('ranked')
  }

  it('the best single feature finds the feature and direction that define the labels', () => {
    expect(bestSingleFeature(rankedBy(2, -1))).toMatchObject({index: 2, sign: -1, trainNdcg10: 1})
    expect(bestSingleFeature(rankedBy(1, 1))).toMatchObject({index: 1, sign: 1, trainNdcg10: 1})
  })

  it('coordinate ascent reaches NDCG 1 when one feature orders the labels, weighting it most', () => {
    const model = tuneLinear(rankedBy(3, 1), 7, 1)
    expect(model.trainNdcg10).toBe(1)
    const strongest = model.weights.map(Math.abs).indexOf(Math.max(...model.weights.map(Math.abs)))
    expect(strongest).toBe(3)
    expect(model.weights[3]).toBeGreaterThan(0)
    expect(model.weights.reduce((a, w) => a + Math.abs(w), 0)).toBeCloseTo(1, 12)
  })
})
