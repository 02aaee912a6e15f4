import http from 'node:http'
import type {AddressInfo} from 'node:net'
import {afterEach, describe, expect, it} from 'vitest'
import {parseEngineFile} from '../../src/adapters/file.js'
import {httpObjective} from '../../src/adapters/http.js'
import {TrialFailure} from '../../src/adapters/metrics.js'

type Handler = (req: http.IncomingMessage, body: string, res: http.ServerResponse, n: number) => void

const servers: http.Server[] = []
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise((r) => {
          s.closeAllConnections()
          s.close(r)
        }),
    ),
  )
})

/** A loopback server counting requests and connections. */
async function serve(
  handler: Handler,
): Promise<{url: string; requests: () => number; connections: () => number; bodies: unknown[]}> {
  let requests = 0
  let connections = 0
  const bodies: unknown[] = []
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString()))
    req.on('end', () => {
      requests++
      bodies.push(JSON.parse(body))
      handler(req, body, res, requests)
    })
  })
  server.on('connection', () => connections++)
  servers.push(server)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const {port} = server.address() as AddressInfo
  return {url: `http://127.0.0.1:${port}/trial`, requests: () => requests, connections: () => connections, bodies}
}

function objective(url: string, extra: Record<string, unknown> = {}) {
  const spec = parseEngineFile(
    {
      kt_engine: 1,
      name: 'web',
      parameters: [{name: 'x', type: 'float', low: 0, high: 1, default: 0.5, env: 'WEB_X'}],
      evaluate: {kind: 'http', url, timeout_s: 2, retries: 2, ...extra},
      tiers: [
        {name: 'small', budget: 1},
        {name: 'big', budget: 3},
      ],
      objectives: [
        {metric: 'acc', direction: 'maximize'},
        {metric: 'p99_ms', direction: 'minimize'},
      ],
    },
    'web.json',
  )
  return httpObjective(spec, spec.evaluate as never)
}

const json = (res: http.ServerResponse, status: number, value: unknown): void => {
  res.writeHead(status, {'content-type': 'application/json'})
  res.end(JSON.stringify(value))
}

async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p
  } catch (error) {
    expect(error).toBeInstanceOf(TrialFailure)
    return (error as Error).message
  }
  throw new Error('no failure')
}

describe('http adapter', () => {
  it('POSTs {config, budget, tier, trial_id, seed} and reads the metrics; one keep-alive connection for many trials', async () => {
    const s = await serve((_, __, res) => json(res, 200, {acc: 0.8, p99_ms: 12}))
    const o = objective(s.url)
    const r = await o.evaluate({x: 0.25}, 3, {trialId: 5, configId: 'c', seed: 42})
    expect(r).toMatchObject({loss: -0.8, values: [-0.8, 12], metrics: {acc: 0.8, p99_ms: 12}})
    expect(s.bodies[0]).toEqual({config: {x: 0.25}, budget: 3, tier: 'big', trial_id: 5, seed: 42})
    for (let i = 0; i < 4; i++) await o.evaluate({x: 0.5}, 1, {trialId: i, configId: 'c', seed: 42})
    expect(s.requests()).toBe(5)
    expect(s.connections()).toBe(1)
    await o.close!()
  })

  it('a 4xx is never retried; a 5xx fails the trial with its status', async () => {
    const bad = await serve((_, __, res) => json(res, 422, {error: 'x out of range'}))
    expect(
      await failure(Promise.resolve(objective(bad.url).evaluate({x: 0.5}, 1, {trialId: 0, configId: 'c', seed: 0}))),
    ).toMatch(/^HTTP 422 from .* \(not retried\): \{"error":"x out of range"\}$/)
    expect(bad.requests()).toBe(1)
    const down = await serve((_, __, res) => json(res, 503, {}))
    expect(
      await failure(Promise.resolve(objective(down.url).evaluate({x: 0.5}, 1, {trialId: 0, configId: 'c', seed: 0}))),
    ).toMatch(/^HTTP 503/)
  })

  it('a dropped connection is retried with backoff and then succeeds; a refused one fails after the retries', async () => {
    const flaky = await serve((req, _, res, n) =>
      n === 1 ? req.socket.destroy() : json(res, 200, {acc: 1, p99_ms: 1}),
    )
    const r = await objective(flaky.url).evaluate({x: 0.5}, 1, {trialId: 0, configId: 'c', seed: 0})
    expect(r.loss).toBe(-1)
    expect(flaky.requests()).toBe(2)
    // a port nothing listens on (a server started and closed)
    const gone = await serve(() => undefined)
    servers.pop()!.close()
    const t0 = Date.now()
    expect(
      await failure(Promise.resolve(objective(gone.url).evaluate({x: 0.5}, 1, {trialId: 0, configId: 'c', seed: 0}))),
    ).toMatch(/^connection failed after 3 attempts: ECONNREFUSED/)
    // backoff 100 ms then 200 ms
    expect(Date.now() - t0).toBeGreaterThanOrEqual(300)
  })

  it('no answer within timeout_s fails the trial; a body that is not a JSON object fails it too', async () => {
    const silent = await serve(() => undefined)
    expect(
      await failure(
        Promise.resolve(
          objective(silent.url, {timeout_s: 0.3}).evaluate({x: 0.5}, 1, {trialId: 0, configId: 'c', seed: 0}),
        ),
      ),
    ).toBe('timed out after 0.3 s (no complete response)')
    const garbage = await serve((_, __, res) => {
      res.writeHead(200)
      res.end('<html>oops</html>')
    })
    expect(
      await failure(
        Promise.resolve(objective(garbage.url).evaluate({x: 0.5}, 1, {trialId: 0, configId: 'c', seed: 0})),
      ),
    ).toMatch(/^the response is not JSON .*<html>oops<\/html>$/)
  })
})
