import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {connect, type Socket} from 'node:net'
import {startServer, type RunningServer} from '../../src/online/serve/server.js'
import {RawClient} from '../../src/bench/serve-client.js'
import {toSavedModel, writeModel, fromSavedModel} from '../../src/rank/model.js'
import {deploy} from '../../src/rank/deploy.js'
import {randomCompleteTree} from '../../src/bench/rerank.js'
import {PackedEnsemble} from '../../src/rank/packed.js'
import {Rng} from '../../src/util/rng.js'
import {InputError} from '../../src/util/errors.js'
import {loadEngineFile} from '../../src/adapters/file.js'
import {saveEngineSpace} from '../../src/online/spaces.js'
import {packageRoot} from '../../src/util/paths.js'

const WIDTH = 5
let dir: string
let server: RunningServer
const logLines: string[] = []
let packed: PackedEnsemble

async function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{status: number; json: any; headers: Headers}> {
  // JSON bodies declare their type (the server answers anything else 415); octet-stream callers pass their own
  const typed =
    body === undefined || body instanceof Uint8Array ? headers : {'content-type': 'application/json', ...headers}
  const r = await fetch(`${server.url}${path}`, {
    method,
    body:
      body === undefined
        ? undefined
        : typeof body === 'string' || body instanceof Uint8Array
          ? body
          : JSON.stringify(body),
    headers: typed,
  })
  const text = await r.text()
  return {status: r.status, json: text.startsWith('{') ? JSON.parse(text) : text, headers: r.headers}
}

/** Runs `fn` and returns what it logged. */
async function logged<T>(fn: () => Promise<T>): Promise<{out: T; lines: string[]}> {
  const before = logLines.length
  const out = await fn()
  return {out, lines: logLines.slice(before)}
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kt-serve-'))
  const rng = new Rng(3)
  const saved = toSavedModel(
    {
      featureNames: Array.from({length: WIDTH}, (_, i) => `f${i}`),
      trees: Array.from({length: 8}, () => randomCompleteTree(3, WIDTH, rng)),
    },
    {},
    {valid: {'ndcg@10': 0}},
    {},
  )
  writeModel(join(dir, 'model.json'), saved)
  deploy(join(dir, 'registry'), join(dir, 'model.json'), {force: 'test: random trees'})
  packed = new PackedEnsemble(fromSavedModel(saved))
  server = await startServer({
    dir: join(dir, 'tenants'),
    port: 0,
    registry: join(dir, 'registry'),
    maxConnections: 40,
    log: (line) => logLines.push(line),
  })
})

afterAll(async () => {
  await server?.close()
  rmSync(dir, {recursive: true, force: true})
})

