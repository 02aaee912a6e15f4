import {describe, expect, it} from 'vitest'
import {
  importanceOf,
  scoreColumns,
  detailLevelIndex,
  detailLevels,
  tokenBudget,
} from '../../src/engine/importance/score.js'
import {computeSignals, decaySignal, habituationSignal, relevanceSignal} from '../../src/engine/importance/signals.js'
import {IMPORTANCE_SPACE} from '../../src/engine/importance/space.js'
import {configFromEnv} from '../../src/space/space.js'
import {estimateTokens} from '../../src/data/text/tokenize.js'

const T = {FULL: 0.75, CHUNKS: 0.5, SUMMARY: 0.2}
const BASE = {decay: 0.4, surprise: 0.3, relevance: 0.2, habituation: 0.1}

describe('importance scoring', () => {
  it('is the weighted sum of the signals, clamped to [0, 1]', () => {
    // 0.4*0.5 + 0.3*1 + 0.2*0.25 + 0.1*0 = 0.55
    expect(importanceOf({decay: 0.5, surprise: 1, relevance: 0.25, habituation: 0}, BASE)).toBeCloseTo(0.55, 15)
    expect(
      importanceOf(
        {decay: 1, surprise: 1, relevance: 1, habituation: 1},
        {decay: 1, surprise: 1, relevance: 1, habituation: 1},
      ),
    ).toBe(1)
  })

  it('scores columns exactly as one turn at a time', () => {
    const cols = {
      n: 3,
      decay: Float64Array.of(1, 0.5, 0),
      surprise: Float64Array.of(0.2, 0.9, 0.1),
      relevance: Float64Array.of(0, 1, 0.3),
      habituation: Float64Array.of(1, 0.5, 1 / 3),
    }
    const out = scoreColumns(cols, BASE)
    for (let i = 0; i < 3; i++)
      expect(out[i]).toBe(
        importanceOf(
          {
            decay: cols.decay[i],
            surprise: cols.surprise[i],
            relevance: cols.relevance[i],
            habituation: cols.habituation[i],
          },
          BASE,
        ),
      )
  })

  it('maps scores to detail levels at the thresholds (inclusive)', () => {
    expect([0.75, 0.7499, 0.5, 0.2, 0.1999].map((s) => detailLevelIndex(s, T))).toEqual([3, 2, 2, 1, 0])
  })

  it('costs tokens by level', () => {
    const levels = detailLevels(Float64Array.of(0.9, 0.6, 0.3, 0.1), T)
    // 100*1 + 100*0.5 + 100*0.15 + 100*0
    expect(
      tokenBudget(levels, Float64Array.of(100, 100, 100, 100), {FULL: 1, CHUNKS: 0.5, SUMMARY: 0.15, DROPPED: 0}),
    ).toBeCloseTo(165, 12)
  })
})

describe('signals', () => {
  it('decays as exp(-age / time scale)', () => {
    expect(decaySignal(0, 168)).toBe(1)
    expect(decaySignal(168, 168)).toBeCloseTo(Math.exp(-1), 15)
    expect(decaySignal(-5, 168)).toBe(1)
  })

  it('habituates repeats in time order: 1, 1/2, 1/3', () => {
    // the same content words in a different order and case count as a repeat
    const h = habituationSignal(['Flight to Paris', 'budget review', 'paris flight', 'flight paris!'], [0, 1, 2, 3])
    expect(Array.from(h)).toEqual([1, 1, 0.5, 1 / 3])
    // order comes from time, not position
    expect(Array.from(habituationSignal(['paris flight', 'flight paris'], [10, 5]))).toEqual([0.5, 1])
  })

  it('gives relevance 1 to a turn that is its query, 0 to one that shares no word', () => {
    const r = relevanceSignal(
      ['hotel booking in paris', 'garden compost soil', 'hotel garden'],
      ['hotel booking in paris', 'hotel booking in paris', 'hotel booking in paris'],
    )
    expect(r[0]).toBeCloseTo(1, 12)
    expect(r[1]).toBe(0)
    expect(r[2]).toBeGreaterThan(0)
    expect(r[2]).toBeLessThan(1)
  })

  it('measures ages from the reference time, never the clock', () => {
    const ref = Date.UTC(2025, 0, 1)
    const s = computeSignals(
      {referenceTimeMs: ref, turns: [{timeMs: ref - 168 * 3_600_000, text: 'a note', surprise: 0.5, query: 'note'}]},
      168,
    )
    expect(s.ageHours[0]).toBe(168)
    expect(s.decay[0]).toBeCloseTo(Math.exp(-1), 15)
    expect(s.tokens[0]).toBe(estimateTokens('a note'))
  })
})

describe('weights from the environment', () => {
  it('reads all four weights and validates them', () => {
    const c = configFromEnv(IMPORTANCE_SPACE, {
      IMPORTANCE_WEIGHT_DECAY: '0.1',
      IMPORTANCE_WEIGHT_SURPRISE: '0.5',
      IMPORTANCE_WEIGHT_RELEVANCE: '0.3',
      IMPORTANCE_WEIGHT_HABITUATION: '0.1',
    })
    expect(c.surprise).toBe(0.5)
    expect(configFromEnv(IMPORTANCE_SPACE, {}).decay).toBe(0.4)
  })

  it('names the variable of an invalid value', () => {
    const env = {
      IMPORTANCE_WEIGHT_DECAY: 'abc',
      IMPORTANCE_WEIGHT_SURPRISE: '0.5',
      IMPORTANCE_WEIGHT_RELEVANCE: '0.3',
      IMPORTANCE_WEIGHT_HABITUATION: '0.1',
    }
    expect(() => configFromEnv(IMPORTANCE_SPACE, env)).toThrow(
      /IMPORTANCE_WEIGHT_DECAY: expected a finite number, got "abc"/,
    )
    expect(() => configFromEnv(IMPORTANCE_SPACE, {...env, IMPORTANCE_WEIGHT_DECAY: '-0.1'})).toThrow(
      /IMPORTANCE_WEIGHT_DECAY: expected a weight in \[0, 1\]/,
    )
    expect(() => configFromEnv(IMPORTANCE_SPACE, {...env, IMPORTANCE_WEIGHT_DECAY: '0.2'})).toThrow(/summing to 1/)
    expect(() => configFromEnv(IMPORTANCE_SPACE, {IMPORTANCE_WEIGHT_DECAY: '1'})).toThrow(
      /IMPORTANCE_WEIGHT_SURPRISE.*set together/,
    )
    expect(() => configFromEnv(IMPORTANCE_SPACE, {IMPORTANCE_TIME_SCALE_HOURS: 'NaN'})).toThrow(
      /IMPORTANCE_TIME_SCALE_HOURS/,
    )
  })
})
