import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'
import type {ServeBenchReport} from '../../bench/serve.js'

export default class BenchServe extends KtCommand {
  static override summary =
    'Load-test kt online serve on loopback: queries/s and p99 (targets >= 5,000/s, <= 5 ms), the rerank endpoint beyond HTTP (<= 50 µs), a connection flood, bad input and a kill -9 campaign.'
  static override description = [
    'Starts kt online serve as a child process (its own event loop) with a reranker of 100 random complete depth-6 trees over 46 features deployed,',
    'creates the tenants and drives it from this process: --clients concurrent clients, each query a choose plus a feedback (used), tenants',
    'drawn uniformly, for --seconds after a warm-up or --max-queries. Then POST /rerank against POST /noop with the same 50-candidate body, new candidates for every pair',
    '(JSON with 6 decimals, JSON with full-precision doubles, float64 rows; --only rerank runs this part alone), --flood idle connections held while the load runs again, each kind of bad request, and --kills kill -9s',
    "of the server under load with a restart each time (every acknowledged feedback must be in the state, none twice). The machine's",
    'load average is printed beside the figures: on a shared machine they measure the machine as it was.',
  ].join(' ')

  static override examples = [
    {
      description:
        'Every part, shorter (2 s of load, 200 requests per /rerank body format, 500 idle connections, 2 kill -9s); plain `kt bench serve` is the full measurement its targets are for.',
      command: '<%= config.bin %> bench serve --seconds 2 --rerank-requests 200 --flood 500 --kills 2',
    },
    '<%= config.bin %> bench serve --seconds 3 --rerank-requests 200 --kills 0 --flood 0 --json',
    '<%= config.bin %> bench serve --only rerank',
    {
      description:
        'The soak alone, short: RSS every 10 s under full load (the measurement is --soak 600: RSS may grow at most 10% after the first minute).',
      command: '<%= config.bin %> bench serve --soak 20 --tenants 10 --clients 4',
    },
  ]
  static override flags = {
    clients: Flags.integer({description: 'Concurrent clients.', default: 16, min: 1}),
    tenants: Flags.integer({description: 'Tenants.', default: 100, min: 1}),
    seconds: Flags.integer({
      description: 'Measured load time, seconds (after a 1 s warm-up).',
      default: 10,
      min: 1,
      max: 600,
    }),
    'max-queries': Flags.integer({description: 'Queries at most in the measured load.', default: 1_000_000, min: 1}),
    'rerank-requests': Flags.integer({
      description: 'Requests each of /noop and /rerank, per body format.',
      default: 2000,
      min: 10,
    }),
    flood: Flags.integer({
      description: 'Idle connections opened for the flood test (0: skip).',
      default: 10_000,
      min: 0,
    }),
    kills: Flags.integer({description: 'kill -9s of the server in the campaign (0: skip).', default: 20, min: 0}),
    seed: Flags.integer({description: 'Seed of the load, the reranker and the kill moments.', default: 42}),
    soak: Flags.integer({
      description:
        "Run the soak alone for this many seconds: full load, the server's RSS printed every 10 s; fails its target when RSS grows more than 10% after the first minute.",
      min: 10,
      max: 86_400,
    }),
    only: Flags.string({
      description: 'Run one part alone: rerank (POST /rerank against POST /noop, on a server of its own).',
      options: ['rerank'],
    }),
  }

