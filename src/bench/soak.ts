/**
 * The soak of `kt bench serve --soak SECONDS`: `kt online serve` under the load of `kt bench serve`
 * (clients sending a choose and a feedback per query, as fast as the server answers) for SECONDS,
 * its resident memory (VmRSS of the server process) read every SOAK_SAMPLE_MS. After the first
 * minute the service must be at its steady state: memory bounded by its configuration (src/online/serve/memory.ts),
 * so RSS may not grow more than TARGET_SOAK_GROWTH above what it was at SOAK_BASELINE_MS.
 *
 * The server runs with its default caps (src/online/serve/memory.ts), which a full load fills within
 * the first minute even on a shared machine serving about 900 queries/s: what follows measures the
 * caps holding.
 */
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {availableParallelism, loadavg, tmpdir} from 'node:os'
import {join} from 'node:path'
import {DEFAULT_MAX_PENDING_TOTAL} from '../online/serve/memory.js'
import {createTenants, metricValue} from './serve.js'
import {RawClient} from './serve-client.js'
import {runLoad} from './serve-load.js'
import {startServerProcess, stopServerProcess} from './serve-process.js'

/** RSS is read this often. */
const SOAK_SAMPLE_MS = 10_000
/** RSS at this point of the run is the baseline (the first minute: tenants opened, caches and pools warmed). */
export const SOAK_BASELINE_MS = 60_000
/** The bar: RSS grows at most 10% after the first minute. */
export const TARGET_SOAK_GROWTH = 0.1
/** Queries at most per second of soak the load keeps latencies for (the load generator's own memory). */
const MAX_QUERIES_PER_S = 8000

export interface SoakOptions {
  seconds: number
  clients: number
  tenants: number
  seed: number
  onSample?: (sample: SoakSample) => void
}

interface SoakSample {
  /** Seconds since the load started. */
  s: number
  rss_mb: number
  /** kt_pending_queries: the queries the open tenants remember. */
  pending_queries: number
}

export interface SoakReport {
  seconds: number
  clients: number
  tenants: number
  max_pending_total: number
  samples: SoakSample[]
  /** RSS at the baseline sample (the first at or after SOAK_BASELINE_MS; the first sample in a run too short to judge). */
  baseline_mb: number
  baseline_s: number
  /** Highest RSS after the baseline. */
  max_after_mb: number
  /** max_after_mb / baseline_mb - 1. */
  growth: number
  /** Whether RSS stayed within the target; null for a run too short to judge (no sample after the first minute). */
  meets_target: boolean | null
  queries: number
  queries_per_s: number
  evicted: number
  errors: number
  first_error: string | null
  machine: {cores: number; load_average_1m_before: number; load_average_1m_after: number}
}

/** A process's resident set size in MB, from /proc (NaN when it cannot be read). */
function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) / 1024 : Number.NaN
  } catch {
    return Number.NaN
  }
}

async function metrics(port: number): Promise<string> {
  const client = new RawClient(port)
  try {
    return (await client.request('GET', '/metrics')).body.toString()
  } finally {
    client.close()
  }
}

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const dir = mkdtempSync(join(tmpdir(), 'kt-soak-'))
  const loadBefore = loadavg()[0]
  const server = await startServerProcess(['--dir', join(dir, 'tenants')])
  const pid = server.child.pid!
  const samples: SoakSample[] = []
  try {
    const tenants = await createTenants(server.port, options.tenants)
    let started = 0
    let sampling: Promise<void> = Promise.resolve()
    const take = async (): Promise<void> => {
      const s = Math.round((performance.now() - started) / 1000)
      const sample = {
        s,
        rss_mb: rssMb(pid),
        pending_queries: metricValue(await metrics(server.port), 'kt_pending_queries'),
      }
      samples.push(sample)
      options.onSample?.(sample)
    }
    let timer: NodeJS.Timeout | undefined
    const load = await runLoad({
      port: server.port,
      tenants,
      clients: options.clients,
      durationMs: options.seconds * 1000,
      maxQueries: options.seconds * MAX_QUERIES_PER_S,
      warmupMs: 0,
      seed: options.seed,
      beforeStart: async () => {
        started = performance.now()
        timer = setInterval(() => (sampling = sampling.then(take)), SOAK_SAMPLE_MS)
      },
    })
    clearInterval(timer)
    await sampling
    const evicted = metricValue(await metrics(server.port), 'kt_pending_evicted_total')
    const judged = samples.some((x) => x.s * 1000 > SOAK_BASELINE_MS)
    const baseline = samples.find((x) => x.s * 1000 >= SOAK_BASELINE_MS) ?? samples[0]
    const after = samples.filter((x) => x.s > (baseline?.s ?? 0))
    const maxAfter = after.length > 0 ? Math.max(...after.map((x) => x.rss_mb)) : (baseline?.rss_mb ?? Number.NaN)
    const growth = baseline ? maxAfter / baseline.rss_mb - 1 : Number.NaN
    return {
      seconds: options.seconds,
      clients: options.clients,
      tenants: options.tenants,
      max_pending_total: DEFAULT_MAX_PENDING_TOTAL,
      samples,
      baseline_mb: baseline?.rss_mb ?? Number.NaN,
      baseline_s: baseline?.s ?? 0,
      max_after_mb: maxAfter,
      growth,
      meets_target: judged ? growth <= TARGET_SOAK_GROWTH && load.errors === 0 : null,
      queries: load.all_queries,
      queries_per_s: load.queries_per_s,
      evicted,
      errors: load.errors,
      first_error: load.first_error,
      machine: {cores: availableParallelism(), load_average_1m_before: loadBefore, load_average_1m_after: loadavg()[0]},
    }
  } finally {
    await stopServerProcess(server, 'SIGTERM')
    rmSync(dir, {recursive: true, force: true})
  }
}
