import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {carveValidation, numQueries} from '../../src/rank/dataset.js'
import {
  DEFAULT_LAMBDAMART,
  featureMask,
  scoreDataset,
  trainLambdaMart,
  type CurvePoint,
} from '../../src/rank/lambdamart.js'
import {readLtrFile} from '../../src/rank/parse.js'
import {MEMORISING_GAP, trainingAdvice} from '../../src/rank/advice.js'
import {meanUnjudgedAsOne} from '../../src/rank/peer-comparison.js'
import {tuneLambdaMart} from '../../src/rank/tune.js'
import {fixturesDir} from '../../src/util/paths.js'
import {Rng} from '../../src/util/rng.js'

const ltr = join(fixturesDir, 'ltr')
const train = readLtrFile(join(ltr, 'train.txt'))

describe('LambdaMART regularisation', () => {
  it('draws round(fraction x width) distinct columns per tree, reproducibly; fraction 1 draws nothing', () => {
    const a = featureMask(10, 0.3, new Rng(5))!
    expect(a.reduce((n, v) => n + v, 0)).toBe(3)
    expect(featureMask(10, 0.3, new Rng(5))).toEqual(a)
    expect(featureMask(10, 0.01, new Rng(5))!.reduce((n, v) => n + v, 0)).toBe(1)
    expect(featureMask(10, 1, new Rng(5))).toBeUndefined()
  })

  it('splits only on the columns a tree drew (feature fraction), and fraction 1 gives the model it gave before', () => {
    const sub = trainLambdaMart(train, {
      ...DEFAULT_LAMBDAMART,
      trees: 8,
      minDataInLeaf: 5,
      featureFraction: 0.2,
      featureSeed: 3,
    }).model
    const rng = new Rng(3)
    const width = train.featureNames.length
    for (const tree of sub.trees) {
      const mask = featureMask(width, 0.2, rng)!
      for (const f of tree.splitFeature) expect(mask[f]).toBe(1)
    }
    const full = trainLambdaMart(train, {...DEFAULT_LAMBDAMART, trees: 8, minDataInLeaf: 5}).model
    const same = trainLambdaMart(train, {
      ...DEFAULT_LAMBDAMART,
      trees: 8,
      minDataInLeaf: 5,
      featureFraction: 1,
      featureSeed: 99,
    }).model
    expect(scoreDataset(same, train)).toEqual(scoreDataset(full, train))
  })

  it('truncation 0 (every pair) is the same as a truncation beyond the longest query', () => {
    const none = trainLambdaMart(train, {...DEFAULT_LAMBDAMART, trees: 5, minDataInLeaf: 5, truncation: 0}).model
    const deep = trainLambdaMart(train, {...DEFAULT_LAMBDAMART, trees: 5, minDataInLeaf: 5, truncation: 100_000}).model
    const ten = trainLambdaMart(train, {...DEFAULT_LAMBDAMART, trees: 5, minDataInLeaf: 5, truncation: 10}).model
    expect(scoreDataset(none, train)).toEqual(scoreDataset(deep, train))
    expect(scoreDataset(none, train)).not.toEqual(scoreDataset(ten, train))
  })

  it('carves a seeded validation split by query: disjoint, complete, in file order', () => {
    const {train: rest, valid} = carveValidation(train, 0.25, 7)
    const n = numQueries(train)
    expect(numQueries(valid)).toBe(Math.round(0.25 * n))
    expect(numQueries(rest) + numQueries(valid)).toBe(n)
    const ids = [...rest.queryIds, ...valid.queryIds]
    expect(new Set(ids).size).toBe(n)
    expect(carveValidation(train, 0.25, 7).valid.queryIds).toEqual(valid.queryIds)
    const order = (xs: readonly string[]): number[] => xs.map((q) => train.queryIds.indexOf(q))
    expect(order(valid.queryIds)).toEqual([...order(valid.queryIds)].sort((a, b) => a - b))
  })

  it('scores an unjudged query 1 in the all-queries mean (XGBoost and LightGBM convention)', () => {
    expect(meanUnjudgedAsOne(Float64Array.from([0.5, 0.7]), 4)).toBeCloseTo((0.5 + 0.7 + 2) / 4, 12)
    expect(meanUnjudgedAsOne(Float64Array.from([0.5]), 1)).toBe(0.5)
  })

  it('advises from the validation curve: still rising, fits fast, memorises, no validation', () => {
    const curve = (valid: number[], train: number[]): CurvePoint[] =>
      valid.map((v, i) => ({trees: i + 1, ndcg10: {train: train[i], valid: v}}))
    const rising = trainingAdvice(
      curve([0.5, 0.6, 0.7, 0.8], [0.6, 0.7, 0.8, 0.9]),
      {...DEFAULT_LAMBDAMART, trees: 4},
      4,
    )
    expect(rising.join(' ')).toMatch(/still rising at tree 4 of 4/)
    const fast = trainingAdvice(curve([0.7, 0.6, 0.6], [0.8, 0.9, 1]), {...DEFAULT_LAMBDAMART, trees: 3}, 1)
    expect(fast.join(' ')).toMatch(/after 1 trees/)
    const memo = trainingAdvice(curve([0.5, 0.55, 0.5], [0.9, 1, 1]), {...DEFAULT_LAMBDAMART, trees: 30}, 2)
    expect(memo.join(' ')).toMatch(/memorises/)
    expect(1 - 0.55).toBeGreaterThan(MEMORISING_GAP)
    expect(trainingAdvice([{trees: 1, ndcg10: {train: 0.5}}], DEFAULT_LAMBDAMART, 1)[0]).toMatch(/no --valid/)
  })
})

describe('kt rerank tune', () => {
  it('searches on validation only, keeps the defaults unless a configuration beats them there, and is reproducible', () => {
    const {train: rest, valid} = carveValidation(train, 0.3, 1)
    const test = readLtrFile(join(ltr, 'test.txt'))
    const run = () =>
      tuneLambdaMart({
        train: rest,
        valid,
        test,
        base: {...DEFAULT_LAMBDAMART, trees: 9},
        optimizer: 'random',
        trials: 6,
        seed: 4,
      })
    const a = run()
    expect(a.trials).toHaveLength(6)
    for (const t of a.trials) expect(t.trees_budget).toBe(9)
    const bestTrial = Math.max(...a.trials.map((t) => t.valid_ndcg10))
    if (bestTrial > a.defaults.valid_ndcg10) expect(a.best.valid_ndcg10).toBeCloseTo(bestTrial, 12)
    else expect(a.best.config).toEqual({})
    expect(a.test!.queries).toBeGreaterThan(0)
    expect(a.test!.delta.estimate).toBeCloseTo(a.test!.tuned - a.test!.defaults, 12)
    const b = run()
    expect(b.trials.map((t) => t.valid_ndcg10)).toEqual(a.trials.map((t) => t.valid_ndcg10))
  })
})
