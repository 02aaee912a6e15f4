/**
 * The load of `kt bench serve`: C concurrent clients on loopback, each serving queries one after
 * another (a choose, then a feedback "used" for the query it returned) against tenants drawn
 * uniformly, until a time or query bound. Every request's latency is kept (the first
 * `warmupMs` excluded).
 */
import {Rng} from '../util/rng.js'
import {streamSeed} from '../online/sampling.js'
import {RawClient} from './serve-client.js'

export interface LoadOptions {
  port: number
  tenants: readonly string[]
  clients: number
  durationMs: number
  /** Queries (choose + feedback) at most, over all clients. */
  maxQueries: number
  warmupMs: number
  seed: number
  token?: string
  /**
   * Runs once every client has connected (one GET /healthz each), before the clock starts: the
   * flood test opens its idle connections here, after the load's own clients hold their slots.
   */
  beforeStart?: () => Promise<void>
}

export interface LoadResult {
  /** Queries completed in the measured window (after warm-up). */
  queries: number
  /** Queries completed in all, warm-up included. */
  all_queries: number
  /** Requests measured (two per query). */
  requests: number
  seconds: number
  queries_per_s: number
  latency_ms: {p50: number; p90: number; p99: number; p999: number; max: number}
  /** Answers other than 200 (each counted once; the load stops at the first). */
  errors: number
  first_error: string | null
}

/** The q-th quantile (0..1) of sorted values, nearest rank. */
export function quantileSorted(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]
}

const QUERY_ID = /"query_id":"([^"]+)"/

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const latencies = new Float64Array(options.maxQueries * 2)
  let measured = 0
  let queries = 0
  let allQueries = 0
  let started = 0
  let errors = 0
  let firstError: string | null = null
  let t0 = 0
  let measureFrom = 0
  let stopAt = 0
  let stop = false
  let connected = 0
  let release: () => void = () => undefined
  const started0 = new Promise<void>((resolve) => (release = resolve))
  let measuredStart = Number.NaN
  let lastEnd = 0

  const loop = async (index: number): Promise<void> => {
    const client = new RawClient(options.port, '127.0.0.1', options.token)
    const rng = new Rng(streamSeed(options.seed, 'load-client', index))
    try {
      await client.request('GET', '/healthz')
      if (++connected === options.clients) {
        await options.beforeStart?.()
        t0 = performance.now()
        measureFrom = t0 + options.warmupMs
        stopAt = measureFrom + options.durationMs
        release()
      }
      await started0
      while (!stop && started < options.maxQueries) {
        const tenant = options.tenants[rng.int(options.tenants.length)]
        const a = performance.now()
        const chosen = await client.request('POST', `/tenants/${tenant}/choose`, '{}')
        const b = performance.now()
        const id = chosen.status === 200 ? QUERY_ID.exec(chosen.body.toString('latin1'))?.[1] : undefined
        if (!id) {
          errors++
          firstError ??= `choose: ${chosen.status} ${chosen.body.toString().slice(0, 200)}`
          stop = true
          break
        }
        const fed = await client.request('POST', `/tenants/${tenant}/feedback`, `{"query_id":"${id}","used":true}`)
        const c = performance.now()
        if (fed.status !== 200) {
          errors++
          firstError ??= `feedback: ${fed.status} ${fed.body.toString().slice(0, 200)}`
          stop = true
          break
        }
        allQueries++
        if (a >= measureFrom) {
          if (Number.isNaN(measuredStart)) measuredStart = a
          if (measured + 2 <= latencies.length) {
            latencies[measured++] = b - a
            latencies[measured++] = c - b
          }
          queries++
          started++
          lastEnd = c
        }
        if (c >= stopAt) stop = true
      }
    } finally {
      client.close()
    }
  }
  await Promise.all(Array.from({length: options.clients}, (_, i) => loop(i)))
  const seconds = (lastEnd - measuredStart) / 1000
  const sorted = latencies.slice(0, measured).sort()
  return {
    queries,
    all_queries: allQueries,
    requests: measured,
    seconds,
    queries_per_s: queries / seconds,
    latency_ms: {
      p50: quantileSorted(sorted, 0.5),
      p90: quantileSorted(sorted, 0.9),
      p99: quantileSorted(sorted, 0.99),
      p999: quantileSorted(sorted, 0.999),
      max: sorted[sorted.length - 1] ?? Number.NaN,
    },
    errors,
    first_error: firstError,
  }
}
