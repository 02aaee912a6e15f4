/**
 * POST /tenants {profile}: the deploy gate as kt deploy applies it (review D#3). A refused profile
 * is a 422 gate_refused JSON error and creates nothing; the service never forces (force/reason are
 * a 400: an operator forces at the CLI, kt online init --force --reason, into the server's --dir);
 * a routed profile's overrides seed each type's bandits with per_type, else a 400.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {existsSync, mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {startServer, type RunningServer} from '../../src/online/serve/server.js'
import {FAILED, sampleProfile, writeProfile} from '../deploy/helpers.js'
import {defaultConfig} from '../../src/space/space.js'
import {RETRIEVAL_SPACE} from '../../src/engine/retrieval/space.js'
import {kt} from '../online/helpers.js'

let dir: string
let server: RunningServer
const logLines: string[] = []

async function call(method: string, path: string, body?: unknown): Promise<{status: number; json: any}> {
  // JSON endpoints take JSON only (415 otherwise)
  const r = await fetch(`${server.url}${path}`, {
    method,
    body: body === undefined ? undefined : JSON.stringify(body),
    headers: body === undefined ? {} : {'content-type': 'application/json'},
  })
  return {status: r.status, json: JSON.parse(await r.text())}
}

/** The profile as a client sends it: its JSON. */
const doc = (p: unknown): unknown => JSON.parse(JSON.stringify(p))

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kt-serve-gate-'))
  server = await startServer({dir: join(dir, 'tenants'), port: 0, log: (line) => logLines.push(line)})
})

afterAll(async () => {
  await server?.close()
  rmSync(dir, {recursive: true, force: true})
})

describe('POST /tenants {profile} passes the deploy gate', () => {
  it("answers a refused profile 422 gate_refused with the gate's reason, creates nothing, and takes no force", async () => {
    const bad = doc(sampleProfile('retrieval', 'bad', FAILED))
    const refused = await call('POST', '/tenants', {tenant: 'bad', profile: bad})
    expect([refused.status, refused.json.error.code]).toEqual([422, 'gate_refused'])
    expect(refused.json.error.message).toBe(
      'deploy refused: POST /tenants: profile (retrieval profile bad): its run failed validation: no-loss on heldout (quality_delta_abs -0.087, needs >= 0); the service does not force past the gate: an operator can, with kt online init --profile FILE --force --reason "why" --dir <the server\'s --dir>',
    )
    expect(existsSync(join(dir, 'tenants', 'bad'))).toBe(false)
    expect((await call('GET', '/tenants/bad')).status).toBe(404)
    for (const extra of [{force: true, reason: 'a client decided'}, {reason: 'no force'}]) {
      const forced = await call('POST', '/tenants', {tenant: 'bad', profile: bad, ...extra})
      expect([forced.status, forced.json.error.code]).toEqual([400, 'bad_request'])
      expect(forced.json.error.message).toMatch(
        /^POST \/tenants: (force|reason): expected no (force|reason) \(the service does not force past the deploy gate: an operator can, with kt online init --profile FILE --force --reason "why" --dir <the server's --dir>\)/,
      )
    }
    expect(existsSync(join(dir, 'tenants', 'bad'))).toBe(false)
    // a profile that passes: created, its origin on record
    const good = await call('POST', '/tenants', {tenant: 'good', profile: doc(sampleProfile('retrieval', 'good'))})
    expect(good.status).toBe(201)
    expect(good.json.prior).toMatchObject({
      file: 'POST /tenants: profile',
      name: 'good',
      verdict: 'pass',
      forced: false,
      reason: null,
      gate: null,
      overrides: {},
    })
  })

  it("opens a tenant an operator forced with kt online init into the server's folder, its reason on record", async () => {
    const file = writeProfile(dir, 'bad.json', sampleProfile('retrieval', 'bad', FAILED))
    const init = kt([
      'online',
      'init',
      '--tenant',
      'forced',
      '--profile',
      file,
      '--force',
      '--reason',
      'operator trial',
      '--dir',
      join(dir, 'tenants'),
    ])
    expect(init.status).toBe(0)
    expect((await call('POST', '/tenants/forced/choose', {})).status).toBe(200)
    expect((await call('GET', '/tenants/forced')).json.prior).toMatchObject({
      name: 'bad',
      verdict: 'fail',
      forced: true,
      reason: 'operator trial',
    })
  })

  it("seeds per-type bandits from a routed profile's overrides, and answers 400 without per_type", async () => {
    const routed = doc({...sampleProfile('routed', 'routed'), overrides: {temporal: {'bm25.k1': 2.9}}})
    const refused = await call('POST', '/tenants', {tenant: 'routed', profile: routed})
    expect([refused.status, refused.json.error.code]).toEqual([400, 'bad_request'])
    expect(refused.json.error.message).toBe(
      'POST /tenants: profile: overrides: expected a tenant with one set of bandits per query type (per_type: true), whose types start from their overrides, or a profile without overrides, got a routed profile overriding temporal (bm25.k1), which one set of bandits would drop',
    )
    // bm25.k1 untuned: a temporal query plays the override itself, any other the base
    const created = await call('POST', '/tenants', {
      tenant: 'routed',
      profile: routed,
      per_type: true,
      tuned: ['bm25.b'],
    })
    expect(created.status).toBe(201)
    expect(created.json.prior.overrides).toEqual({temporal: {'bm25.k1': 2.9}})
    expect((await call('POST', '/tenants/routed/choose', {type: 'temporal'})).json.config['bm25.k1']).toBe(2.9)
    expect((await call('POST', '/tenants/routed/choose', {type: 'multi_hop'})).json.config['bm25.k1']).toBe(
      defaultConfig(RETRIEVAL_SPACE)['bm25.k1'],
    )
  })
})
