import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {connect} from 'node:net'
import {spawnSync} from 'node:child_process'
import {startServer, type RunningServer} from '../../src/online/serve/server.js'
import {REGISTRY_CHECK_MS} from '../../src/online/serve/rerank.js'
import {call, serve} from './helpers.js'
import {toSavedModel, writeModel} from '../../src/rank/model.js'
import {deploy} from '../../src/rank/deploy.js'
import {REGISTRY_INDEX} from '../../src/rank/registry.js'
import {randomCompleteTree} from '../../src/bench/rerank.js'
import {Rng} from '../../src/util/rng.js'
import {InputError} from '../../src/util/errors.js'
import {packageRoot} from '../../src/util/paths.js'

const WIDTH = 3
let root: string

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Writes raw bytes to the server and resolves with everything it answers until it closes (or after `limitMs`). */
function raw(s: RunningServer, text: string, limitMs: number): Promise<{answer: string; ms: number}> {
  const started = Date.now()
  return new Promise((resolve) => {
    const socket = connect({port: s.port, host: '127.0.0.1'})
    let answer = ''
    const done = () => resolve({answer, ms: Date.now() - started})
    const timer = setTimeout(() => {
      socket.destroy()
      done()
    }, limitMs)
    socket.on('data', (d) => (answer += d.toString()))
    socket.on('close', () => {
      clearTimeout(timer)
      done()
    })
    socket.on('error', () => undefined)
    socket.write(text)
  })
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'kt-serve-hard-'))
  const rng = new Rng(5)
  for (const name of ['a', 'b']) {
    const saved = toSavedModel(
      {
        featureNames: Array.from({length: WIDTH}, (_, i) => `f${i}`),
        trees: Array.from({length: 3}, () => randomCompleteTree(2, WIDTH, rng)),
      },
      {},
      {valid: {'ndcg@10': 0}},
      {},
    )
    writeModel(join(root, `model-${name}.json`), saved)
  }
  deploy(join(root, 'registry'), join(root, 'model-a.json'), {force: 'test: random trees'})
})

afterAll(() => {
  rmSync(root, {recursive: true, force: true})
})

