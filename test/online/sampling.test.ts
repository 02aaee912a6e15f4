import {describe, expect, it} from 'vitest'
import {Rng} from '../../src/util/rng.js'
import {
  DrawStream,
  fastBeta,
  fastGamma,
  fastNormal,
  gammaMT,
  sampleMeanExact,
  sampleMeanGaussian,
} from '../../src/online/sampling.js'

/** Sample mean and variance of n draws. */
function moments(n: number, draw: () => number): {mean: number; variance: number} {
  let s = 0,
    s2 = 0
  for (let i = 0; i < n; i++) {
    const x = draw()
    s += x
    s2 += x * x
  }
  const mean = s / n
  return {mean, variance: s2 / n - mean * mean}
}

/** |sample variance - v| within 4 standard errors (normal-theory se v sqrt(2/n); bounded draws have lighter tails). */
function expectVariance(sample: number, v: number, n: number): void {
  expect(Math.abs(sample - v)).toBeLessThan(4 * v * Math.sqrt(2 / n))
}

describe('ziggurat normal', () => {
  it('has mean 0, variance 1 and normal tail shares', () => {
    const rng = new Rng(11)
    const n = 200_000
    let beyond2 = 0,
      beyond3 = 0
    const m = moments(n, () => {
      const z = fastNormal(rng)
      if (Math.abs(z) > 2) beyond2++
      if (Math.abs(z) > 3) beyond3++
      return z
    })
    // se of the mean 1/sqrt(n) = 0.0022; allow 4 se
    expect(Math.abs(m.mean)).toBeLessThan(0.009)
    // se of the variance sqrt(2/n) = 0.0032
    expect(Math.abs(m.variance - 1)).toBeLessThan(0.013)
    // P(|Z| > 2) = 0.0455 (se 0.00047), P(|Z| > 3) = 0.0027 (se 0.00012): the tail path works
    expect(Math.abs(beyond2 / n - 0.0455)).toBeLessThan(0.0019)
    expect(Math.abs(beyond3 / n - 0.0027)).toBeLessThan(0.0005)
  })
})

describe('gamma and beta draws', () => {
  it.each([0.5, 1, 2.5, 12])('Gamma(%s) has mean and variance equal to the shape', (shape) => {
    const rng = new Rng(5)
    const n = 100_000
    const m = moments(n, () => fastGamma(rng, shape))
    const se = Math.sqrt(shape / n)
    expect(Math.abs(m.mean - shape)).toBeLessThan(4 * se)
    // variance of the sample variance of a gamma: (kurtosis excess 6/k) => sd ~ k sqrt((2 + 6/k)/n)
    expect(Math.abs(m.variance - shape)).toBeLessThan(4 * shape * Math.sqrt((2 + 6 / shape) / n))
  })

  it('Beta(3, 7) has mean 0.3 and variance 0.3*0.7/11', () => {
    const rng = new Rng(6)
    const m = moments(100_000, () => fastBeta(rng, 3, 7))
    expect(m.mean).toBeCloseTo(0.3, 2)
    expectVariance(m.variance, 0.21 / 11, 100_000)
  })
})

describe('expected-reward draws of a Dirichlet', () => {
  // Dirichlet(2, 1, 3, 4) over rewards 0, 1/3, 2/3, 1: mean = (0*2 + 1/3*1 + 2/3*3 + 1*4) / 10 = 19/30;
  // E[r^2] = (1/9 + 4/9*3 + 4) / 10 = (1/9 + 12/9 + 36/9) / 10 = 49/90; variance = (49/90 - (19/30)^2) / 11
  const alpha = Float64Array.from([9, 9, 2, 1, 3, 4]) // offset 2 holds the arm
  const mean = 19 / 30
  const variance = (49 / 90 - mean * mean) / 11

  it('the exact draw has the Dirichlet mean and variance', () => {
    const rng = new Rng(8)
    const m = moments(100_000, () => sampleMeanExact(rng, alpha, 2, 4))
    expect(Math.abs(m.mean - mean)).toBeLessThan(4 * Math.sqrt(variance / 100_000))
    expectVariance(m.variance, variance, 100_000)
  })

  it('the Gaussian draw matches the same two moments', () => {
    const rng = new Rng(9)
    const m = moments(100_000, () => sampleMeanGaussian(rng, alpha, 2, 4))
    expect(Math.abs(m.mean - mean)).toBeLessThan(4 * Math.sqrt(variance / 100_000))
    expectVariance(m.variance, variance, 100_000)
  })

  it('two levels are Beta(alpha_1, alpha_0)', () => {
    const rng = new Rng(10)
    const counts = Float64Array.from([7, 3]) // Beta(3, 7): mean 0.3
    const m = moments(100_000, () => sampleMeanExact(rng, counts, 0, 2))
    expect(m.mean).toBeCloseTo(0.3, 2)
    expectVariance(m.variance, 0.21 / 11, 100_000)
  })
})

/** xoshiro128** written out with unsigned arithmetic (Blackman & Vigna's reference `next`), independent of DrawStream's int32 form. */
function referenceXoshiro(state: number[]): () => number {
  const s = state.map((x) => x >>> 0)
  const rotl = (x: number, k: number) => ((x << k) | (x >>> (32 - k))) >>> 0
  const mul = (a: number, b: number) => Number((BigInt(a) * BigInt(b)) & 0xffffffffn)
  return () => {
    const result = mul(rotl(mul(s[1], 5), 7), 9)
    const t = (s[1] << 9) >>> 0
    s[2] = (s[2] ^ s[0]) >>> 0
    s[3] = (s[3] ^ s[1]) >>> 0
    s[1] = (s[1] ^ s[2]) >>> 0
    s[0] = (s[0] ^ s[3]) >>> 0
    s[2] = (s[2] ^ t) >>> 0
    s[3] = rotl(s[3], 11)
    return result
  }
}

describe('draw stream', () => {
  it('is xoshiro128** seeded with four draws of its source', () => {
    const words = [1, 2, 3, 4]
    let i = 0
    const stream = new DrawStream({nextU32: () => words[i++]})
    // first output by hand: rotl(2 * 5, 7) * 9 = 1280 * 9
    expect(stream.nextU32()).toBe(11520)
    const ref = referenceXoshiro([1, 2, 3, 4])
    ref()
    for (let k = 0; k < 1000; k++) expect(stream.nextU32()).toBe(ref())
    const big = [0xffffffff, 0x80000000, 0x12345678, 0xdeadbeef]
    let j = 0
    const s2 = new DrawStream({nextU32: () => big[j++]})
    const ref2 = referenceXoshiro(big)
    for (let k = 0; k < 1000; k++) expect(s2.nextU32()).toBe(ref2())
  })

  it('feeds the cached-constant gamma draw: Gamma(2.5) from d = 2.5 - 1/3, c = 1/sqrt(9d) has mean and variance 2.5', () => {
    const stream = new DrawStream(new Rng(21))
    const d = 2.5 - 1 / 3
    const n = 100_000
    const m = moments(n, () => gammaMT(stream, d, 1 / Math.sqrt(9 * d)))
    expect(Math.abs(m.mean - 2.5)).toBeLessThan(4 * Math.sqrt(2.5 / n))
    expect(Math.abs(m.variance - 2.5)).toBeLessThan(4 * 2.5 * Math.sqrt((2 + 6 / 2.5) / n))
  })
})
