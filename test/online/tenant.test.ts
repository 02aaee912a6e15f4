import {describe, expect, it} from 'vitest'
import {defaultConfig} from '../../src/space/space.js'
import {IMPLICIT_WINDOW_MS, LABEL_WINDOW_MS, TenantLearner, type TenantInit} from '../../src/online/tenant.js'
import {TEST_SPACE} from './helpers.js'
import {forgettingDefaults} from '../../src/online/forgetting.js'
import type {BanditSettings} from '../../src/online/bandit.js'
import {Rng} from '../../src/util/rng.js'

function learner(levels = 4, settings: Partial<BanditSettings> = {}): TenantLearner {
  const init: TenantInit = {
    e: 'init',
    v: 1,
    tenant: 't',
    space: TEST_SPACE.id,
    dims: '',
    profile: defaultConfig(TEST_SPACE),
    settings: {levels, sampler: 'exact', forgetting: {kind: 'none'}, ...settings},
    seed: 3,
  }
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
    const a = learner(),
      b = learner()
    for (let i = 0; i < 5; i++) expect(query(a, i).arms).toEqual(query(b, i).arms)
  })

  it("a tenant's own implicit window: a use on its last millisecond counts, one after it is late", () => {
    const l = learner(4, {implicitWindowMs: 1000})
    const a = query(l, 0)
    expect(l.apply({e: 'used', id: String(a.id), t: 1000})).toBe('applied')
    const b = query(l, 2000)
    expect(l.apply({e: 'used', id: String(b.id), t: 3001})).toBe('late')
    expect(l.counters).toMatchObject({used: 1, expired: 1, late: 1})
  })

  it('labels-only tenants take each label as the query\'s outcome: no 0 when the implicit window closes, and "used" is refused', () => {
    const l = learner(4, {feedback: 'labels'})
    const q = query(l, 0)
    const total = (): number => l.bandit.posteriors.reduce((s, p) => s + p.counts.reduce((a, b) => a + b, 0), 0)
    const before = total()
    expect(l.apply({e: 'label', id: String(q.id), t: 1000, grade: 3})).toBe('applied')
    expect(l.apply({e: 'tick', t: 10 * IMPLICIT_WINDOW_MS})).toBe('applied')
    // one observation per dimension: the label's
    expect(total()).toBe(before + l.bandit.posteriors.length)
    expect(l.counters).toMatchObject({labels: 1, expired: 0})
    const q2 = query(l, 10 * IMPLICIT_WINDOW_MS)
    expect(l.apply({e: 'used', id: String(q2.id), t: 10 * IMPLICIT_WINDOW_MS + 1})).toBe('not-accepted')
    expect(l.counters.notAccepted).toBe(1)
    expect(total()).toBe(before + l.bandit.posteriors.length)
  })
})

describe('profile prior', () => {
  it("a stronger prior keeps a new tenant's first draws nearer its profile", () => {
    const nearShare = (strength: number): number => {
      let near = 0,
        total = 0
      for (let seed = 0; seed < 300; seed++) {
        const init: TenantInit = {
          e: 'init',
          v: 1,
          tenant: 't',
          space: TEST_SPACE.id,
          dims: '',
          profile: defaultConfig(TEST_SPACE),
          settings: {levels: 2, sampler: 'logit', forgetting: {kind: 'none'}, priorStrength: strength},
          seed,
        }
        const l = new TenantLearner(init, TEST_SPACE)
        const {arms} = l.sampleNext()
        l.bandit.dims.forEach((d, i) => {
          total++
          if (Math.abs(arms[i] - d.binOf(init.profile[d.key])) <= 1) near++
        })
      }
      return near / total
    }
    const weak = nearShare(2)
    const strong = nearShare(30)
    expect(weak).toBeLessThan(0.75) // the default explores around the profile
    expect(strong).toBeGreaterThan(0.85)
    expect(nearShare(0)).toBeLessThan(weak)
  })
})

describe('snapshots', () => {
  /** A seeded stream of queries, uses, labels and ticks over a few windows. */
  function events(n: number, seed: number): Array<Parameters<TenantLearner['apply']>[0]> {
    const rng = new Rng(seed)
    const out: Array<Parameters<TenantLearner['apply']>[0]> = []
    let t = 0
    let issued = 0
    for (let i = 0; i < n; i++) {
      t += rng.int(20_000)
      const u = rng.next()
      if (u < 0.5 || issued === 0) out.push({e: 'q', id: ++issued, t, arms: []})
      // feedback for one of the last few queries, so most of it lands inside the windows
      else if (u < 0.8) out.push({e: 'used', id: String(issued - rng.int(Math.min(issued, 4))), t})
      else if (u < 0.9) out.push({e: 'label', id: String(issued - rng.int(Math.min(issued, 4))), t, grade: rng.int(4)})
      else out.push({e: 'tick', t})
    }
    return out
  }

  /** Applies the events, filling in each query's arms from the learner as the CLI does. */
  function play(l: TenantLearner, e: Parameters<TenantLearner['apply']>[0]): void {
    if (e.e === 'q') {
      const q = l.sampleNext()
      l.apply({...e, id: q.id, arms: q.arms})
    } else l.apply(e)
  }

  it('a learner restored from its snapshot after every event ends where one that never stopped does (adaptive forgetting sees every settled outcome)', () => {
    for (const feedback of ['implicit', 'labels'] as const) {
      const settings: Partial<BanditSettings> = {forgetting: forgettingDefaults('adaptive'), feedback}
      const straight = learner(4, settings)
      let restarted = learner(4, settings)
      for (const e of events(1000, 5)) {
        play(straight, e)
        play(restarted, e)
        const state = JSON.parse(JSON.stringify(restarted.save()))
        restarted = learner(4, settings)
        restarted.load(state)
      }
      expect(restarted.save()).toEqual(straight.save())
      if (feedback === 'implicit') expect(straight.counters.used).toBeGreaterThan(100)
      else expect(straight.counters.labels).toBeGreaterThan(50)
    }
  })
})
