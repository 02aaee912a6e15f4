import {describe, expect, it} from 'vitest'
import {rmSync} from 'node:fs'
import {join} from 'node:path'
import {openTenant} from '../../src/online/index.js'
import {tempDir} from './helpers.js'

describe('a tenant over its cap of remembered queries (limitPending: the logged forget event)', () => {
  it('forgets the oldest, settles their open windows once, answers their feedback late, and replays the same', async () => {
    const dir = tempDir()
    const tenant = openTenant({dir, tenant: 'capped', create: {levels: 2, forgetting: 'none'}, snapshotEvery: 1000})
    for (let i = 0; i < 30; i++) {
      const c = await tenant.choose({query_id: `q-${i}`, now: 1000 + i})
      if (i % 3 === 0) await tenant.feedback({query_id: c.query_id, used: true, now: 1000 + i})
    }
    expect(tenant.pendingCount).toBe(30)
    expect(tenant.limitPending(40, 2000)).toBe(0)
    // past the cap: down to 90% of it in one event, oldest first
    expect(tenant.limitPending(20, 2000)).toBe(12)
    expect(tenant.pendingCount).toBe(18)
    const after = tenant.status()
    expect(after.counters.evicted).toBe(12)
    // q-0..q-11: 4 were used, the 8 open windows settled as unused (credited 0 once)
    expect(after.counters.used).toBe(10)
    expect(after.counters.expired).toBe(8)
    // by kt's id a forgotten query is late; a caller's id is no longer known (as after the label window)
    expect(await tenant.feedback({query_id: '2', used: true, now: 2001})).toEqual({query_id: '2', verdict: 'late'})
    await expect(tenant.feedback({query_id: 'q-1', used: true, now: 2001})).rejects.toMatchObject({
      code: 'unknown_query',
    })
    expect((await tenant.feedback({query_id: 'q-13', used: true, now: 2001})).verdict).toBe('applied')
    // the next query after a forget (its tick reads the implicit queue past the forgotten ones)
    expect((await tenant.choose({query_id: 'q-30', now: 2002})).kt_query_id).toBe(31)
    const counters = tenant.status().counters
    await tenant.close()
    // replayed from the log alone (snapshot removed) and from the snapshot: the same forgetting
    for (const dropSnapshot of [true, false]) {
      if (dropSnapshot) rmSync(join(dir, 'capped', 'state.json'))
      const again = openTenant({dir, tenant: 'capped'})
      expect(again.status().counters).toEqual(counters)
      expect(again.pendingCount).toBe(19)
      await again.close()
    }
  })
})
