import {describe, expect, it} from 'vitest'
import {RETRIEVAL_SPACE} from '../../src/engine/retrieval/space.js'
import {IMPORTANCE_SPACE} from '../../src/engine/importance/space.js'
import {dimensionsOf} from '../../src/online/bins.js'
import {resolveSpec} from '../../src/online/tenant-spec.js'
import {spaceFingerprint} from '../../src/deploy/profile.js'
import {applyOverrides} from '../../src/search/space-overrides.js'
import {checkSpace, onlineTuned, withoutOnline} from '../../src/space/space.js'
import type {ParamSpace} from '../../src/space/types.js'
import {InputError} from '../../src/util/errors.js'

/**
 * The list src/online/spaces.ts kept beside the table (RETRIEVAL_TUNED) before the `online` column
 * replaced it, copied here as it was: tenants created since must tune exactly these, in this order.
 */
const FORMER_RETRIEVAL_TUNED = [
  'bm25.k1',
  'bm25.b',
  'seeds.count',
  'seeds.entity',
  'spread.retention',
  'spread.max_depth',
  'spread.inhibition',
  'edge.temporal',
  'actr.decay',
  'actr.alpha',
  'fusion',
]

describe('the online column of a parameter table', () => {
  it('gives the retrieval space the set the former list named, in the same order, and the same 13 bandit dimensions', () => {
    expect(onlineTuned(RETRIEVAL_SPACE)).toEqual(FORMER_RETRIEVAL_TUNED)
    const dims = dimensionsOf(RETRIEVAL_SPACE, onlineTuned(RETRIEVAL_SPACE)).map((d) => d.key)
    expect(dims).toEqual(dimensionsOf(RETRIEVAL_SPACE, FORMER_RETRIEVAL_TUNED).map((d) => d.key))
    expect(dims).toHaveLength(13)
    // a new tenant's settings carry the list exactly as before (it is written to the tenant's log)
    expect(resolveSpec({}).settings.tuned).toEqual(FORMER_RETRIEVAL_TUNED)
    expect(resolveSpec({tuned: ['bm25.b']}).settings.tuned).toEqual(['bm25.b'])
  })

  it('marks nothing in a space that tunes every parameter', () => {
    expect(onlineTuned(IMPORTANCE_SPACE)).toBeUndefined()
    expect(resolveSpec({space: 'importance'}).settings.tuned).toBeUndefined()
  })

  it('is refused by checkSpace unless true or false, in one line naming the parameter', () => {
    const bad = {id: 'x', params: [{...RETRIEVAL_SPACE.params[0], online: 'yes'}]} as unknown as ParamSpace
    expect(() => checkSpace(bad)).toThrow(InputError)
    expect(() => checkSpace(bad)).toThrow(/^parameter space x: bm25\.k1: online: expected true or false, got "yes"$/)
  })

  it('is left out of searched spaces and engine-profile fingerprints, which it does not change', () => {
    const stripped = withoutOnline(RETRIEVAL_SPACE)
    expect(JSON.stringify(stripped)).not.toContain('online')
    expect(stripped.params.map((p) => p.name)).toEqual(RETRIEVAL_SPACE.params.map((p) => p.name))
    expect(withoutOnline(IMPORTANCE_SPACE)).toBe(IMPORTANCE_SPACE)
    expect(spaceFingerprint(RETRIEVAL_SPACE)).toBe(spaceFingerprint(stripped))
    // a changed range still changes the fingerprint
    const narrowed = applyOverrides(RETRIEVAL_SPACE, {range: ['bm25.k1=0.5:2']}).space
    expect(spaceFingerprint(narrowed)).not.toBe(spaceFingerprint(RETRIEVAL_SPACE))
    // a study stores the searched space: the same JSON a study created before the column had
    expect(JSON.stringify(applyOverrides(RETRIEVAL_SPACE, {}).space)).toBe(JSON.stringify(stripped))
  })
})
