/** What makes `kt search` refuse to continue a stored study: the engine fingerprint (review D#5) and studies made before it. */
import {describe, expect, it} from 'vitest'
import {studyDifferences} from '../../src/study/search.js'

const base = {optimizer: 'random', seed: 42, options: {}, space: undefined}
const fp = {parameters: 'p1', evaluate: 'e1', tiers: 't1', objectives: 'o1'}
const study = (options: Record<string, unknown>) =>
  ({...base, objective: {name: 'engine', options: {file: '/x/engine.json', ...options}}}) as never

describe('studyDifferences and engine fingerprints', () => {
  it('a study made before kt stored a fingerprint continues with the same command (nothing to compare it on)', () => {
    expect(studyDifferences(study({}), study({fingerprint: fp}))).toEqual([])
  })

  it('names the parts of the engine file that changed', () => {
    expect(studyDifferences(study({fingerprint: fp}), study({fingerprint: {...fp, parameters: 'p2'}}))).toEqual([
      'engine file /x/engine.json (changed parameters since the study was created)',
    ])
  })

  it('other objective options still count', () => {
    expect(studyDifferences(study({fingerprint: fp, budget: 1}), study({fingerprint: fp, budget: 2}))).toHaveLength(1)
  })
})
