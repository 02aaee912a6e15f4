/**
 * `kt bench serve`: the service measured against the issue's targets in one run, with the server
 * as a child process (`kt online serve`, its own event loop) and the load generator in this one.
 *
 * 1. load: C clients (16), T tenants (100), each query a choose plus a feedback, for a bounded time
 *    and count: queries/s (target >= 5,000) and per-request latency p99 (target <= 5 ms).
 * 2. rerank: one client alternates POST /noop and POST /rerank with the same 50-candidate body
 *    (JSON with 6 decimals, JSON with full-precision doubles, then float64 rows), new candidates
 *    for every request (drawn before the clock starts): nothing data-dependent can learn a repeated
 *    request, and V8's number-to-string cache cannot print repeated scores for free; the
 *    difference of the medians is the endpoint's cost beyond HTTP (target <= 50 µs per 50-candidate
 *    request). `--only rerank` runs this part alone (runRerankServeBench).
 * 3. flood: F (10,000) idle connections held open while the load runs again: the server must
 *    keep serving (queries/s and p99 reported) and answer connections over its limit with 429 (Retry-After).
 * 4. bad input during load: each kind of bad request gets its 4xx JSON error; the server lives.
 * 5. kill -9 campaign (campaign.ts): K (20) kills under load, every acknowledged feedback in the
 *    state, none twice.
 * The machine's load average and core count are printed beside the figures.
 */
import {closeSync, fdatasyncSync, fsyncSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync} from 'node:fs'
import {tmpdir, loadavg, availableParallelism} from 'node:os'
import {join} from 'node:path'
import {connect, type Socket} from 'node:net'
import type {PackedEnsemble} from '../rank/packed.js'
import {RawClient} from './serve-client.js'
import {runLoad, quantileSorted, type LoadResult} from './serve-load.js'
import {startServerProcess, stopServerProcess, type ServerProcess} from './serve-process.js'
import {runKillCampaign, type CampaignReport} from './campaign.js'
import {benchRegistry, rerankEndpoint, type RerankEndpointReport} from './serve-rerank.js'

/** The targets. */
export const TARGET_QUERIES_PER_S = 5000
export const TARGET_P99_MS = 5
export interface ServeBenchOptions {
  clients: number
  tenants: number
  durationMs: number
  maxQueries: number
  warmupMs: number
  rerankRequests: number
  flood: number
  kills: number
  seed: number
  onProgress?: (text: string) => void
}

export interface ServeBenchReport {
  machine: {cores: number; load_average_1m_before: number; load_average_1m_after: number}
  load: LoadResult & {
    clients: number
    tenants: number
    meets_queries_target: boolean
    meets_p99_target: boolean
    /** The journal during the load: flushes (one pwrite + one fdatasync each), events, and the mean time one flush took (each answer waits for at least one: queries/s <= clients / (2 x flush time)). */
    fsync: {batches: number; commits: number; syncs: number; commits_per_batch: number; mean_flush_ms: number}
    /** The disk just before the load: one small pwrite + fdatasync into a preallocated file, as the journal does (ms): the floor of a flush on this machine now. */
    disk_sync_ms: {p50: number; p99: number}
    /** The machine's 1-minute load average just before and just after the measured load (other processes compete for the same cores). */
    load_average_1m: {before: number; after: number}
    /** Share of the machine's CPU (all cores) the load generator took during the load: what it took from the server. */
    client_cpu_share: number
    /**
     * CPU time the server process and this load generator spent per query (user + system, from
     * /proc): unlike queries/s, it hardly depends on how many other processes share the cores, so
     * 1e6 / server_cpu_us_per_query is what one free core could serve.
     */
    server_cpu_us_per_query: number
    client_cpu_us_per_query: number
  }
  rerank: RerankEndpointReport
  flood: null | {connections_opened: number; refused_429: number; load: LoadResult; healthz_ok: boolean}
  bad_input: Array<{case: string; status: number; code: string; ok: boolean}>
  bad_input_log_lines: number
  campaign: CampaignReport | null
}

/** Syncs timed by diskSyncTime, and the bytes each writes (a batch of about ten events). */
const DISK_SYNC_SAMPLES = 200
const DISK_SYNC_BYTES = 2048