describe('kt online serve', () => {
  it('creates a tenant, chooses, takes feedback once, and reports status and metrics', async () => {
    const created = await call('POST', '/tenants', {tenant: 'acme', levels: 2, per_type: true})
    expect(created.status).toBe(201)
    expect(created.json.settings).toMatchObject({levels: 2, per_type: true})
    const chosen = await call('POST', '/tenants/acme/choose', {type: 'temporal'})
    expect(chosen.status).toBe(200)
    expect(chosen.json).toMatchObject({query_id: '1', kt_query_id: 1, type: 'temporal'})
    expect(Object.keys(chosen.json.config)).toContain('bm25.k1')
    expect((await call('POST', '/tenants/acme/feedback', {query_id: '1', used: true})).json).toEqual({
      query_id: '1',
      verdict: 'applied',
    })
    const status = await call('GET', '/tenants/acme')
    expect(status.json).toMatchObject({tenant: 'acme', queries: 1, counters: {used: 1}})
    expect(Object.keys(status.json.types)).toEqual(['temporal'])
    const metrics = await call('GET', '/metrics')
    expect(metrics.json).toMatch(/kt_http_requests_total\{route="choose",code="200"\} 1/)
    expect(metrics.json).toMatch(/kt_fsync_batches_total [1-9]/)
    expect(metrics.json).toMatch(/kt_tenants_open 1/)
    expect(metrics.json).toMatch(/kt_http_request_duration_seconds_bucket\{route="feedback",le="\+Inf"\} 1/)
    expect((await call('GET', '/healthz')).json).toMatchObject({status: 'ok'})
  })

  it('a caller query id is kept, and choosing it again returns the same configuration (a safe retry)', async () => {
    const first = await call('POST', '/tenants/acme/choose', {query_id: 'req-77', type: 'multi_hop'})
    const again = await call('POST', '/tenants/acme/choose', {query_id: 'req-77', type: 'multi_hop'})
    expect(first.json.query_id).toBe('req-77')
    expect(again.json).toMatchObject({
      query_id: 'req-77',
      kt_query_id: first.json.kt_query_id,
      arms: first.json.arms,
      repeated: true,
    })
    expect((await call('POST', '/tenants/acme/choose', {query_id: 'req-77', type: 'temporal'})).json.error.code).toBe(
      'duplicate_query_id',
    )
    expect((await call('POST', '/tenants/acme/feedback', {query_id: 'req-77', used: true})).status).toBe(200)
  })

  it('answers every kind of bad input with a JSON 4xx and one log line, and keeps serving', async () => {
    const cases: Array<[string, string, unknown, number, string, Record<string, string>?]> = [
      ['POST', '/tenants/acme/choose', '{"type": tempo', 400, 'bad_request'],
      ['POST', '/tenants/acme/choose', '', 400, 'bad_request'],
      ['POST', '/tenants/acme/choose', {tpye: 'temporal'}, 400, 'bad_request'],
      ['POST', '/tenants/acme/choose', {type: 'weather'}, 400, 'bad_request'],
      ['POST', '/tenants/acme/choose', {query_id: '12'}, 400, 'bad_request'],
      ['POST', '/tenants/nobody/choose', {}, 404, 'unknown_tenant'],
      ['GET', '/tenants/nobody', undefined, 404, 'unknown_tenant'],
      ['POST', '/tenants/..%2F..%2Fetc/choose', {}, 400, 'bad_request'],
      ['POST', '/tenants/acme/feedback', {query_id: '999', used: true}, 404, 'unknown_query'],
      ['POST', '/tenants/acme/feedback', {query_id: '1', used: true}, 409, 'already_settled'],
      ['POST', '/tenants/acme/feedback', {query_id: '1', label: 7}, 400, 'bad_request'],
      ['POST', '/tenants/acme/feedback', {query_id: '1'}, 400, 'bad_request'],
      ['POST', '/tenants', {tenant: 'acme'}, 409, 'tenant_exists'],
      ['POST', '/tenants', {tenant: 'x', levels: 'many'}, 400, 'bad_request'],
      ['POST', '/tenants', {tenant: 'y', profile: {kt_profile: 1}}, 400, 'bad_request'],
      ['GET', '/tenants/acme/choose', undefined, 405, 'method_not_allowed'],
      ['GET', '/nowhere', undefined, 404, 'not_found'],
      ['POST', '/rerank', {features: [[1, 2]]}, 400, 'bad_request'],
      ['POST', '/rerank', new Uint8Array(7), 400, 'bad_request', {'content-type': 'application/octet-stream'}],
    ]
    for (const [method, path, body, status, code, headers] of cases) {
      const {out, lines} = await logged(() => call(method, path, body, headers))
      expect([path, out.status, out.json.error?.code]).toEqual([path, status, code])
      expect(out.json.error.message.length).toBeGreaterThan(10)
      expect(lines, `${method} ${path}`).toHaveLength(1)
      expect(JSON.parse(lines[0])).toMatchObject({status, code})
    }
    // the x and y tenants were refused before anything was created
    expect((await call('GET', '/tenants/x')).status).toBe(404)
    expect((await call('POST', '/tenants/acme/choose', {})).status).toBe(200)
  })

  it('answers a body nested 100,000 deep (which JSON.parse reads and JSON.stringify overflows on) with a JSON 400 and one log line', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`
    for (const [path, body] of [
      ['/tenants/acme/choose', deep],
      ['/tenants', deep],
      ['/tenants/acme/feedback', `{"query_id":${deep}}`],
      ['/rerank', `{"features":${deep}}`],
    ]) {
      const {out, lines} = await logged(() => call('POST', path, body))
      expect([path, out.status, out.json.error?.code]).toEqual([path, 400, 'bad_request'])
      expect(out.json.error.message).toMatch(/expected JSON nested at most 256 levels deep/)
      expect(lines, path).toHaveLength(1)
    }
    expect((await call('POST', '/tenants/acme/choose', {})).status).toBe(200)
  })

  it('creates a tenant in an engine space kept by kt online init --engine (and refuses one that is not kept)', async () => {
    const unknown = await call('POST', '/tenants', {tenant: 'e1', space: 'engine:memengine-py'})
    expect([unknown.status, unknown.json.error.code]).toEqual([400, 'bad_request'])
    expect(unknown.json.error.message).toMatch(
      /space: expected one of retrieval, importance, or an engine space kept by kt online init --engine/,
    )
    // what kt online init --engine keeps beside the tenants
    const space = loadEngineFile(join(packageRoot, 'examples', 'python-engine', 'engine.json')).space
    saveEngineSpace(join(dir, 'tenants'), space)
    const created = await call('POST', '/tenants', {tenant: 'e2', space: 'engine:memengine-py'})
    expect(created.status).toBe(201)
    expect(created.json.space).toBe('engine:memengine-py')
    const chosen = await call('POST', '/tenants/e2/choose', {})
    expect(chosen.status).toBe(200)
    // the engine's parameters (its fusion simplex as its members), not the retrieval space's
    expect(Object.keys(chosen.json.config)).toEqual(expect.arrayContaining(['bm25.k1', 'candidates', 'recency.kind']))
    expect(Object.keys(chosen.json.config)).not.toContain('seeds.count')
  })

  it('refuses a body over 1 MB with 413 whether or not it declares its length', async () => {
    const big = 'x'.repeat(1024 * 1024 + 10)
    const declared = await logged(() => call('POST', '/tenants/acme/choose', big))
    expect(declared.out.status).toBe(413)
    expect(declared.out.json.error.code).toBe('body_too_large')
    expect(declared.lines).toHaveLength(1)
    // chunked: no content-length, the limit is counted while reading
    const socket = connect({port: server.port, host: '127.0.0.1'})
    const answer = await new Promise<string>((resolve) => {
      let text = ''
      socket.on('data', (d) => (text += d.toString()))
      socket.on('close', () => resolve(text))
      socket.on('error', () => resolve(text))
      socket.write(
        'POST /tenants/acme/choose HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n',
      )
      const chunk = 'y'.repeat(64 * 1024)
      for (let i = 0; i < 20; i++) socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)
    })
    expect(answer).toMatch(/^HTTP\/1\.1 413/)
    expect(answer).toMatch(/"code":"body_too_large"/)
    expect((await call('POST', '/tenants/acme/choose', {})).status).toBe(200)
  })

  it('answers malformed HTTP with a JSON 400', async () => {
    const socket = connect({port: server.port, host: '127.0.0.1'})
    const answer = await new Promise<string>((resolve) => {
      let text = ''
      socket.on('data', (d) => (text += d.toString()))
      socket.on('close', () => resolve(text))
      socket.write('THIS IS NOT HTTP\r\n\r\n')
    })
    expect(answer).toMatch(/^HTTP\/1\.1 400/)
    expect(answer).toMatch(/"code":"bad_http"/)
  })

  it('scores candidates with the deployed reranker, as JSON or float64 rows, exactly as the packed model', async () => {
    const info = await call('GET', '/rerank')
    expect(info.json).toMatchObject({model: 'v1', width: WIDTH, trees: 8})
    const rng = new Rng(9)
    const rows = Array.from({length: 50}, () => Array.from({length: WIDTH}, () => rng.next()))
    const expected = packed.scoreAll(Float64Array.from(rows.flat()), rows.length, new Float64Array(rows.length))
    const viaJson = await call('POST', '/rerank', {features: rows})
    expect(viaJson.json.scores).toEqual(Array.from(expected))
    expect(viaJson.json.order).toHaveLength(50)
    for (let i = 1; i < 50; i++)
      expect(expected[viaJson.json.order[i - 1]]).toBeGreaterThanOrEqual(expected[viaJson.json.order[i]])
    const bytes = new Uint8Array(Float64Array.from(rows.flat()).buffer)
    const viaRows = await call('POST', '/rerank', bytes, {'content-type': 'application/octet-stream'})
    expect(viaRows.json.scores).toEqual(Array.from(expected))
  })

  it("refuses float64 rows holding +-Infinity (400 naming the value, one log line) with or without a declared length, and reads NaN as a missing value (JSON's null)", async () => {
    const rng = new Rng(12)
    const count = 7 // 35 values: the module's 64-byte loop, then a tail of 3 one by one
    const rows = Array.from({length: count}, () => Array.from({length: WIDTH}, () => rng.next()))
    /** The rows as float64 bytes, sent with a content-length (written into the model's memory as they come) or chunked (no length: copied in once whole). */
    const send = (values: Float64Array, declared: boolean) => {
      const bytes = new Uint8Array(values.buffer.slice(0))
      if (declared) return call('POST', '/rerank', bytes, {'content-type': 'application/octet-stream'})
      const stream = new ReadableStream({start: (c) => (c.enqueue(bytes), c.close())})
      return fetch(`${server.url}/rerank`, {
        method: 'POST',
        body: stream,
        headers: {'content-type': 'application/octet-stream'},
        duplex: 'half',
      } as RequestInit).then(async (r) => ({status: r.status, json: JSON.parse(await r.text())}))
    }
    for (const declared of [true, false]) {
      for (const [at, value] of [
        [0, Infinity],
        [17, -Infinity],
        [34, Infinity],
        [33, -Infinity],
      ] as const) {
        const values = Float64Array.from(rows.flat())
        values[at] = value
        if (at === 33) values[34] = Infinity
        const {out, lines} = await logged(() => send(values, declared))
        expect([out.status, out.json.error?.code], `${at} ${declared}`).toEqual([400, 'bad_request'])
        expect(out.json.error.message).toBe(
          `POST /rerank: features[${Math.floor(at / WIDTH)}][${at % WIDTH}]: expected a finite number or NaN (a missing value, as null in JSON), got ${value} (a number beyond float64's range)`,
        )
        expect(lines).toHaveLength(1)
      }
      // NaN (any payload, either sign) is the missing value null is in JSON: the same answer
      const withNull: Array<Array<number | null>> = rows.map((row) => [...row])
      withNull[2][1] = null
      withNull[6][4] = null
      const values = Float64Array.from(rows.flat())
      values[2 * WIDTH + 1] = Number.NaN
      new BigUint64Array(values.buffer)[6 * WIDTH + 4] = 0xfff0_0000_dead_beefn
      const viaRows = await send(values, declared)
      expect(viaRows.status).toBe(200)
      expect(viaRows.json).toEqual((await call('POST', '/rerank', {features: withNull})).json)
    }
    expect(
      (
        await call('POST', '/rerank', new Uint8Array(Float64Array.from(rows.flat()).buffer), {
          'content-type': 'application/octet-stream',
        })
      ).status,
    ).toBe(200)
  })

  it('reads short-decimal JSON bodies (the fast path), with null, whitespace and a grown buffer, exactly as JSON.parse would', async () => {
    const rng = new Rng(10)
    for (const count of [1, 7, 300, 3]) {
      const rows: Array<Array<number | null>> = Array.from({length: count}, () =>
        Array.from({length: WIDTH}, () => Number(rng.uniform(-2, 2).toFixed(4))),
      )
      rows[0][1] = null
      const flat = Float64Array.from(rows.flat().map((v) => (v === null ? Number.NaN : v)))
      const expected = packed.scoreAll(flat, count, new Float64Array(count))
      for (const text of [JSON.stringify({features: rows}), JSON.stringify({features: rows}, null, 2)]) {
        const r = await call('POST', '/rerank', text)
        expect(r.status).toBe(200)
        expect(r.json.scores).toEqual(Array.from(expected))
      }
    }
    // outside the fast form: the JSON.parse path answers as before
    const short = await call('POST', '/rerank', '{"features": [[1, 2, 3, 4, 5], [1, 2]]}')
    expect(short.status).toBe(400)
    expect(short.json.error.message).toBe(
      "POST /rerank: features[1]: expected 5 numbers (the model's feature_names), got [1,2]",
    )
    // another field: refused, like every other endpoint's unknown fields (test/serve/hardening.test.ts)
    const extra = await call('POST', '/rerank', '{"features": [[1, 2, 3, 4, 5]], "trace": true}')
    expect(extra.status).toBe(400)
  })

  it("writes /rerank bodies into the model's memory as they arrive, and answers exactly when requests interleave (a half-sent body while others are scored, bodies in many small chunks)", async () => {
    const rng = new Rng(11)
    const candidates = (count: number): number[][] =>
      Array.from({length: count}, () => Array.from({length: WIDTH}, () => rng.next()))
    const scoresOf = (rows: number[][]): number[] =>
      Array.from(packed.scoreAll(Float64Array.from(rows.flat()), rows.length, new Float64Array(rows.length)))
    /** POST /rerank over a raw socket, the body in `parts`, `between(k)` awaited after part k; the parsed answer. */
    const raw = (
      body: Buffer,
      type: string,
      parts: number[],
      between: (k: number) => Promise<void>,
    ): Promise<{status: number; json: any}> =>
      new Promise((resolve, reject) => {
        const socket = connect({port: server.port, host: '127.0.0.1'})
        let text = Buffer.alloc(0)
        socket.on('data', (d) => {
          text = Buffer.concat([text, d])
          const end = text.indexOf('\r\n\r\n')
          const length = Number(/content-length: (\d+)/i.exec(text.toString('latin1', 0, end))?.[1] ?? -1)
          if (end >= 0 && text.length >= end + 4 + length) {
            socket.destroy()
            resolve({
              status: Number(text.toString('latin1', 9, 12)),
              json: JSON.parse(text.toString('utf8', end + 4, end + 4 + length)),
            })
          }
        })
        socket.on('error', reject)
        socket.setNoDelay(true)
        socket.on('connect', async () => {
          socket.write(
            `POST /rerank HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: ${type}\r\ncontent-length: ${body.length}\r\n\r\n`,
          )
          let at = 0
          for (let k = 0; k < parts.length && at < body.length; k++) {
            const to = k === parts.length - 1 ? body.length : Math.min(body.length, at + parts[k])
            socket.write(body.subarray(at, to))
            at = to
            await between(k)
          }
        })
      })
    const pause = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 20))
    const a = candidates(40)
    const aJson = Buffer.from(JSON.stringify({features: a}))
    const aRows = Buffer.from(Float64Array.from(a.flat()).buffer)
    const asRows = (rows: number[][]): Uint8Array => new Uint8Array(Float64Array.from(rows.flat()).buffer)
    for (const [body, type] of [
      [aJson, 'application/json'],
      [aRows, 'application/octet-stream'],
    ] as const) {
      // half of A in; then B, of A's form and size (the same memory layout), is scored meanwhile; or
      // C (the other form), or D (more rows: the memory laid out again); then the rest of A
      for (const other of [
        () =>
          type === 'application/json'
            ? call('POST', '/rerank', {features: candidates(40)})
            : call('POST', '/rerank', asRows(candidates(40)), {'content-type': type}),
        () =>
          type === 'application/json'
            ? call('POST', '/rerank', asRows(candidates(3)), {'content-type': 'application/octet-stream'})
            : call('POST', '/rerank', {features: candidates(3)}),
        () => call('POST', '/rerank', {features: candidates(300)}),
      ]) {
        const answerA = raw(body, type, [body.length >> 1, body.length], async (k) => {
          if (k > 0) return
          await pause()
          expect((await other()).status).toBe(200)
        })
        expect((await answerA).json.scores).toEqual(scoresOf(a))
      }
      // the body in chunks of 1 to 700 bytes, each sent on its own
      const sizes = Array.from({length: 200}, () => 1 + Math.floor(rng.next() * 700))
      expect((await raw(body, type, sizes, () => new Promise((resolve) => setImmediate(resolve)))).json.scores).toEqual(
        scoresOf(a),
      )
    }
    // afterwards, whole bodies are read in place again and answer exactly
    const e = candidates(50)
    expect((await call('POST', '/rerank', {features: e})).json.scores).toEqual(scoresOf(e))
  })

  it('over the connection limit answers 429 with Retry-After and keeps serving the clients already connected', async () => {
    const client = new RawClient(server.port)
    expect((await client.request('GET', '/healthz')).status).toBe(200)
    const open = server.metrics.connections // this client and fetch's kept-alive connections
    const flood: Socket[] = []
    let refused = 0
    await Promise.all(
      Array.from(
        {length: 60},
        () =>
          new Promise<void>((resolve) => {
            const s = connect({port: server.port, host: '127.0.0.1'})
            s.on('data', (d) => {
              const text = d.toString()
              if (
                text.startsWith('HTTP/1.1 429') &&
                /\r\nretry-after: 1\r\n/.test(text) &&
                /"code":"overloaded"/.test(text)
              )
                refused++
            })
            s.on('connect', () => resolve())
            s.on('error', () => resolve())
            flood.push(s)
          }),
      ),
    )
    // limit 40: the connections already open and 40 - open of the flood fit, the rest is refused
    // (the answers may take a while on a loaded machine: wait for them, a few seconds at most)
    const expected = 60 - (40 - open)
    for (let waited = 0; refused < expected && waited < 5000; waited += 20) await new Promise((r) => setTimeout(r, 20))
    await new Promise((r) => setTimeout(r, 50))
    expect(refused).toBe(expected)
    expect(server.metrics.connectionsRejected).toBe(refused)
    const served = await client.request('POST', '/tenants/acme/choose', '{}')
    expect(served.status).toBe(200)
    for (const s of flood) s.destroy()
    client.close()
    await new Promise((r) => setTimeout(r, 100))
    expect((await call('GET', '/healthz')).status).toBe(200)
  })

  it('refuses to bind off loopback without a token, and checks the token when it has one', async () => {
    await expect(startServer({dir, host: '0.0.0.0', port: 0})).rejects.toThrow(InputError)
    const guarded = await startServer({
      dir: join(dir, 'tenants2'),
      port: 0,
      token: 'a-token-of-16-chars!',
      log: () => undefined,
    })
    try {
      const none = await fetch(`${guarded.url}/tenants/acme`)
      expect(none.status).toBe(401)
      const wrong = await fetch(`${guarded.url}/tenants`, {
        method: 'POST',
        body: '{"tenant":"a"}',
        headers: {authorization: 'Bearer a-token-of-16-chars?', 'content-type': 'application/json'},
      })
      expect(wrong.status).toBe(401)
      const right = await fetch(`${guarded.url}/tenants`, {
        method: 'POST',
        body: '{"tenant":"a"}',
        headers: {authorization: 'Bearer a-token-of-16-chars!', 'content-type': 'application/json'},
      })
      expect(right.status).toBe(201)
      expect((await fetch(`${guarded.url}/healthz`)).status).toBe(200)
    } finally {
      await guarded.close()
    }
  })
})
