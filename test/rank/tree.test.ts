import {describe, expect, it} from 'vitest'
import {applyBinning, binBounds, binOf, fitBinning, MAX_BINS} from '../../src/rank/bins.js'
import {DatasetBuilder} from '../../src/rank/dataset.js'
import {growTree, predictTree, type TreeParams} from '../../src/rank/tree.js'

const params: TreeParams = {
  maxLeaves: 2,
  maxDepth: 0,
  minDataInLeaf: 1,
  minSumHessianInLeaf: 1e-3,
  l2: 0,
  learningRate: 0.1,
}

/** One query whose documents have the given feature rows. */
function dataset(rows: number[][]) {
  const builder = new DatasetBuilder()
  builder.beginQuery('1')
  for (const row of rows) builder.addRow(0, Float64Array.from(row))
  return builder.build('hand')
}

/**
 * Hand example: feature x = 1..5, gradients g = [-2, -1, 0, 1, 3], Hessians h = [1, 1, 1, 1, 2].
 * G = 1, H = 6, parent term G^2/H = 1/6. Gains G_L^2/H_L + G_R^2/H_R - 1/6 for x <= t:
 *   t = 1.5: 4/1 + 9/5 - 1/6 = 5.6333
 *   t = 2.5: 9/2 + 16/4 - 1/6 = 8.3333   <- best
 *   t = 3.5: 9/3 + 16/3 - 1/6 = 8.1667
 *   t = 4.5: 4/4 + 9/2 - 1/6 = 5.3333
 * Newton leaves times learning rate 0.1: left -(-3)/2 * 0.1 = 0.15, right -(4)/4 * 0.1 = -0.1.
 * A second feature [1, 2, 1, 2, 1] splits {0,2,4} (G=1, H=4) from {1,3} (G=0, H=2):
 *   1/4 + 0 - 1/6 = 0.0833, far worse.
 */
describe('growTree', () => {
  const data = dataset([
    [1, 1],
    [2, 2],
    [3, 1],
    [4, 2],
    [5, 1],
  ])
  const grad = Float64Array.from([-2, -1, 0, 1, 3])
  const hess = Float64Array.from([1, 1, 1, 1, 2])

  it('picks the hand-computed best split, threshold, gain and Newton leaf values', () => {
    const binned = applyBinning(data, fitBinning(data))
    const {tree, leafOfDoc} = growTree(binned, grad, hess, params)
    expect(Array.from(tree.splitFeature)).toEqual([0])
    expect(tree.threshold[0]).toBe(2.5)
    expect(tree.gain[0]).toBeCloseTo(8 + 1 / 3, 12)
    expect(tree.leafValue[0]).toBeCloseTo(0.15, 12)
    expect(tree.leafValue[1]).toBeCloseTo(-0.1, 12)
    expect(Array.from(leafOfDoc)).toEqual([0, 0, 1, 1, 1])
    expect(predictTree(tree, [2.5, 0], 0)).toBeCloseTo(0.15, 12)
    expect(predictTree(tree, [2.6, 0], 0)).toBeCloseTo(-0.1, 12)
  })

  it('grows the next best split with a larger leaf budget (x <= 3.5 inside the right part)', () => {
    // Right leaf {x=3,4,5}: g [0,1,3], h [1,1,2], G 4, H 4, term 4.
    //   t = 3.5: 0/1 + 16/3 - 4 = 1.3333; t = 4.5: 1/2 + 9/2 - 4 = 1.0. Left leaf {1,2}: 4 + 1 - 4.5 = 0.5.
    const binned = applyBinning(data, fitBinning(data))
    const {tree} = growTree(binned, grad, hess, {...params, maxLeaves: 3})
    expect(Array.from(tree.threshold)).toEqual([2.5, 3.5])
    expect(tree.gain[1]).toBeCloseTo(4 / 3, 12)
  })

  it('does not split when every split loses, or when a leaf would get too few documents', () => {
    const binned = applyBinning(data, fitBinning(data))
    const same = Float64Array.from([-1, -1, -1, -1, -1])
    expect(growTree(binned, same, Float64Array.from([1, 1, 1, 1, 1]), params).tree.splitFeature.length).toBe(0)
    const {tree} = growTree(binned, grad, hess, {...params, minDataInLeaf: 3})
    expect(tree.splitFeature.length).toBe(0)
    expect(tree.leafValue[0]).toBeCloseTo((-1 / 6) * 0.1, 12)
  })

  it('respects the depth limit', () => {
    const binned = applyBinning(data, fitBinning(data))
    const {tree} = growTree(binned, grad, hess, {...params, maxLeaves: 5, maxDepth: 1})
    expect(tree.splitFeature.length).toBe(1)
  })
})

describe('feature binning', () => {
  it('puts one bin per distinct value with midpoint bounds when few values', () => {
    expect(Array.from(binBounds(Float64Array.from([3, 1, 2, 2]), MAX_BINS))).toEqual([1.5, 2.5, Infinity])
  })

  it('caps the bins at the limit with about equal counts and never splits a value', () => {
    const values = Float64Array.from({length: 1000}, (_, i) => i % 500)
    const bounds = binBounds(values, 10)
    expect(bounds.length).toBeLessThanOrEqual(10)
    const counts = new Array(bounds.length).fill(0)
    for (const v of values) counts[binOf(bounds, v)]++
    for (const c of counts.slice(0, -1)) expect(c).toBeGreaterThanOrEqual(90)
    expect(counts.reduce((a, b) => a + b, 0)).toBe(1000)
  })

  it('maps a value to the first bin whose bound is >= the value', () => {
    const upper = Float64Array.from([1.5, 2.5, Infinity])
    expect([0, 1.5, 1.6, 2.5, 99].map((v) => binOf(upper, v))).toEqual([0, 0, 1, 1, 2])
  })
})
