import {describe, expect, it} from 'vitest'
import {join} from 'node:path'
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {randomCompleteTree} from '../../src/bench/rerank.js'
import {numDocs, numFeatures} from '../../src/rank/dataset.js'
import {DEFAULT_LAMBDAMART, predictRow, scoreDataset, trainLambdaMart} from '../../src/rank/lambdamart.js'
import {fromSavedModel, readModel, toSavedModel, writeModel} from '../../src/rank/model.js'
import {PackedEnsemble} from '../../src/rank/packed.js'
import {generateSynthetic} from '../../src/rank/synthetic.js'
import {Rng} from '../../src/util/rng.js'

function expectIdentical(a: Float64Array, b: Float64Array): void {
  expect(a.length).toBe(b.length)
  let differing = 0
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) differing++
  expect(differing).toBe(0)
}

describe('PackedEnsemble', () => {
  const data = generateSynthetic({queries: 60, minDocs: 8, maxDocs: 20, seed: 11})
  // 10 trees: not a multiple of the 4 lock-step lanes, so the tail loop runs too.
  const {model} = trainLambdaMart(data, {...DEFAULT_LAMBDAMART, trees: 10, minDataInLeaf: 5})

  it('scores exactly like the trainer (bit for bit) on the training rows', () => {
    const packed = new PackedEnsemble(model)
    expect(model.trees.length).toBe(10)
    expectIdentical(
      packed.scoreAll(data.features, numDocs(data), new Float64Array(numDocs(data))),
      scoreDataset(model, data),
    )
  })

  it('keeps exact equality through save and load, on unseen rows with NaN and extreme values', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'kt-rank-')), 'm.json')
    writeModel(path, toSavedModel(model, {}, {}, {}))
    const loaded = fromSavedModel(readModel(path))
    const packed = new PackedEnsemble(loaded)
    const rng = new Rng(4)
    const width = numFeatures(data)
    const rows = Float64Array.from({length: 500 * width}, (_, i) =>
      i % 37 === 0 ? Number.NaN : i % 41 === 0 ? 1e300 : rng.uniform(-0.5, 1.5),
    )
    const trainer = Float64Array.from({length: 500}, (_, d) => predictRow(model, rows, d * width))
    expectIdentical(packed.scoreAll(rows, 500, new Float64Array(500)), trainer)
  })

  it('lays children side by side and walks 100 complete depth-6 trees exactly', () => {
    const rng = new Rng(2)
    const big = {
      featureNames: Array.from({length: 12}, (_, i) => String(i)),
      trees: Array.from({length: 100}, () => randomCompleteTree(6, 12, rng)),
    }
    const packed = new PackedEnsemble(big)
    expect(Math.max(...packed.depth)).toBe(6)
    expect(packed.left.filter((l, n) => packed.right[n] !== l + 1).length).toBe(0)
    const rows = Float64Array.from({length: 300 * 12}, () => rng.next())
    const trainer = Float64Array.from({length: 300}, (_, d) => predictRow(big, rows, d * 12))
    expectIdentical(packed.scoreAll(rows, 300, new Float64Array(300)), trainer)
  })

  it('scores pairs and a final odd candidate in scoreAll exactly like score() one at a time', () => {
    const packed = new PackedEnsemble(model)
    const width = numFeatures(data)
    const count = 301
    const one = Float64Array.from({length: count}, (_, d) => packed.score(data.features, d * width))
    expectIdentical(packed.scoreAll(data.features, count, new Float64Array(count)), one)
    expectIdentical(
      one,
      Float64Array.from({length: count}, (_, d) => predictRow(model, data.features, d * width)),
    )
  })

  it('handles a model with a split-free tree and an empty model', () => {
    const stump = {
      featureNames: ['a'],
      trees: [
        {
          splitFeature: new Int32Array(0),
          threshold: new Float64Array(0),
          left: new Int32Array(0),
          right: new Int32Array(0),
          gain: new Float64Array(0),
          leafValue: Float64Array.of(0.25),
        },
      ],
    }
    expect(new PackedEnsemble(stump).score(Float64Array.of(3), 0)).toBe(0.25)
    expect(new PackedEnsemble({featureNames: ['a'], trees: []}).score(Float64Array.of(3), 0)).toBe(0)
  })
})
