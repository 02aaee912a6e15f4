/**
 * The `http` adapter: one POST per trial of `{config, budget, tier, trial_id, seed}` as JSON, the
 * metrics JSON object back. Keep-alive connections (one agent per objective), a per-request
 * timeout, retries with exponential backoff on connection errors only: a 4xx is the engine saying
 * the request is wrong and is never retried; a 5xx fails the trial with the status.
 */
import http from 'node:http'
import https from 'node:https'
import {activeConfig} from '../space/index.js'
import type {EvalResult, Objective} from '../space/objective.js'
import {engineTierForBudget, type EngineSpec} from './file.js'
import type {HttpEvaluate} from './file-schema.js'
import {TrialFailure, resultFromMetrics, engineObjectiveHeader} from './metrics.js'

/** First backoff after a connection error; doubled on each further retry. */
const HTTP_BACKOFF_MS = 100
/** Characters of a failing response body kept in the trial's error. */
const BODY_PREVIEW_CHARS = 300
/** Error codes of a connection that failed before any response: safe to retry. */
const RETRYABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
])

interface HttpResponse {
  readonly status: number
  readonly body: string
}

class ConnectionError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message)
  }
}

/** One POST with a timeout; connection-level failures reject with ConnectionError. */
function postJson(
  url: URL,
  body: string,
  options: {agent: http.Agent; timeoutMs: number; headers?: Record<string, string>},
): Promise<HttpResponse> {
  const client = url.protocol === 'https:' ? https : http
  return new Promise((resolve, reject) => {
    let settled = false
    const req = client.request(
      url,
      {
        method: 'POST',
        agent: options.agent,
        headers: {'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...options.headers},
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          settled = true
          clearTimeout(timer)
          resolve({status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8')})
        })
        res.on('error', (e) => fail(new ConnectionError(e.message, (e as NodeJS.ErrnoException).code)))
      },
    )
    const fail = (e: Error): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      reject(e)
    }
    const timer = setTimeout(() => {
      fail(new TrialFailure(`timed out after ${options.timeoutMs / 1000} s (no complete response)`))
      req.destroy()
    }, options.timeoutMs)
    req.on('error', (e) => fail(new ConnectionError(e.message, (e as NodeJS.ErrnoException).code)))
    req.end(body)
  })
}

/** POSTs with retries on connection errors (exponential backoff), never on an HTTP status. */
async function postWithRetries(
  url: URL,
  body: string,
  options: {agent: http.Agent; timeoutMs: number; retries: number; headers?: Record<string, string>},
): Promise<HttpResponse & {attempts: number}> {
  for (let attempt = 0; ; attempt++) {
    try {
      return {...(await postJson(url, body, options)), attempts: attempt + 1}
    } catch (error) {
      const retryable = error instanceof ConnectionError && (error.code === undefined || RETRYABLE.has(error.code))
      if (!retryable) throw error
      if (attempt >= options.retries)
        throw new TrialFailure(
          `connection failed after ${attempt + 1} attempts: ${error.code ?? ''} ${error.message}`.replace(/\s+/g, ' '),
        )
      await new Promise((r) => setTimeout(r, HTTP_BACKOFF_MS * 2 ** attempt))
    }
  }
}

export function httpObjective(spec: EngineSpec, evaluate: HttpEvaluate): Objective {
  const url = new URL(evaluate.url)
  const agent = new (url.protocol === 'https:' ? https.Agent : http.Agent)({keepAlive: true})
  const timeoutMs = evaluate.timeout_s * 1000
  return {
    ...engineObjectiveHeader(spec),
    async evaluate(config, budget, ctx): Promise<EvalResult> {
      const tier = engineTierForBudget(spec.tiers, budget)
      const body = JSON.stringify({
        config: activeConfig(spec.space, config),
        budget: tier?.budget ?? budget,
        tier: tier?.name ?? null,
        trial_id: ctx.trialId,
        seed: ctx.seed,
      })
      const res = await postWithRetries(url, body, {
        agent,
        timeoutMs,
        retries: evaluate.retries,
        headers: evaluate.headers,
      })
      const preview = res.body.slice(0, BODY_PREVIEW_CHARS).replace(/\s+/g, ' ')
      if (res.status < 200 || res.status >= 300)
        throw new TrialFailure(
          `HTTP ${res.status} from ${url.href}${res.status < 500 ? ' (not retried)' : ''}: ${preview}`,
        )
      let value: unknown
      try {
        value = JSON.parse(res.body)
      } catch (error) {
        throw new TrialFailure(`the response is not JSON (${(error as Error).message}): ${preview}`)
      }
      if (value === null || typeof value !== 'object' || Array.isArray(value))
        throw new TrialFailure(`the response is not a JSON object of metrics: ${preview}`)
      return resultFromMetrics(spec.objectives, value as Record<string, unknown>)
    },
    close() {
      agent.destroy()
    },
  }
}