describe('kt online serve: server-side damage is a 5xx without server paths; client mistakes stay 4xx', () => {
  it('a tenant log changed on disk answers 500 state_damaged (choose and status), no paths to the client, one error line each', async () => {
    const dir = join(root, 'damaged')
    const lines: string[] = []
    let s = await serve(lines, {dir})
    expect((await call(s, 'POST', '/tenants', {tenant: 't', levels: 2, seed: 42})).status).toBe(201)
    expect((await call(s, 'POST', '/tenants/t/choose', {})).status).toBe(200)
    await s.close()
    const log = join(dir, 't', 'log.jsonl')
    writeFileSync(log, readFileSync(log, 'utf8').replace('"seed":42', '"seed":43'))
    s = await serve(lines, {dir})
    try {
      const before = lines.length
      for (const [method, path] of [
        ['POST', '/tenants/t/choose'],
        ['GET', '/tenants/t'],
      ]) {
        const r = await call(s, method, path, method === 'POST' ? {} : undefined)
        expect(r.status, JSON.stringify(r.json)).toBe(500)
        expect(r.json.error.code).toBe('state_damaged')
        expect(r.json.error.retry).toBe(false)
        expect(r.json.error.message).not.toContain(root)
        expect(r.json.error.message).not.toContain('log.jsonl')
      }
      const logged = lines.slice(before).map((l) => JSON.parse(l))
      expect(logged).toHaveLength(2)
      for (const l of logged) expect(l).toMatchObject({level: 'error', status: 500, code: 'state_damaged'})
      expect(logged[0].message).toContain(log)
      // the client's own mistakes are still 4xx, and other tenants are served
      expect((await call(s, 'POST', '/tenants/t/choose', '{not json')).status).toBe(400)
      expect((await call(s, 'GET', '/tenants/nobody')).status).toBe(404)
      expect((await call(s, 'POST', '/tenants', {tenant: 'u'})).status).toBe(201)
      expect((await call(s, 'POST', '/tenants/u/choose', {})).status).toBe(200)
    } finally {
      await s.close()
    }
  })

  it('a registry that becomes unreadable: /rerank keeps serving the last good model, once logged, and health and metrics say stale', async () => {
    const registry = join(root, 'registry')
    const lines: string[] = []
    const s = await serve(lines, {dir: join(root, 'rerank-tenants'), registry})
    const index = join(registry, REGISTRY_INDEX)
    const good = readFileSync(index)
    try {
      const first = await call(s, 'POST', '/rerank', {features: [[1, 2, 3]]})
      expect(first.status).toBe(200)
      expect((await call(s, 'GET', '/healthz')).json.reranker).toBe('current')
      writeFileSync(index, '{not json')
      utimesSync(index, new Date(), new Date(Date.now() + 5000))
      await sleep(REGISTRY_CHECK_MS + 100)
      const before = lines.length
      for (let i = 0; i < 3; i++) {
        const r = await call(s, 'POST', '/rerank', {features: [[1, 2, 3]]})
        expect(r.status, JSON.stringify(r.json)).toBe(200)
        expect(r.json.model).toBe(first.json.model)
      }
      const logged = lines.slice(before).map((l) => JSON.parse(l))
      expect(logged).toHaveLength(1)
      expect(logged[0]).toMatchObject({level: 'error', code: 'registry_damaged', serving: first.json.model})
      const health = await call(s, 'GET', '/healthz')
      expect(health.status).toBe(200)
      expect(health.json.reranker).toBe('stale')
      const metrics = (await call(s, 'GET', '/metrics')).json as string
      expect(metrics).toMatch(/^kt_rerank_registry_damaged 1$/m)
      expect(metrics).toMatch(/^kt_rerank_registry_errors_total 1$/m)

      // a server started on the damaged registry has no good model: 503 model_unavailable, no paths; its tenants work
      const lines2: string[] = []
      const fresh = await serve(lines2, {dir: join(root, 'rerank-tenants2'), registry})
      try {
        const r = await call(fresh, 'POST', '/rerank', {features: [[1, 2, 3]]})
        expect(r.status).toBe(503)
        expect(r.json.error).toMatchObject({code: 'model_unavailable', retry: true})
        expect(r.json.error.message).not.toContain(root)
        expect((await call(fresh, 'GET', '/healthz')).json.reranker).toBe('unavailable')
        expect((await call(fresh, 'POST', '/tenants', {tenant: 'x'})).status).toBe(201)
      } finally {
        await fresh.close()
      }

      // mended: the registry's version serves again and health says current
      writeFileSync(index, good)
      utimesSync(index, new Date(), new Date(Date.now() + 10_000))
      await sleep(REGISTRY_CHECK_MS + 100)
      expect((await call(s, 'POST', '/rerank', {features: [[1, 2, 3]]})).status).toBe(200)
      expect((await call(s, 'GET', '/healthz')).json.reranker).toBe('current')
      expect((await call(s, 'GET', '/metrics')).json).toMatch(/^kt_rerank_registry_damaged 0$/m)

      // damaged again, then the index removed (nothing deployed): no model and nothing damaged any more
      writeFileSync(index, '{not json')
      utimesSync(index, new Date(), new Date(Date.now() + 15_000))
      await sleep(REGISTRY_CHECK_MS + 100)
      expect((await call(s, 'GET', '/healthz')).json.reranker).toBe('stale')
      rmSync(index)
      await sleep(REGISTRY_CHECK_MS + 100)
      expect((await call(s, 'GET', '/healthz')).json.reranker).toBe('none')
      expect((await call(s, 'GET', '/metrics')).json).toMatch(/^kt_rerank_registry_damaged 0$/m)
    } finally {
      writeFileSync(index, good)
      await s.close()
    }
  })
})

