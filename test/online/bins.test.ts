import {describe, expect, it} from 'vitest'
import {ARMS_PER_PARAM, configFromArms, dimensionsOf, projectFlooredSimplex} from '../../src/online/bins.js'
import {profilePrior, PROFILE_PRIOR_STRENGTH} from '../../src/online/prior.js'
import {TEST_SPACE} from './helpers.js'
import {defaultConfig, validateConfig} from '../../src/space/space.js'
import {RETRIEVAL_SPACE} from '../../src/engine/retrieval/space.js'

describe('bins', () => {
  const dims = dimensionsOf(TEST_SPACE)
  const byKey = Object.fromEntries(dims.map((d) => [d.key, d]))

  it('cuts a linear range into ten equal bins played at their centres', () => {
    const d = byKey.lin
    expect(d.values).toHaveLength(ARMS_PER_PARAM)
    expect((d.values as number[]).map((v) => +v.toFixed(12))).toEqual([
      0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 0.95,
    ])
    expect([d.binOf(0), d.binOf(0.5), d.binOf(0.55), d.binOf(1)]).toEqual([0, 5, 5, 9])
  })

  it('bins a log-scale range in log space (geometric centres)', () => {
    const d = byKey.logf
    expect(d.values[0]).toBeCloseTo(Math.pow(8760, 0.05), 10) // 1.5745
    expect(d.values[9]).toBeCloseTo(Math.pow(8760, 0.95), 8)
    expect(d.binOf(168)).toBe(Math.floor((Math.log(168) / Math.log(8760)) * 10)) // 5
  })

  it('gives a short integer range one arm per value and a long one distinct rounded centres', () => {
    expect(byKey.small.values).toEqual([1, 2, 3, 4, 5, 6])
    // 20^((i+.5)/10) rounds to 1,2,2,3,4,5,7,9,13,17; duplicates pushed up to stay distinct
    expect(byKey.logi.values).toEqual([1, 2, 3, 4, 5, 6, 7, 9, 13, 17])
    expect(byKey.logi.binOf(8)).toBe(7) // ln 9 - ln 8 = .118 < ln 8 - ln 7 = .134: 8 plays as 9
  })

  it('gives a categorical one arm per choice', () => {
    expect(byKey.cat.values).toEqual(['a', 'b', 'c'])
    expect(byKey.cat.binOf('c')).toBe(2)
  })

  it('projects sampled simplex members back onto the floored simplex', () => {
    // [.95, .95, .05] - .05 = [.9, .9, 0] onto mass .85: threshold .475 -> [.425, .425, 0] + .05
    const w = projectFlooredSimplex([0.95, 0.95, 0.05], 0.05)
    expect(w[0]).toBeCloseTo(0.475, 12)
    expect(w[1]).toBeCloseTo(0.475, 12)
    expect(w[2]).toBeCloseTo(0.05, 12)
    expect(projectFlooredSimplex([0.2, 0.3, 0.5], 0.05).map((x) => +x.toFixed(12))).toEqual([0.2, 0.3, 0.5])
  })

  it('builds valid configurations from any arm choice', () => {
    for (let trial = 0; trial < 50; trial++) {
      const arms = dims.map((d, i) => (trial * (i + 3)) % d.values.length)
      const config = configFromArms(defaultConfig(TEST_SPACE), dims, arms)
      expect(() => validateConfig(TEST_SPACE, config, 'test')).not.toThrow()
    }
  })

  it('tunes only the named parameters when asked, and rejects unknown names', () => {
    expect(dimensionsOf(TEST_SPACE, ['cat', 'w']).map((d) => d.key)).toEqual(['cat', 'w.x', 'w.y', 'w.z'])
    expect(() => dimensionsOf(TEST_SPACE, ['nope'])).toThrow(/unknown name/)
  })

  it('handles the real retrieval space', () => {
    const rdims = dimensionsOf(RETRIEVAL_SPACE)
    const config = configFromArms(
      defaultConfig(RETRIEVAL_SPACE),
      rdims,
      rdims.map((d) => d.values.length - 1),
    )
    expect(() => validateConfig(RETRIEVAL_SPACE, config, 'test')).not.toThrow()
  })
})

describe('profile prior', () => {
  const dims = dimensionsOf(TEST_SPACE)
  it('puts top-level mass on the profile bin and, by a Gaussian kernel, on its neighbours', () => {
    const prior = profilePrior(dims[0], 0.55, 2) // bin 5
    const top = (arm: number) => prior[arm * 2 + 1]
    expect(top(5)).toBe(1 + PROFILE_PRIOR_STRENGTH)
    expect(top(4)).toBeCloseTo(1 + PROFILE_PRIOR_STRENGTH * Math.exp(-0.5), 12)
    expect(top(7)).toBeCloseTo(1 + PROFILE_PRIOR_STRENGTH * Math.exp(-2), 12)
    expect(top(9)).toBe(1) // exp(-8) is negligible
    for (let arm = 0; arm < 10; arm++) expect(prior[arm * 2]).toBe(1) // the low level keeps the flat prior
  })

  it("scales with a tenant's prior strength", () => {
    const prior = profilePrior(dims[0], 0.55, 2, 10)
    expect(prior[5 * 2 + 1]).toBe(11)
    expect(prior[4 * 2 + 1]).toBeCloseTo(1 + 10 * Math.exp(-0.5), 12)
    expect(Array.from(profilePrior(dims[0], 0.55, 2, 0))).toEqual(new Array(20).fill(1))
  })

  it('gives a categorical prior to the profile choice only', () => {
    const prior = profilePrior(dims[4], 'b', 3)
    expect(Array.from(prior)).toEqual([1, 1, 1, 1, 1, 1 + PROFILE_PRIOR_STRENGTH, 1, 1, 1])
  })
})