/** p50 and p99 (ms) of a pwrite + fdatasync into a preallocated, synced file: what one journal flush costs the disk right now. */
function diskSyncTime(dir: string): {p50: number; p99: number} {
  const path = join(dir, 'disk-sync-probe')
  const fd = openSync(path, 'w+')
  try {
    writeSync(fd, Buffer.alloc(DISK_SYNC_SAMPLES * DISK_SYNC_BYTES))
    fsyncSync(fd)
    const chunk = Buffer.alloc(DISK_SYNC_BYTES, 0x61)
    const times = new Float64Array(DISK_SYNC_SAMPLES)
    for (let i = 0; i < DISK_SYNC_SAMPLES; i++) {
      const a = performance.now()
      writeSync(fd, chunk, 0, chunk.length, i * DISK_SYNC_BYTES)
      fdatasyncSync(fd)
      times[i] = performance.now() - a
    }
    times.sort()
    return {p50: quantileSorted(times, 0.5), p99: quantileSorted(times, 0.99)}
  } finally {
    closeSync(fd)
    rmSync(path, {force: true})
  }
}

/** proc(5): utime and stime are fields 14 and 15 of /proc/<pid>/stat, in clock ticks. */
const PROC_STAT_UTIME_FIELD = 14
/** Clock ticks per second on Linux (sysconf(_SC_CLK_TCK); 100 on every mainstream kernel). */
const CLOCK_TICKS_PER_S = 100

/** User + system CPU time of a process in µs, from /proc (NaN where /proc is missing). */
function processCpuUs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const ticks = Number(fields[PROC_STAT_UTIME_FIELD - 3]) + Number(fields[PROC_STAT_UTIME_FIELD - 2])
    return (ticks / CLOCK_TICKS_PER_S) * 1e6
  } catch {
    return Number.NaN
  }
}

/** A metric's value in Prometheus text, or NaN when absent. */
export function metricValue(text: string, name: string): number {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text)
  return m ? Number(m[1]) : Number.NaN
}

async function fsyncStats(
  port: number,
): Promise<{batches: number; commits: number; syncs: number; flushSeconds: number}> {
  const client = new RawClient(port)
  const r = await client.request('GET', '/metrics')
  client.close()
  const text = r.body.toString()
  return {
    batches: metricValue(text, 'kt_fsync_batches_total'),
    commits: metricValue(text, 'kt_fsync_commits_total'),
    syncs: metricValue(text, 'kt_fsync_syncs_total'),
    flushSeconds: metricValue(text, 'kt_fsync_batch_duration_seconds_sum'),
  }
}

export async function createTenants(
  port: number,
  count: number,
  spec: Record<string, unknown> = {},
): Promise<string[]> {
  const client = new RawClient(port)
  const ids: string[] = []
  try {
    for (let i = 0; i < count; i++) {
      const id = `t${String(i).padStart(3, '0')}`
      const r = await client.request('POST', '/tenants', JSON.stringify({tenant: id, ...spec}))
      if (r.status !== 201) throw new Error(`POST /tenants ${id}: ${r.status} ${r.body.toString()}`)
      ids.push(id)
    }
  } finally {
    client.close()
  }
  return ids
}

/**
 * Runs `fn` against a `kt online serve` process on a fresh folder holding the bench's registry; the
 * server is killed and the folder removed afterwards, whatever happens. `stop` ends the server
 * gracefully before `fn` is done (the full bench runs its kill campaign after it, in `dir`).
 */
async function withBenchServer<T>(
  seed: number,
  fn: (bench: {dir: string; server: ServerProcess; packed: PackedEnsemble; stop: () => Promise<void>}) => Promise<T>,
): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'kt-bench-serve-'))
  let server: ServerProcess | undefined
  try {
    const {registry, packed} = benchRegistry(dir, seed)
    const started = await startServerProcess(['--dir', join(dir, 'tenants'), '--registry', registry])
    server = started
    const stop = async (): Promise<void> => {
      if (!server) return
      server = undefined
      await stopServerProcess(started)
    }
    const result = await fn({dir, server: started, packed, stop})
    await stop()
    return result
  } finally {
    if (server) await stopServerProcess(server, 'SIGKILL')
    rmSync(dir, {recursive: true, force: true})
  }
}

