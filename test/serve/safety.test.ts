/**
 * The service's safety fixes of the 2026-12-02 review (src/online/README.md, "The service"): each
 * test fails on the build before its fix.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {spawn, type ChildProcess} from 'node:child_process'
import {startServer, type RunningServer, type ServeOptions} from '../../src/serve/server.js'
import {processStartTime} from '../../src/online/store.js'
import {LOCK_WAIT_MS} from '../../src/util/lock.js'
import {MAX_IMPLICIT_WINDOW_MS} from '../../src/online/tenant.js'
import {MAX_DECAY_EVERY_QUERIES} from '../../src/online/forgetting.js'

let root: string

interface Answer {
  status: number
  json: any
  headers: Headers
}

async function call(s: RunningServer, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const r = await fetch(`${s.url}${path}`, {method, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body), headers: body === undefined ? headers : {'content-type': 'application/json', ...headers}})
  const text = await r.text()
  return {status: r.status, json: text.startsWith('{') ? JSON.parse(text) : text, headers: r.headers}
}

async function serve(lines: string[], options: Partial<ServeOptions> & {dir: string}): Promise<RunningServer> {
  return startServer({port: 0, log: (line) => lines.push(line), ...options})
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'kt-serve-safety-'))
})

afterAll(() => {
  rmSync(root, {recursive: true, force: true})
})

describe('kt online serve: creating a tenant whose folder lock another process holds', () => {
  let holder: ChildProcess
  beforeAll(() => {
    holder = spawn('sleep', ['60'], {stdio: 'ignore'})
  })
  afterAll(() => {
    holder.kill('SIGKILL')
  })

  it('answers 503 tenant_busy at once instead of freezing every request for the lock wait (S#4)', async () => {
    const dir = join(root, 'lock')
    mkdirSync(join(dir, 'x'), {recursive: true})
    writeFileSync(join(dir, 'x', 'lock'), `${holder.pid} ${processStartTime(holder.pid!)} 0123abcd\n`)
    const lines: string[] = []
    const s = await serve(lines, {dir})
    try {
      const started = performance.now()
      const [create, health] = await Promise.all([call(s, 'POST', '/tenants', {tenant: 'x'}), call(s, 'GET', '/healthz')])
      const ms = performance.now() - started
      expect(create.status, JSON.stringify(create.json)).toBe(503)
      expect(create.json.error).toMatchObject({code: 'tenant_busy', retry: true})
      expect(health.status).toBe(200)
      // the busy-wait took LOCK_WAIT_MS (5 s) and held /healthz as long
      expect(ms).toBeLessThan(LOCK_WAIT_MS / 4)
    } finally {
      await s.close()
    }
  })
})

describe('kt online serve: tenant spec numbers have upper bounds (S#7)', () => {
  it('refuses implicit_window_ms and decay_every beyond their named bounds with a 400 naming the field and the bound; the bounds themselves are taken', async () => {
    const lines: string[] = []
    const s = await serve(lines, {dir: join(root, 'bounds')})
    try {
      for (const [body, field, bound] of [
        ['{"tenant":"w","implicit_window_ms":1e300}', 'implicit_window_ms', `1..${MAX_IMPLICIT_WINDOW_MS}`],
        [`{"tenant":"w","implicit_window_ms":${MAX_IMPLICIT_WINDOW_MS + 1}}`, 'implicit_window_ms', `1..${MAX_IMPLICIT_WINDOW_MS}`],
        ['{"tenant":"d","decay_every":1e300}', 'decay_every', `1..${MAX_DECAY_EVERY_QUERIES}`],
        [`{"tenant":"d","decay_every":${MAX_DECAY_EVERY_QUERIES + 1}}`, 'decay_every', `1..${MAX_DECAY_EVERY_QUERIES}`],
      ]) {
        const r = await call(s, 'POST', '/tenants', body)
        expect(r.status, body).toBe(400)
        expect(r.json.error.message).toContain(`${field}: expected`)
        expect(r.json.error.message).toContain(bound)
      }
      expect((await call(s, 'POST', '/tenants', {tenant: 'w', implicit_window_ms: MAX_IMPLICIT_WINDOW_MS})).status).toBe(201)
      expect((await call(s, 'POST', '/tenants', {tenant: 'd', decay_every: MAX_DECAY_EVERY_QUERIES})).status).toBe(201)
    } finally {
      await s.close()
    }
  })
})
