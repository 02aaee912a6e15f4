import {describe, expect, it} from 'vitest'
import {dcgAtK, hitAtK, ndcgAtK, precisionAtK, recallAtK, reciprocalRank} from '../../src/stats/ranking.js'

// Wikipedia, "Discounted cumulative gain", worked example: grades of six ranked documents.
const WIKI = [3, 2, 3, 0, 1, 2]

describe('dcgAtK', () => {
  it('reproduces the Wikipedia example (linear gain)', () => {
    // 3/1 + 2/log2(3) + 3/2 + 0 + 1/log2(6) + 2/log2(7) = 6.861126688593502 (python, hand formula)
    expect(dcgAtK(WIKI, 6, 'linear')).toBeCloseTo(6.861126688593502, 13)
    expect(dcgAtK(WIKI, 6, 'linear')).toBeCloseTo(6.861, 3)
  })
  it('uses 2^rel - 1 for exp2 gain', () => {
    // 7 + 3/log2(3) + 7/2 + 0 + 1/log2(6) + 3/log2(7) = 13.848263629272981
    expect(dcgAtK(WIKI, 6, 'exp2')).toBeCloseTo(13.848263629272981, 12)
    // on binary grades the two gains agree
    expect(dcgAtK([1, 0, 1], 3, 'exp2')).toBe(dcgAtK([1, 0, 1], 3, 'linear'))
  })
  it('cuts at k and tolerates short lists', () => {
    // 3 + 2/log2(3) + 3/2 = 5.7618595071429155
    expect(dcgAtK(WIKI, 3, 'linear')).toBeCloseTo(5.7618595071429155, 13)
    expect(dcgAtK(WIKI, 100, 'linear')).toBe(dcgAtK(WIKI, Infinity, 'linear'))
    expect(dcgAtK(WIKI, 0, 'linear')).toBe(0)
    expect(dcgAtK([], 5, 'linear')).toBe(0)
    expect(() => dcgAtK(WIKI, -1, 'linear')).toThrow(RangeError)
    expect(() => dcgAtK(WIKI, 2.5, 'linear')).toThrow(RangeError)
  })
})

describe('ndcgAtK', () => {
  it('reproduces the Wikipedia example', () => {
    // Ideal of the six ranked grades, 3,3,2,2,1,0: IDCG@6 = 7.1409951840957, nDCG = 0.9608081943360617.
    expect(ndcgAtK(WIKI, WIKI, 6, 'linear')).toBeCloseTo(0.9608081943360617, 13)
    // With the two further judged documents (grades 3 and 2) that the ranking missed, the ideal
    // is 3,3,3,2,2,2: IDCG@6 = 8.740262365546284, nDCG = 0.785002371969948 (Wikipedia: 0.785).
    expect(ndcgAtK(WIKI, [...WIKI, 3, 2], 6, 'linear')).toBeCloseTo(0.785002371969948, 13)
    // exp2 gain: 13.848263629272981 / 18.43771793224807
    expect(ndcgAtK(WIKI, [...WIKI, 3, 2], 6, 'exp2')).toBeCloseTo(0.7510833867922446, 13)
  })
  it('is 1 for the ideal order, null when nothing is relevant, and does not mutate', () => {
    const all = new Float64Array([0, 2, 1])
    expect(ndcgAtK([2, 1, 0], all, 3, 'exp2')).toBeCloseTo(1, 15)
    expect(Array.from(all)).toEqual([0, 2, 1])
    expect(ndcgAtK([0, 0], [0, 0, 0], 2, 'linear')).toBeNull()
    expect(ndcgAtK([], [], 10, 'linear')).toBeNull()
    // A relevant item missing from the ranking counts against it.
    expect(ndcgAtK([0, 0], [1], 2, 'linear')).toBe(0)
  })
})

describe('reciprocalRank', () => {
  it('is 1 over the position of the first relevant item', () => {
    expect(reciprocalRank([false, false, true, true])).toBeCloseTo(1 / 3, 15)
    expect(reciprocalRank([1, 0])).toBe(1)
    expect(reciprocalRank([0, 0, 0])).toBe(0)
    expect(reciprocalRank([])).toBe(0)
    expect(reciprocalRank([false, false, true], 2)).toBe(0)
  })
})

describe('recallAtK, precisionAtK, hitAtK', () => {
  const ranked = ['d3', 'd1', 'd7', 'd1', 'd2']
  const relevant = ['d1', 'd2', 'd9']
  it('count distinct relevant ids in the top k', () => {
    expect(recallAtK(ranked, relevant, 2)).toBeCloseTo(1 / 3, 15)
    expect(recallAtK(ranked, relevant, 4)).toBeCloseTo(1 / 3, 15) // repeat of d1 counts once
    expect(recallAtK(ranked, new Set(relevant), 5)).toBeCloseTo(2 / 3, 15)
    expect(precisionAtK(ranked, relevant, 5)).toBeCloseTo(2 / 5, 15)
    expect(precisionAtK(['d1'], relevant, 4)).toBe(0.25)
    expect(hitAtK(ranked, relevant, 1)).toBe(0)
    expect(hitAtK(ranked, relevant, 2)).toBe(1)
    expect(hitAtK([1, 2, 3], [3], 3)).toBe(1)
  })
  it('are null when there is nothing relevant', () => {
    expect(recallAtK(ranked, [], 5)).toBeNull()
    expect(hitAtK(ranked, [], 5)).toBeNull()
    expect(precisionAtK(ranked, relevant, 0)).toBeNull()
  })
})
