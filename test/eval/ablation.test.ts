import {describe, expect, it} from 'vitest'
import {ablateProfile, applyChanges, changedParameters} from '../../src/eval/ablation.js'
import {DEFAULT_HOLDOUT_SETTINGS} from '../../src/eval/holdout-validation.js'
import type {Config} from '../../src/space/types.js'

const QUESTIONS = 60
const defaults: Config = {a: 0, b: false, c: 1, d: 0.5, e: 'x', f: 7}
// f is not changed; c, d and e are changed but do nothing; a and b each answer a third of the questions
const tuned: Config = {a: 2, b: true, c: 3, d: 0.7, e: 'y', f: 7}

/** A deterministic engine: question i is answered by the defaults when i % 3 == 0, by a == 2 when i % 3 == 1, by b when i % 3 == 2. */
async function rowsOf(config: Config): Promise<Array<Record<string, number>>> {
  return Array.from({length: QUESTIONS}, (_, i) => {
    const hit = i % 3 === 0 || (i % 3 === 1 && config.a === 2) || (i % 3 === 2 && config.b === true)
    return {'recall@10': hit ? 1 : 0}
  })
}

const settings = {...DEFAULT_HOLDOUT_SETTINGS, metric: 'recall@10', resamples: 500}

describe('ablateProfile', () => {
  it('names the changed parameters and applies a subset of them to the defaults', () => {
    expect(changedParameters(defaults, tuned)).toEqual(['a', 'b', 'c', 'd', 'e'])
    expect(applyChanges(defaults, tuned, ['b'])).toEqual({...defaults, b: true})
  })

  it('finds the two changes that carry the gain and drops the three that do nothing', async () => {
    const groups = [
      {name: 'inert', parameters: ['c', 'd', 'e']},
      {name: 'untouched', parameters: ['f']},
    ]
    const r = await ablateProfile({defaults, tuned, groups, settings, rowsOf})
    expect(r.queries).toBe(QUESTIONS)
    expect(r.defaults_quality).toBeCloseTo(1 / 3, 12)
    expect(r.tuned.value).toBeCloseTo(2 / 3, 12)
    expect(r.tuned.low!).toBeGreaterThan(0)
    expect(r.minimal.changes).toEqual(['a', 'b'])
    expect(r.minimal.config).toEqual({...defaults, a: 2, b: true})
    expect(r.minimal.against_tuned.value).toBe(0)
    expect(r.minimal.steps.map((s) => s.removed).sort()).toEqual(['c', 'd', 'e'])
    const byName = new Map(r.changes.map((c) => [c.parameter, c]))
    // reverting a loses the third of the questions it answers; applying it alone gains them
    expect(byName.get('a')!.reverted.value).toBeCloseTo(-1 / 3, 12)
    expect(byName.get('a')!.reverted.high!).toBeLessThan(0)
    expect(byName.get('a')!.alone.value).toBeCloseTo(1 / 3, 12)
    expect(byName.get('c')!.reverted).toMatchObject({value: 0, low: 0, high: 0, better: 0, worse: 0})
    // a group the profile does not touch is not reported; the inert group is worth nothing
    expect(r.groups.map((g) => g.name)).toEqual(['inert'])
    expect(r.groups[0].reverted.value).toBe(0)
    expect(r.headline).toContain('2 of its 5 changes carry the gain: a, b')
  })

  it('keeps a change whose removal is outside the margin even when its point loss is small', async () => {
    // the last two questions are answered only with g == 1: removing it loses 2/60, whose interval reaches below -0.01
    const rows = async (config: Config) =>
      (await rowsOf(config)).map((r, i) => ({'recall@10': i >= 58 ? (config.g === 1 ? 1 : 0) : r['recall@10']}))
    const r = await ablateProfile({
      defaults: {...defaults, g: 0},
      tuned: {...tuned, g: 1},
      settings,
      rowsOf: rows,
    })
    expect(r.minimal.changes).toEqual(['a', 'b', 'g'])
    expect(r.minimal.against_tuned.low!).toBeGreaterThanOrEqual(-settings.margin)
  })

  it('changes the members of a linked set (a simplex) together, as one change named after it', async () => {
    const linked = [{name: 'mix', parameters: ['w1', 'w2']}]
    const rows = async (config: Config) => {
      if ((config.w1 as number) + (config.w2 as number) !== 1) throw new Error('a simplex split apart')
      return rowsOf(config)
    }
    const r = await ablateProfile({
      defaults: {...defaults, w1: 0.25, w2: 0.75},
      tuned: {...tuned, w1: 0.5, w2: 0.5},
      linked,
      settings,
      rowsOf: rows,
    })
    expect(r.changes.map((c) => c.parameter)).toEqual(['a', 'b', 'c', 'd', 'e', 'mix'])
    expect(r.changes.at(-1)).toMatchObject({parameters: ['w1', 'w2'], default: {w1: 0.25, w2: 0.75}})
    expect(r.minimal.changes).toEqual(['a', 'b'])
  })

  it('a tuned profile equal to the defaults has nothing to ablate', async () => {
    const r = await ablateProfile({defaults, tuned: {...defaults}, settings, rowsOf})
    expect(r.changes).toEqual([])
    expect(r.minimal.changes).toEqual([])
    expect(r.headline).toBe('The tuned profile changes no parameter: it is the defaults.')
  })
})