describe('kt online serve: requests the server refuses', () => {
  let s: RunningServer
  const lines: string[] = []
  beforeAll(async () => {
    s = await serve(lines, {
      dir: join(root, 'tenants'),
      registry: join(root, 'registry'),
      token: 'a-token-of-16-chars!',
      headersTimeoutMs: 300,
      requestTimeoutMs: 600,
    })
  })
  afterAll(async () => {
    await s?.close()
  })
  const auth = {authorization: 'Bearer a-token-of-16-chars!'}

  it('refuses a client clock over HTTP (400 naming now): the server owns the time', async () => {
    expect((await call(s, 'POST', '/tenants', {tenant: 'clock', levels: 2}, auth)).status).toBe(201)
    const choose = await call(s, 'POST', '/tenants/clock/choose', {now: 8640000000000000}, auth)
    expect(choose.status).toBe(400)
    expect(choose.json.error.message).toMatch(/^POST \/tenants\/clock\/choose: now: expected no client clock/)
    const chosen = await call(s, 'POST', '/tenants/clock/choose', {}, auth)
    expect(chosen.status).toBe(200)
    const feedback = await call(
      s,
      'POST',
      '/tenants/clock/feedback',
      {query_id: chosen.json.query_id, used: true, now: 0},
      auth,
    )
    expect(feedback.status).toBe(400)
    expect(feedback.json.error.message).toMatch(/feedback: now: expected no client clock/)
    const status = await call(s, 'GET', '/tenants/clock', undefined, auth)
    expect(status.json).toMatchObject({queries: 1, pending: 1})
  })

  it('refuses hostile tenant specs: prior_strength 1e308, tuned [], seed 1e400 (described as Infinity)', async () => {
    const huge = await call(s, 'POST', '/tenants', '{"tenant":"p","prior_strength":1e308}', auth)
    expect(huge.status).toBe(400)
    expect(huge.json.error.message).toMatch(/prior_strength: expected an integer in 0\.\.100000000/)
    const empty = await call(s, 'POST', '/tenants', {tenant: 'p', tuned: []}, auth)
    expect(empty.status).toBe(400)
    expect(empty.json.error.message).toMatch(/tuned: expected a non-empty array/)
    const seed = await call(s, 'POST', '/tenants', '{"tenant":"p","seed":1e400}', auth)
    expect(seed.status).toBe(400)
    expect(seed.json.error.message).toMatch(/seed: expected .*, got Infinity \(a number beyond float64's range\)/)
  })

  it('/rerank refuses non-finite feature values and unknown fields with a 400 naming them', async () => {
    const inf = await call(s, 'POST', '/rerank', '{"features":[[1,2,1e400]]}', auth)
    expect(inf.status).toBe(400)
    expect(inf.json.error.message).toMatch(/features\[0\]\[2\]: expected a finite number or null, got Infinity/)
    const extra = await call(s, 'POST', '/rerank', '{"features":[[1,2,3]],"trace":true}', auth)
    expect(extra.status).toBe(400)
    expect(extra.json.error.message).toBe('POST /rerank: trace: expected only features, got an unknown field')
    expect((await call(s, 'POST', '/rerank', '{"features":[[1,2,3]]}', auth)).status).toBe(200)
  })

  it('takes the Bearer scheme in any case (RFC 7235), the token exactly', async () => {
    expect(
      (await call(s, 'GET', '/tenants/clock', undefined, {authorization: 'bearer a-token-of-16-chars!'})).status,
    ).toBe(200)
    expect(
      (await call(s, 'GET', '/tenants/clock', undefined, {authorization: 'BEARER a-token-of-16-chars!'})).status,
    ).toBe(200)
    expect(
      (await call(s, 'GET', '/tenants/clock', undefined, {authorization: 'bearer A-TOKEN-OF-16-CHARS!'})).status,
    ).toBe(401)
    expect(
      (await call(s, 'GET', '/tenants/clock', undefined, {authorization: 'Basic a-token-of-16-chars!'})).status,
    ).toBe(401)
  })

  it('POST /healthz is 405 with Allow', async () => {
    const r = await call(s, 'POST', '/healthz', '{}')
    expect(r.status).toBe(405)
    expect(r.headers.get('allow')).toBe('GET, HEAD')
    expect(r.json.error.code).toBe('method_not_allowed')
  })

  it('a body slower than the request timeout: one 408 line, counted as 408', async () => {
    const before = lines.length
    const r = await raw(
      s,
      `POST /noop HTTP/1.1\r\nhost: x\r\nauthorization: ${auth.authorization}\r\ncontent-length: 10\r\n\r\n{`,
      5000,
    )
    expect(r.answer).toMatch(/^HTTP\/1\.1 408/)
    await sleep(100)
    const logged = lines.slice(before).map((l) => JSON.parse(l))
    expect(logged, JSON.stringify(logged)).toHaveLength(1)
    expect(logged[0]).toMatchObject({status: 408})
    const metrics = (await call(s, 'GET', '/metrics', undefined, auth)).json as string
    expect(metrics).toMatch(/kt_http_requests_total\{route="noop",code="408"\} 1/)
    expect(metrics).not.toMatch(/route="noop",code="400"/)
  })

  it("headers slower than the headers timeout are cut within a check interval of it (not Node's 30 s check)", async () => {
    const r = await raw(s, 'GET /healthz HTTP/1.1\r\nhost: x\r\n', 5000)
    expect(r.answer).toMatch(/^HTTP\/1\.1 408/)
    expect(r.ms).toBeLessThan(300 + 1000)
  })
})

describe('kt online serve: a client that half-closes after its request', () => {
  it('gets the answer of an applied choose, and the connection ends after it', async () => {
    const lines: string[] = []
    const s = await serve(lines, {dir: join(root, 'half-closed')})
    try {
      expect((await call(s, 'POST', '/tenants', {tenant: 'h', levels: 2})).status).toBe(201)
      const body = JSON.stringify({query_id: 'half-1'})
      const answer = await new Promise<string>((resolve) => {
        const socket = connect({port: s.port, host: '127.0.0.1'})
        let text = ''
        socket.on('data', (d) => (text += d.toString()))
        socket.on('close', () => resolve(text))
        socket.on('error', () => undefined)
        // the request, then FIN: the client will send nothing more but still reads
        socket.end(
          `POST /tenants/h/choose HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        )
      })
      expect(answer).toMatch(/^HTTP\/1\.1 200 /)
      expect(answer).toContain('"query_id":"half-1"')
      // the query the answer names is the one applied
      const status = await call(s, 'GET', '/tenants/h')
      expect(status.json.queries).toBe(1)
    } finally {
      await s.close()
    }
  })
})

describe('kt online serve: a busy port', () => {
  it('is one line naming the host and port, an InputError (exit 2 from the CLI)', async () => {
    const lines: string[] = []
    const busy = await serve(lines, {dir: join(root, 'busy')})
    try {
      await expect(startServer({dir: join(root, 'busy2'), port: busy.port, log: () => undefined})).rejects.toThrow(
        InputError,
      )
      await expect(startServer({dir: join(root, 'busy2'), port: busy.port, log: () => undefined})).rejects.toThrow(
        `--port: expected a port free on 127.0.0.1, got 127.0.0.1:${busy.port} already in use`,
      )
      const cli = spawnSync(
        process.execPath,
        [
          join(packageRoot, 'bin', 'kt.js'),
          'online',
          'serve',
          '--port',
          String(busy.port),
          '--dir',
          join(root, 'busy3'),
        ],
        {encoding: 'utf8', timeout: 20_000},
      )
      expect(cli.status, cli.stderr).toBe(2)
      expect(cli.stderr.trim().split('\n')).toHaveLength(1)
      expect(cli.stderr).toContain(`127.0.0.1:${busy.port} already in use`)
    } finally {
      await busy.close()
    }
  })
})