/** `kt bench serve --only rerank`: the rerank endpoint part alone, on a server of its own. */
export async function runRerankServeBench(options: {
  rerankRequests: number
  seed: number
}): Promise<{machine: ServeBenchReport['machine']; rerank: RerankEndpointReport}> {
  const loadBefore = loadavg()[0]
  return withBenchServer(options.seed, async ({server, packed, stop}) => {
    const rerank = await rerankEndpoint(server.port, packed, options.rerankRequests, options.seed)
    await stop()
    return {
      machine: {cores: availableParallelism(), load_average_1m_before: loadBefore, load_average_1m_after: loadavg()[0]},
      rerank,
    }
  })
}

/** Opens `count` idle connections; resolves when all are connected (or refused), with the sockets and how many got a 429. */
async function openFlood(port: number, count: number): Promise<{sockets: Socket[]; refused: () => number}> {
  const sockets: Socket[] = []
  let refused = 0
  const batch = 500
  for (let i = 0; i < count; i += batch) {
    await Promise.all(
      Array.from(
        {length: Math.min(batch, count - i)},
        () =>
          new Promise<void>((resolve) => {
            const s = connect({port, host: '127.0.0.1'})
            s.on('data', (d: Buffer) => {
              if (d.toString('latin1').startsWith('HTTP/1.1 429')) refused++
            })
            s.on('error', () => resolve())
            s.on('connect', () => resolve())
            sockets.push(s)
          }),
      ),
    )
  }
  return {sockets, refused: () => refused}
}

/** Bad requests of every kind the issue lists, each with the status and code it must get. */
async function badInput(port: number, tenant: string): Promise<ServeBenchReport['bad_input']> {
  const cases: Array<{
    name: string
    method: string
    path: string
    body?: string | Buffer
    type?: string
    status: number
    code: string
  }> = [
    {
      name: "a text/plain body (a web page's cross-site POST)",
      method: 'POST',
      path: `/tenants/${tenant}/choose`,
      body: '{}',
      type: 'text/plain',
      status: 415,
      code: 'unsupported_media_type',
    },
    {
      name: 'malformed JSON body',
      method: 'POST',
      path: `/tenants/${tenant}/choose`,
      body: '{"type": tempo',
      status: 400,
      code: 'bad_request',
    },
    {
      name: 'unknown field',
      method: 'POST',
      path: `/tenants/${tenant}/choose`,
      body: '{"tpye":"temporal"}',
      status: 400,
      code: 'bad_request',
    },
    {
      name: 'unknown tenant',
      method: 'POST',
      path: '/tenants/no-such-tenant/choose',
      body: '{}',
      status: 404,
      code: 'unknown_tenant',
    },
    {
      name: 'feedback for an unknown query',
      method: 'POST',
      path: `/tenants/${tenant}/feedback`,
      body: '{"query_id":"q-never-issued","used":true}',
      status: 404,
      code: 'unknown_query',
    },
    {
      name: 'body over 1 MB',
      method: 'POST',
      path: `/tenants/${tenant}/choose`,
      body: Buffer.alloc(1024 * 1024 + 1, 0x20),
      status: 413,
      code: 'body_too_large',
    },
    {
      name: 'bad tenant id',
      method: 'POST',
      path: '/tenants/..%2Fetc/choose',
      body: '{}',
      status: 400,
      code: 'bad_request',
    },
  ]
  const out: ServeBenchReport['bad_input'] = []
  for (const c of cases) {
    const client = new RawClient(port)
    try {
      const r = await client.request(c.method, c.path, c.body, c.type)
      const code = (RawClient.json(r) as {error?: {code?: string}}).error?.code ?? ''
      out.push({case: c.name, status: r.status, code, ok: r.status === c.status && code === c.code})
    } catch (error) {
      out.push({case: c.name, status: 0, code: (error as Error).message, ok: false})
    } finally {
      client.close()
    }
  }
  // feedback for an already settled query: choose, use, use again
  const client = new RawClient(port)
  try {
    const chosen = RawClient.json(await client.request('POST', `/tenants/${tenant}/choose`, '{}')) as {query_id: string}
    await client.request('POST', `/tenants/${tenant}/feedback`, JSON.stringify({query_id: chosen.query_id, used: true}))
    const r = await client.request(
      'POST',
      `/tenants/${tenant}/feedback`,
      JSON.stringify({query_id: chosen.query_id, used: true}),
    )
    const code = (RawClient.json(r) as {error?: {code?: string}}).error?.code ?? ''
    out.push({
      case: 'feedback for an already settled query',
      status: r.status,
      code,
      ok: r.status === 409 && code === 'already_settled',
    })
  } finally {
    client.close()
  }
  return out
}