  /** kt bench serve --soak SECONDS (src/bench/soak.ts). */
  private async soak(seconds: number, flags: {clients: number; tenants: number; seed: number}): Promise<unknown> {
    const {runSoak, TARGET_SOAK_GROWTH, SOAK_BASELINE_MS} = await import('../../bench/soak.js')
    const json = this.jsonEnabled()
    if (!json)
      this.log(
        `soak: ${seconds} s, ${flags.clients} clients, ${flags.tenants} tenants; the server's RSS every 10 s (baseline at ${SOAK_BASELINE_MS / 1000} s)`,
      )
    const report = await runSoak({
      seconds,
      clients: flags.clients,
      tenants: flags.tenants,
      seed: flags.seed,
      onSample: json
        ? undefined
        : (x) =>
            this.log(
              `${String(x.s).padStart(5)} s  RSS ${x.rss_mb.toFixed(1)} MB  remembered queries ${x.pending_queries}`,
            ),
    })
    if (!json) {
      const m = report.machine
      this.log(
        `machine: ${m.cores} cores, load average (1 min) ${m.load_average_1m_before.toFixed(2)} before, ${m.load_average_1m_after.toFixed(2)} after`,
      )
      this.log(
        `${report.queries} queries (${report.queries_per_s.toFixed(0)}/s), ${report.evicted} forgotten at the cap of ${report.max_pending_total} remembered queries, ${report.errors} errors${report.first_error ? ` (first: ${report.first_error})` : ''}`,
      )
      this.log(
        `RSS ${report.baseline_mb.toFixed(1)} MB at ${report.baseline_s} s, at most ${report.max_after_mb.toFixed(1)} MB after: growth ${(100 * report.growth).toFixed(1)}% (target <= ${100 * TARGET_SOAK_GROWTH}% after the first minute): ${report.meets_target === null ? 'not judged (the run ends within the first minute)' : report.meets_target ? 'met' : 'NOT met'}`,
      )
    }
    if (report.meets_target === false || report.errors > 0) process.exitCode = 1
    return report
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(BenchServe)
    if (flags.soak !== undefined) return this.soak(flags.soak, flags)
    const {runServeBench, runRerankServeBench} = await import('../../bench/serve.js')
    const {renderTable} = await import('../../online/format.js')
    const header = ['figure', 'measured', 'target', 'met']
    if (flags.only === 'rerank') {
      const spinner = this.spinner('kt bench serve --only rerank')
      const report = await runRerankServeBench({rerankRequests: flags['rerank-requests'], seed: flags.seed})
      await spinner.succeed('kt bench serve --only rerank: done')
      if (!this.jsonEnabled()) {
        this.log(machineLine(report.machine))
        this.log(
          `${report.rerank.requests} requests each of POST /noop and POST /rerank per body form, alternating, the same new candidates for each pair; medians`,
        )
        this.log(renderTable(header, await rerankRows(report.rerank)))
      }
      return report
    }
    const spinner = this.spinner('kt bench serve')
    const report = await runServeBench({
      clients: flags.clients,
      tenants: flags.tenants,
      durationMs: flags.seconds * 1000,
      maxQueries: flags['max-queries'],
      warmupMs: 1000,
      rerankRequests: flags['rerank-requests'],
      flood: flags.flood,
      kills: flags.kills,
      seed: flags.seed,
      onProgress: (text) => void spinner.update(`kt bench serve: ${text}`),
    })
    await spinner.succeed('kt bench serve: done')
    if (!this.jsonEnabled()) {
      const l = report.load
      const m = report.machine
      this.log(machineLine(m))
      this.log(
        `load: ${l.clients} clients, ${l.tenants} tenants, ${l.queries} queries (choose + feedback) in ${l.seconds.toFixed(1)} s; journal ${l.fsync.commits_per_batch.toFixed(1)} events per flush (${l.fsync.batches} flushes of one pwrite + one fdatasync, ${l.fsync.mean_flush_ms.toFixed(2)} ms each on average)`,
      )
      this.log(
        `every answer waits for at least one flush, so queries/s <= clients / (2 x flush time) = ${(l.clients / ((2 * l.fsync.mean_flush_ms) / 1000)).toFixed(0)} at the flush time measured; the load generator (this process: ${l.clients} keep-alive connections, one request at a time each, no pipelining) took ${(100 * l.client_cpu_share).toFixed(0)}% of the ${m.cores} cores`,
      )
      this.log(
        `the disk just before: a pwrite + fdatasync into a preallocated file (one journal flush) took ${l.disk_sync_ms.p50.toFixed(2)} ms (p50), ${l.disk_sync_ms.p99.toFixed(2)} ms (p99)`,
      )
      this.log(renderTable(header, await serveRows(report)))
      if (report.campaign && !report.campaign.passed)
        for (const v of report.campaign.violations) this.log(`violation: ${v}`)
      if (l.first_error) this.log(`load error: ${l.first_error}`)
    }
    return report
  }
}

const yes = (b: boolean): string => (b ? 'yes' : 'NO')

function machineLine(m: ServeBenchReport['machine']): string {
  return `machine: ${m.cores} cores, load average (1 min) ${m.load_average_1m_before.toFixed(2)} before, ${m.load_average_1m_after.toFixed(2)} after (shared machine: other processes compete for the cores)`
}

