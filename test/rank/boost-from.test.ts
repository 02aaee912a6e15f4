import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {DatasetBuilder, numFeatures} from '../../src/rank/dataset.js'
import {
  BASE_LOGIT_SPAN,
  DEFAULT_LAMBDAMART,
  fitBaseWeight,
  scoreDataset,
  trainLambdaMart,
} from '../../src/rank/lambdamart.js'
import {fromSavedModel, readModel, toSavedModel, writeModel} from '../../src/rank/model.js'
import {PackedEnsemble} from '../../src/rank/packed.js'
import {generateSynthetic} from '../../src/rank/synthetic.js'

/** Queries of two documents each: [label of the first, x of the first, x of the second]; the second has label 0. */
function pairs(rows: [number, number, number][]) {
  const b = new DatasetBuilder()
  rows.forEach(([label, x1, x2], q) => {
    b.beginQuery(`q${q}`)
    b.addRow(label, Float64Array.from([x1]))
    b.addRow(0, Float64Array.from([x2]))
  })
  return b.build('pairs')
}

describe('boosting from a base column (init score)', () => {
  it('fits the RankNet maximum-likelihood weight: pair differences +1, +1, -1 give ln 2', () => {
    // 2 log s(c) + log s(-c) is maximal where s(c) = 2/3, i.e. c = ln 2 (sigma 1).
    expect(
      fitBaseWeight(
        pairs([
          [1, 1, 0],
          [1, 1, 0],
          [1, 0, 1],
        ]),
        0,
        1,
      ),
    ).toBeCloseTo(Math.LN2, 9)
    expect(
      fitBaseWeight(
        pairs([
          [1, 1, 0],
          [1, 0, 1],
        ]),
        0,
        1,
      ),
    ).toBeCloseTo(0, 9)
    // Separable pairs: the weight stops at the cap (BASE_LOGIT_SPAN over the within-query sd 0.5).
    expect(
      fitBaseWeight(
        pairs([
          [1, 1, 0],
          [1, 1, 0],
        ]),
        0,
        1,
      ),
    ).toBeCloseTo(BASE_LOGIT_SPAN / 0.5, 9)
  })

  it('serves bit-identical scores packed and unpacked, and keeps the base through save and load', () => {
    const data = generateSynthetic({structure: 'mixed', queries: 40, minDocs: 15, maxDocs: 25, seed: 3})
    const outcome = trainLambdaMart(data, {
      ...DEFAULT_LAMBDAMART,
      trees: 6,
      minDataInLeaf: 5,
      boostFrom: data.featureNames[0],
    })
    expect(outcome.model.base?.feature).toBe(0)
    const trainer = scoreDataset(outcome.model, data)
    const packed = new PackedEnsemble(outcome.model)
    const w = numFeatures(data)
    for (let d = 0; d < trainer.length; d++) expect(packed.score(data.features, d * w)).toBe(trainer[d])
    const dir = mkdtempSync(join(tmpdir(), 'kt-base-'))
    writeModel(join(dir, 'm.json'), toSavedModel(outcome.model, {}, {}, {}))
    const back = fromSavedModel(readModel(join(dir, 'm.json')))
    expect(scoreDataset(back, data)).toEqual(trainer)
  })

  it('can keep 0 trees: the curve starts at the base alone, and early stopping falls back to it', () => {
    const data = generateSynthetic({structure: 'mixed', queries: 40, minDocs: 15, maxDocs: 25, seed: 3})
    const noise = generateSynthetic({structure: 'mixed', queries: 40, minDocs: 15, maxDocs: 25, seed: 9})
    const outcome = trainLambdaMart(
      data,
      {...DEFAULT_LAMBDAMART, trees: 5, minDataInLeaf: 5, boostFrom: data.featureNames[0], earlyStoppingRounds: 5},
      {valid: noise},
    )
    expect(outcome.curve[0].trees).toBe(0)
    const best = Math.max(...outcome.curve.map((p) => p.ndcg10.valid))
    const kept = outcome.curve.find((p) => p.ndcg10.valid === best)!.trees
    expect(outcome.model.trees.length).toBe(kept)
  })

  it('refuses a saved base that names no feature of the model, in one line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-base-'))
    const data = pairs([
      [1, 1, 0],
      [1, 0, 1],
    ])
    const saved = toSavedModel({featureNames: data.featureNames, trees: [], base: {feature: 0, weight: 1}}, {}, {}, {})
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({...saved, base: {feature: 'nope', weight: 1}}))
    expect(() => readModel(join(dir, 'bad.json'))).toThrow(/bad\.json field base\.feature: .*nope/)
  })
})
