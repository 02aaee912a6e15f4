import {describe, expect, it} from 'vitest'
import {queryLambdas} from '../../src/rank/lambda.js'
import {idealDcg} from '../../src/rank/ndcg.js'

/**
 * Hand example: one query, three documents.
 *   labels  [2, 0, 1]   gains 2^rel - 1 = [3, 0, 1]
 *   scores  [0.5, 1, 0] ranking by score: doc1 (pos 0), doc0 (pos 1), doc2 (pos 2)
 *   discounts 1/log2(p + 2): pos0 1, pos1 0.6309297536, pos2 0.5
 *   ideal DCG@3 = 3 * 1 + 1 * 0.6309297536 + 0 = 3.6309297536
 * Pairs (more relevant first), sigma = 1, rho = 1 / (1 + e^(s_hi - s_lo)):
 *   (0,1): |dNDCG| = 3 * (1 - 0.6309297536) / 3.6309297536 = 0.3049386285, rho = 1/(1+e^-0.5) = 0.6224593312
 *          lambda = 0.1898118948, w = rho (1 - rho) |dNDCG| = 0.0716617097
 *   (0,2): |dNDCG| = 2 * (0.6309297536 - 0.5) / 3.6309297536 = 0.0721191334, rho = 1/(1+e^0.5) = 0.3775406688
 *          lambda = 0.0272279058, w = 0.0169482641
 *   (2,1): |dNDCG| = 1 * (1 - 0.5) / 3.6309297536 = 0.1377057762, rho = 1/(1+e^-1) = 0.7310585786
 *          lambda = 0.1006709890, w = 0.0270745989
 * grad (dC/ds): doc0 = -(0.1898118948 + 0.0272279058) = -0.2170398006
 *               doc1 = +0.1898118948 + 0.1006709890  =  0.2904828838
 *               doc2 = +0.0272279058 - 0.1006709890  = -0.0734430832
 * hess:         doc0 = 0.0716617097 + 0.0169482641 = 0.0886099738
 *               doc1 = 0.0716617097 + 0.0270745989 = 0.0987363086
 *               doc2 = 0.0169482641 + 0.0270745989 = 0.0440228629
 */
describe('queryLambdas', () => {
  const labels = Float64Array.from([2, 0, 1])
  const scores = Float64Array.from([0.5, 1, 0])

  it('matches the hand-computed lambdas and Hessians of a 3-document query (NDCG@3, sigma 1)', () => {
    const grad = new Float64Array(3)
    const hess = new Float64Array(3)
    const ideal = idealDcg(labels, 0, 3, 3)
    expect(ideal).toBeCloseTo(3.6309297536, 9)
    queryLambdas(scores, labels, 0, 3, ideal, {truncation: 3, sigma: 1}, new Int32Array(3), grad, hess)
    expect(grad[0]).toBeCloseTo(-0.2170398006, 9)
    expect(grad[1]).toBeCloseTo(0.2904828838, 9)
    expect(grad[2]).toBeCloseTo(-0.0734430832, 9)
    expect(hess[0]).toBeCloseTo(0.0886099738, 9)
    expect(hess[1]).toBeCloseTo(0.0987363086, 9)
    expect(hess[2]).toBeCloseTo(0.0440228629, 9)
    // Pairwise lambdas cancel over the query.
    expect(grad[0] + grad[1] + grad[2]).toBeCloseTo(0, 12)
  })

  /**
   * Truncation k = 1: only position 0 (doc1) has a non-zero discount; ideal DCG@1 = 3.
   *   (0,1): |dNDCG| = 3 * |0 - 1| / 3 = 1,   lambda = 0.6224593312, w = 0.2350037122
   *   (0,2): both below the cut-off: 0
   *   (2,1): |dNDCG| = 1 * |0 - 1| / 3 = 1/3, lambda = 0.2436861929, w = 0.0655373111
   */
  it('drops pairs below the truncation level', () => {
    const grad = new Float64Array(3)
    const hess = new Float64Array(3)
    queryLambdas(
      scores,
      labels,
      0,
      3,
      idealDcg(labels, 0, 3, 1),
      {truncation: 1, sigma: 1},
      new Int32Array(3),
      grad,
      hess,
    )
    expect(grad[0]).toBeCloseTo(-0.6224593312, 9)
    expect(grad[1]).toBeCloseTo(0.8661455241, 9)
    expect(grad[2]).toBeCloseTo(-0.2436861929, 9)
    expect(hess[0]).toBeCloseTo(0.2350037122, 9)
    expect(hess[2]).toBeCloseTo(0.0655373111, 9)
  })

  it('gives zero gradients to a query without relevant documents and leaves other queries alone', () => {
    const grad = Float64Array.from([9, 9, 9, 9])
    const hess = Float64Array.from([9, 9, 9, 9])
    const zeros = Float64Array.from([0, 0, 0, 0])
    queryLambdas(
      Float64Array.from([1, 2, 3, 4]),
      zeros,
      1,
      3,
      0,
      {truncation: 10, sigma: 1},
      new Int32Array(4),
      grad,
      hess,
    )
    expect(Array.from(grad)).toEqual([9, 0, 0, 9])
    expect(Array.from(hess)).toEqual([9, 0, 0, 9])
  })
})
