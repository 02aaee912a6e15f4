import {describe, expect, it} from 'vitest'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {call, serve} from './helpers.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** A metric's value in /metrics text. */
function metric(text: string, name: string): number {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text)
  if (!m) throw new Error(`no ${name} in /metrics`)
  return Number(m[1])
}

describe('kt online serve: memory bounded by configuration, not by traffic', () => {
  it('holds each tenant to --max-pending and all to --max-pending-total, counting the forgotten queries', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-serve-memory-'))
    const lines: string[] = []
    const s = await serve(lines, {dir, maxPendingPerTenant: 40, maxPendingTotal: 60})
    try {
      for (const t of ['a', 'b']) expect((await call(s, 'POST', '/tenants', {tenant: t, levels: 2})).status).toBe(201)
      for (let i = 0; i < 120; i++) {
        const r = await call(s, 'POST', '/tenants/a/choose', {})
        if (r.status !== 200) throw new Error(lines.join('\n'))
      }
      // a alone: at most its own cap
      expect((await call(s, 'GET', '/tenants/a')).json.pending).toBeLessThanOrEqual(40)
      for (let i = 0; i < 120; i++) expect((await call(s, 'POST', '/tenants/b/choose', {})).status).toBe(200)
      const text = (await call(s, 'GET', '/metrics')).json as string
      // both: at most the total, b held to its share while a's remembered ones count against it
      expect(metric(text, 'kt_pending_queries')).toBeLessThanOrEqual(60 + 40)
      expect((await call(s, 'GET', '/tenants/b')).json.pending).toBeLessThanOrEqual(30)
      const a = (await call(s, 'GET', '/tenants/a')).json
      const b = (await call(s, 'GET', '/tenants/b')).json
      expect(metric(text, 'kt_pending_evicted_total')).toBe(a.counters.evicted + b.counters.evicted)
      expect(a.counters.evicted + b.counters.evicted).toBeGreaterThan(0)
    } finally {
      await s.close()
      rmSync(dir, {recursive: true, force: true})
    }
  })

  it('closes a tenant idle for --idle-tenant-seconds (its descriptor freed) and opens it again on the next request', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-serve-idle-'))
    const s = await serve([], {dir, idleTenantMs: 100})
    try {
      expect((await call(s, 'POST', '/tenants', {tenant: 'idle', levels: 2})).status).toBe(201)
      const c = await call(s, 'POST', '/tenants/idle/choose', {query_id: 'q-1'})
      expect(c.status).toBe(200)
      // polled, not timed: the check runs every 100 ms
      for (let i = 0; i < 200 && (await call(s, 'GET', '/healthz')).json.tenants_open > 0; i++) await sleep(50)
      expect((await call(s, 'GET', '/healthz')).json.tenants_open).toBe(0)
      expect(metric((await call(s, 'GET', '/metrics')).json as string, 'kt_tenants_closed_idle_total')).toBe(1)
      // reopened from its snapshot: the query is still remembered
      const f = await call(s, 'POST', '/tenants/idle/feedback', {query_id: 'q-1', used: true})
      expect(f.status).toBe(200)
      expect(f.json.verdict).toBe('applied')
    } finally {
      await s.close()
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
