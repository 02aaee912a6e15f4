import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {request} from 'node:http'
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {runSearch} from '../../src/study/search.js'
import {openStudyReader, type StudyReader} from '../../src/study/reader.js'
import {startDashboard, type Dashboard} from '../../src/dashboard/server.js'

const TOKEN = 'a-dashboard-token-of-32-chars!!!'

let reader: StudyReader
let open: Dashboard
let guarded: Dashboard

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kt-dash-hosts-'))
  const storage = join(dir, 'studies.sqlite')
  await runSearch({storage, study: 'b', objective: {name: 'branin'}, optimizer: 'random', seed: 1, maxTrials: 3})
  reader = await openStudyReader(storage)
  open = await startDashboard({reader, port: 0, warm: false})
  guarded = await startDashboard({reader, port: 0, warm: false, token: TOKEN})
})

afterAll(async () => {
  await open?.close()
  await guarded?.close()
  await reader?.close()
})

/** A GET with any headers (fetch forbids setting Host) and a raw path (fetch normalises it). */
function get(
  dash: Dashboard,
  path: string,
  headers: Record<string, string> = {},
): Promise<{status: number; body: string; headers: Record<string, unknown>}> {
  const url = new URL(dash.url)
  return new Promise((resolve, reject) => {
    const req = request({host: url.hostname, port: url.port, path, headers}, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (body += c))
      res.on('end', () => resolve({status: res.statusCode!, body, headers: res.headers}))
    })
    req.on('error', reject)
    req.end()
  })
}

describe('kt dashboard: who may read it (the check shared with kt online serve)', () => {
  it('without a token answers only loopback Host names: a DNS-rebound page gets 403, not the studies', async () => {
    for (const host of ['attacker.example', `attacker.example:${new URL(open.url).port}`, '127.0.0.1.evil.example']) {
      const r = await get(open, '/api/studies', {host})
      expect(r.status, host).toBe(403)
      expect(r.body).not.toContain('"b"')
      expect(JSON.parse(r.body).error).toMatch(/^Host: expected a loopback name/)
    }
    for (const host of ['localhost', `127.0.0.1:${new URL(open.url).port}`, '[::1]:80'])
      expect((await get(open, '/api/studies', {host})).status, host).toBe(200)
  })

  it('refuses to bind beyond loopback without a token, or with a short one (exit 2 from the CLI)', async () => {
    await expect(startDashboard({reader, port: 0, host: '0.0.0.0'})).rejects.toThrow(
      /^--host: expected a loopback address .* or a --token for 0\.0\.0\.0, got no token$/,
    )
    await expect(startDashboard({reader, port: 0, token: 'short'})).rejects.toThrow(
      /^--token: expected at least 16 characters, got 5$/,
    )
  })

  it('with a token: any Host, but the token is required (Bearer header, or the cookie a ?token= page URL sets)', async () => {
    const anyHost = {host: 'kt.internal:8080'}
    expect((await get(guarded, '/api/studies', anyHost)).status).toBe(401)
    expect(
      (await get(guarded, '/api/studies', {...anyHost, authorization: 'Bearer wrong-token-of-32-chars!!!!!!'})).status,
    ).toBe(401)
    expect((await get(guarded, '/api/studies', {...anyHost, authorization: `Bearer ${TOKEN}`})).status).toBe(200)
    const page = await get(guarded, `/study/b?token=${TOKEN}`, anyHost)
    expect(page.status).toBe(303)
    expect(page.headers.location).toBe('/study/b')
    const cookie = String(page.headers['set-cookie']).split(';')[0]
    expect(String(page.headers['set-cookie'])).toMatch(/HttpOnly; SameSite=Strict/)
    expect((await get(guarded, '/api/studies', {...anyHost, cookie})).status).toBe(200)
    expect((await get(guarded, '/api/studies', {...anyHost, cookie: 'kt_dashboard_token=nope'})).status).toBe(401)
  })
})

describe('kt dashboard: hostile paths get 4xx, never 500', () => {
  it('answers 404 to inherited property names under /vendor and /assets, without the server path', async () => {
    for (const path of ['/vendor/__proto__', '/vendor/constructor', '/assets/__proto__', '/assets/toString']) {
      const r = await get(open, path)
      expect(r.status, path).toBe(404)
      expect(r.body).not.toMatch(/\/work|\/home|\/tmp|node_modules/)
    }
  })

  it('answers 400 to malformed percent-encoding', async () => {
    for (const path of ['/%', '/api/studies/%E0%A4%A', '/vendor/%zz']) {
      const r = await get(open, path)
      expect(r.status, path).toBe(400)
      expect(JSON.parse(r.body).error).toMatch(/expected a path with valid percent-encoding/)
    }
  })
})