/** The rerank part's rows: each body form beyond /noop, then the in-process shares. */
async function rerankRows(r: ServeBenchReport['rerank']): Promise<string[][]> {
  const {TARGET_RERANK_US} = await import('../../bench/serve-rerank.js')
  const form = (label: string, t: ServeBenchReport['rerank']['json']): string[] => [
    `${label}: beyond /noop (µs)`,
    `${t.beyond_http_us.toFixed(1)} (${t.rerank_median_us.toFixed(0)} - ${t.noop_median_us.toFixed(0)})`,
    `<= ${TARGET_RERANK_US}`,
    yes(t.meets_target),
  ]
  return [
    form(`rerank JSON (${r.candidates} candidates, ${r.json.body_bytes} B, 6 decimals)`, r.json),
    form(`rerank JSON, full-precision doubles (${r.json_full_precision.body_bytes} B)`, r.json_full_precision),
    form(`rerank float64 rows (${r.binary.body_bytes} B)`, r.binary),
    [
      `  of which scoring ${r.candidates} x ${r.trees} depth-6 trees in-process, no HTTP (µs)`,
      r.model_scoring_us.toFixed(1),
      '',
      '',
    ],
    [
      `  of which JSON.parse of the body in-process, no HTTP: 6 decimals / full precision (µs)`,
      `${r.json_reading_us.toFixed(1)} / ${r.json_full_precision_reading_us.toFixed(1)}`,
      '',
      '',
    ],
  ]
}

/** The full bench's rows: load, rerank, flood, bad input, kill campaign. */
async function serveRows(report: ServeBenchReport): Promise<string[][]> {
  const {TARGET_QUERIES_PER_S, TARGET_P99_MS} = await import('../../bench/serve.js')
  const l = report.load
  const loadAt = `load avg ${l.load_average_1m.before.toFixed(2)} -> ${l.load_average_1m.after.toFixed(2)}`
  return [
    [`queries/s (${loadAt})`, l.queries_per_s.toFixed(0), `>= ${TARGET_QUERIES_PER_S}`, yes(l.meets_queries_target)],
    [
      `request latency p99 (ms) (${loadAt})`,
      l.latency_ms.p99.toFixed(2),
      `<= ${TARGET_P99_MS}`,
      yes(l.meets_p99_target),
    ],
    [
      'CPU per query: server / load generator (µs)',
      `${l.server_cpu_us_per_query.toFixed(0)} / ${l.client_cpu_us_per_query.toFixed(0)}`,
      '',
      '',
    ],
    [
      'one free core could serve (queries/s, 1e6 / server CPU per query)',
      (1e6 / l.server_cpu_us_per_query).toFixed(0),
      `>= ${TARGET_QUERIES_PER_S}`,
      yes(1e6 / l.server_cpu_us_per_query >= TARGET_QUERIES_PER_S),
    ],
    [
      'request latency p50 / p99.9 / max (ms)',
      `${l.latency_ms.p50.toFixed(2)} / ${l.latency_ms.p999.toFixed(2)} / ${l.latency_ms.max.toFixed(2)}`,
      '',
      '',
    ],
    ...(await rerankRows(report.rerank)),
    ...(report.flood
      ? [
          [
            `under a flood of ${report.flood.connections_opened} idle connections: queries/s, p99 (ms)`,
            `${report.flood.load.queries_per_s.toFixed(0)}, ${report.flood.load.latency_ms.p99.toFixed(2)} (${report.flood.refused_429} refused with 429)`,
            'keeps serving',
            yes(report.flood.load.errors === 0 && report.flood.healthz_ok),
          ],
        ]
      : []),
    ...report.bad_input.map((b) => [`bad input: ${b.case}`, `${b.status} ${b.code}`, '4xx JSON error', yes(b.ok)]),
    [
      'log lines for those bad requests',
      String(report.bad_input_log_lines),
      `${report.bad_input.length} (one each)`,
      yes(report.bad_input_log_lines === report.bad_input.length),
    ],
    ...(report.campaign
      ? [
          [
            `kill -9 campaign: ${report.campaign.kills} kills`,
            `${report.campaign.acknowledged_feedback} acknowledged feedbacks, ${report.campaign.violations.length} violations (${report.campaign.retried_feedback} retried, ${report.campaign.retried_feedback_already_applied} found applied)`,
            'all in the state, none twice',
            yes(report.campaign.passed),
          ],
        ]
      : []),
  ]
}
