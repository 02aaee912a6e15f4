import {describe, expect, it} from 'vitest'
import {defaultConfig} from '../../src/space/space.js'
import {IMPLICIT_WINDOW_MS, LABEL_WINDOW_MS, TenantLearner, type TenantInit} from '../../src/online/tenant.js'
import {TEST_SPACE} from './helpers.js'

function learner(levels = 4): TenantLearner {
  const init: TenantInit = {e: 'init', v: 1, tenant: 't', space: TEST_SPACE.id, dims: '', profile: defaultConfig(TEST_SPACE), settings: {levels, sampler: 'exact', forgetting: {kind: 'none'}}, seed: 3}
  return new TenantLearner(init, TEST_SPACE)
}

/** Issues a query at time t; returns its id and arms. */
function query(l: TenantLearner, t: number): {id: number; arms: number[]} {
  const q = l.sampleNext()
  expect(l.apply({e: 'q', id: q.id, t, arms: q.arms})).toBe('applied')
  return q
}

describe('feedback join', () => {
  it('credits a use within the window to every arm the query played, once', () => {
    const l = learner()
    const q = query(l, 0)
    const before = l.bandit.posteriors.map((p, d) => p.counts[q.arms[d] * 4 + 3])
    expect(l.apply({e: 'used', id: String(q.id), t: IMPLICIT_WINDOW_MS})).toBe('applied') // the window is inclusive
    l.bandit.posteriors.forEach((p, d) => expect(p.counts[q.arms[d] * 4 + 3]).toBe(before[d] + 1))
    expect(l.apply({e: 'used', id: String(q.id), t: IMPLICIT_WINDOW_MS})).toBe('duplicate')
    l.bandit.posteriors.forEach((p, d) => expect(p.counts[q.arms[d] * 4 + 3]).toBe(before[d] + 1))
  })

  it('credits level 0 when the window closes unused, and calls a later use late', () => {
    const l = learner()
    const q = query(l, 1000)
    const before = l.bandit.posteriors.map((p, d) => p.counts[q.arms[d] * 4])
    expect(l.apply({e: 'tick', t: 1000 + IMPLICIT_WINDOW_MS})).toBe('applied')
    expect(l.counters.expired).toBe(0)
    expect(l.apply({e: 'tick', t: 1001 + IMPLICIT_WINDOW_MS})).toBe('applied')
    expect(l.counters.expired).toBe(1)
    l.bandit.posteriors.forEach((p, d) => expect(p.counts[q.arms[d] * 4]).toBe(before[d] + 1))
    expect(l.apply({e: 'used', id: String(q.id), t: 2000 + IMPLICIT_WINDOW_MS})).toBe('late')
    expect(l.counters.late).toBe(1)
  })

  it('accepts one graded label per query inside the label window', () => {
    const l = learner()
    const q = query(l, 0)
    const before = l.bandit.posteriors.map((p, d) => p.counts[q.arms[d] * 4 + 2])
    expect(l.apply({e: 'label', id: String(q.id), t: 10, grade: 2})).toBe('applied')
    l.bandit.posteriors.forEach((p, d) => expect(p.counts[q.arms[d] * 4 + 2]).toBe(before[d] + 1))
    expect(l.apply({e: 'label', id: String(q.id), t: 20, grade: 3})).toBe('duplicate')
    const q2 = query(l, 30)
    expect(l.apply({e: 'label', id: String(q2.id), t: 31 + LABEL_WINDOW_MS, grade: 1})).toBe('late')
    expect(l.counters).toMatchObject({labels: 1, duplicate: 1, late: 1})
  })

  it('counts and ignores unknown query ids and out-of-range labels', () => {
    const l = learner()
    query(l, 0)
    const snapshot = JSON.stringify(l.bandit.save())
    for (const id of ['2', '0', 'abc', '-1', '1.5', '', '99999999999999999999'])
      expect(l.apply({e: 'used', id, t: 1})).toBe('unknown-query')
    for (const grade of [4, -1, 1.5, Number.NaN]) expect(l.apply({e: 'label', id: '1', t: 1, grade})).toBe('bad-label')
    expect(l.counters).toMatchObject({unknown: 7, badLabel: 4, used: 0, labels: 0})
    expect(JSON.stringify(l.bandit.save())).toBe(snapshot)
  })

  it('binary tenants take labels 0 and 1 only', () => {
    const l = learner(2)
    query(l, 0)
    expect(l.apply({e: 'label', id: '1', t: 1, grade: 2})).toBe('bad-label')
    expect(l.apply({e: 'label', id: '1', t: 1, grade: 1})).toBe('applied')
  })

  it('never lets time run backwards', () => {
    const l = learner()
    query(l, 10_000_000)
    query(l, 0) // an earlier clock reading counts as the latest time
    expect(l.lastT).toBe(10_000_000)
    expect(l.apply({e: 'used', id: '2', t: 10_000_000 + IMPLICIT_WINDOW_MS})).toBe('applied')
  })

  it('samples the same arms for the same seed and query number', () => {
    const a = learner(), b = learner()
    for (let i = 0; i < 5; i++) expect(query(a, i).arms).toEqual(query(b, i).arms)
  })
})