export async function runServeBench(options: ServeBenchOptions): Promise<ServeBenchReport> {
  const progress = options.onProgress ?? (() => undefined)
  const loadBefore = loadavg()[0]
  return withBenchServer(options.seed, async ({dir, server, packed, stop}) => {
    const port = server.port
    progress(`creating ${options.tenants} tenants`)
    const tenants = await createTenants(port, options.tenants)
    const disk = diskSyncTime(dir)
    progress(`load: ${options.clients} clients, ${options.tenants} tenants`)
    const before = await fsyncStats(port)
    const serverCpu0 = processCpuUs(server.child.pid!)
    const clientCpu0 = process.cpuUsage()
    const loadAvg0 = loadavg()[0]
    const wall0 = performance.now()
    const load = await runLoad({
      port,
      tenants,
      clients: options.clients,
      durationMs: options.durationMs,
      maxQueries: options.maxQueries,
      warmupMs: options.warmupMs,
      seed: options.seed,
    })
    const serverCpu = processCpuUs(server.child.pid!) - serverCpu0
    const clientCpuUsage = process.cpuUsage(clientCpu0)
    const wallUs = (performance.now() - wall0) * 1000
    const loadAvg1 = loadavg()[0]
    const after = await fsyncStats(port)
    const batches = after.batches - before.batches
    const commits = after.commits - before.commits

    progress('rerank endpoint against /noop')
    const rerank = await rerankEndpoint(port, packed, options.rerankRequests, options.seed)

    let flood: ServeBenchReport['flood'] = null
    if (options.flood > 0) {
      progress(`flood: ${options.flood} idle connections, then the load again`)
      let flooding: Awaited<ReturnType<typeof openFlood>> | undefined
      const floodLoad = await runLoad({
        port,
        tenants,
        clients: options.clients,
        durationMs: Math.min(options.durationMs, 3000),
        maxQueries: options.maxQueries,
        warmupMs: 200,
        seed: options.seed + 1,
        beforeStart: async () => {
          flooding = await openFlood(port, options.flood)
        },
      })
      const {sockets, refused} = flooding!
      const health = new RawClient(port)
      const h = await health.request('GET', '/healthz').catch(() => ({status: 0}))
      health.close()
      flood = {
        connections_opened: sockets.length,
        refused_429: refused(),
        load: floodLoad,
        healthz_ok: h.status === 200,
      }
      for (const s of sockets) s.destroy()
    }

    progress('bad input')
    const linesBefore = server.stderrLines.length
    const bad = await badInput(port, tenants[0])
    await new Promise((r) => setTimeout(r, 100))
    const badLines = server.stderrLines.length - linesBefore
    await stop()

    let campaign: CampaignReport | null = null
    if (options.kills > 0) {
      progress(`kill -9 campaign: ${options.kills} kills`)
      campaign = await runKillCampaign({
        dir: join(dir, 'campaign'),
        kills: options.kills,
        tenants: options.tenants,
        clients: options.clients,
        seed: options.seed,
        minLoadMs: 300,
        maxLoadMs: 1500,
        onProgress: progress,
      })
    }
    return {
      machine: {cores: availableParallelism(), load_average_1m_before: loadBefore, load_average_1m_after: loadavg()[0]},
      load: {
        ...load,
        clients: options.clients,
        tenants: options.tenants,
        meets_queries_target: load.queries_per_s >= TARGET_QUERIES_PER_S,
        meets_p99_target: load.latency_ms.p99 <= TARGET_P99_MS,
        fsync: {
          batches,
          commits,
          syncs: after.syncs - before.syncs,
          commits_per_batch: commits / batches,
          mean_flush_ms: ((after.flushSeconds - before.flushSeconds) / batches) * 1000,
        },
        load_average_1m: {before: loadAvg0, after: loadAvg1},
        disk_sync_ms: disk,
        client_cpu_share: (clientCpuUsage.user + clientCpuUsage.system) / (wallUs * availableParallelism()),
        // CPU over the load phase, warm-up included, per query of the phase
        server_cpu_us_per_query: serverCpu / load.all_queries,
        client_cpu_us_per_query: (clientCpuUsage.user + clientCpuUsage.system) / load.all_queries,
      },
      rerank,
      flood,
      bad_input: bad,
      bad_input_log_lines: badLines,
      campaign,
    }
  })
}
