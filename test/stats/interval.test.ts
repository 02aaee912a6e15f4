import {describe, expect, it} from 'vitest'
import {acklamQuantile, normalCdf, normalCritical, normalQuantile, wilsonInterval} from '../../src/stats/interval.js'

describe('normalQuantile', () => {
  // Reference values: scipy.stats.norm.ppf(p) (scipy 1.17.1), equal to R's qnorm(p).
  const reference: Array<[number, number]> = [
    [0.5, 0],
    [0.3, -0.5244005127080409],
    [0.9, 1.2815515655446004],
    [0.95, 1.6448536269514722],
    [0.975, 1.959963984540054],
    [0.99, 2.3263478740408408],
    [0.995, 2.5758293035489004],
    [0.999, 3.090232306167813],
    [0.01, -2.3263478740408408],
    [0.02425, -1.972961051311885], // Acklam's break point
    [1e-5, -4.264890793922825],
    [1e-10, -6.361340902404056],
    [1e-100, -21.273453560965322],
    [1e-300, -37.0470962993612],
  ]
  it('matches scipy.stats.norm.ppf to about double precision after the Halley step', () => {
    for (const [p, z] of reference) {
      expect(Math.abs(normalQuantile(p) - z)).toBeLessThanOrEqual(1e-14 * Math.abs(z) + 1e-15)
    }
    expect(normalQuantile(0.975)).toBeCloseTo(1.959963985, 9)
  })
  it("keeps Acklam's stated relative error (1.15e-9) before refinement", () => {
    for (const [p, z] of reference) {
      expect(Math.abs(acklamQuantile(p) - z)).toBeLessThanOrEqual(1.15e-9 * Math.abs(z) + 1e-15)
    }
  })
  it('is antisymmetric and infinite at the ends', () => {
    expect(normalQuantile(0.2)).toBeCloseTo(-normalQuantile(0.8), 12)
    expect(normalQuantile(0)).toBe(-Infinity)
    expect(normalQuantile(1)).toBe(Infinity)
    expect(() => normalQuantile(1.1)).toThrow(RangeError)
    expect(() => normalQuantile(NaN)).toThrow(RangeError)
  })
  it('gives the two-sided critical value', () => {
    expect(normalCritical(0.95)).toBeCloseTo(1.959963984540054, 8)
    expect(normalCritical(0.9)).toBeCloseTo(1.6448536269514722, 8)
    expect(() => normalCritical(1)).toThrow(RangeError)
  })
})

describe('normalCdf', () => {
  it('matches scipy.stats.norm.cdf, with full relative precision in the lower tail', () => {
    // scipy.stats.norm.cdf(x), scipy 1.17.1
    const reference: Array<[number, number]> = [
      [-20, 2.7536241186061556e-89],
      [-8, 6.22096057427174e-16],
      [-5, 2.866515718791933e-7],
      [-3, 0.0013498980316300933],
      [-2.5, 0.006209665325776132],
      [-1, 0.15865525393145707],
      [0, 0.5],
      [0.3, 0.6179114221889526],
      [1.96, 0.9750021048517795],
      [3.5, 0.9997673709209645],
    ]
    for (const [x, p] of reference) expect(Math.abs(normalCdf(x) - p)).toBeLessThanOrEqual(1e-13 * p)
    expect(normalCdf(NaN)).toBeNaN()
    expect(normalCdf(-Infinity)).toBe(0)
    expect(normalCdf(Infinity)).toBe(1)
  })
  it('inverts normalQuantile', () => {
    for (const p of [1e-12, 0.001, 0.2, 0.5, 0.8, 0.999]) expect(normalCdf(normalQuantile(p))).toBeCloseTo(p, 14)
  })
})

describe('wilsonInterval', () => {
  it('matches scipy.stats.binomtest(k, n).proportion_ci(method="wilson")', () => {
    // Reference values from scipy 1.17.1 (same as R prop.test(k, n, correct = FALSE)).
    const cases: Array<[number, number, number, number, number]> = [
      [8, 10, 0.95, 0.4901624715366418, 0.9433178485456248],
      [0, 20, 0.95, 0, 0.16112515805281935],
      [37, 50, 0.9, 0.6275387029219314, 0.8278213679006591],
      [1, 1, 0.99, 0.13097754328018596, 1],
    ]
    for (const [k, n, c, low, high] of cases) {
      const ci = wilsonInterval(k, n, c)!
      expect(ci.estimate).toBe(k / n)
      expect(ci.low).toBeCloseTo(low, 8)
      expect(ci.high).toBeCloseTo(high, 8)
    }
  })
  it('defaults to 95% and is null with no trials', () => {
    expect(wilsonInterval(8, 10)!.low).toBeCloseTo(0.4901624715366418, 8)
    expect(wilsonInterval(0, 0)).toBeNull()
  })
  it('rejects impossible counts', () => {
    expect(() => wilsonInterval(11, 10)).toThrow(RangeError)
    expect(() => wilsonInterval(1.5, 10)).toThrow(RangeError)
    expect(() => wilsonInterval(1, 10, 0)).toThrow(RangeError)
  })
})
