/**
 * The service's metrics in the Prometheus text exposition format (version 0.0.4): counters,
 * gauges and cumulative histograms, written by hand (a few dozen lines; no client library needed).
 */

/**
 * Request-latency bucket bounds in seconds: 100 µs to 1 s, dense around the 5 ms p99 target of
 * `kt bench serve`.
 */
const LATENCY_BUCKETS_S = [0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1]

export class Histogram {
  readonly counts: Float64Array
  sum = 0
  count = 0

  constructor(readonly bounds: readonly number[] = LATENCY_BUCKETS_S) {
    this.counts = new Float64Array(bounds.length)
  }

  observe(value: number): void {
    this.sum += value
    this.count++
    for (let i = 0; i < this.bounds.length; i++)
      if (value <= this.bounds[i]) {
        this.counts[i]++
        return
      }
  }

  /** Exposition lines for `name` with `labels` (already formatted, e.g. `route="choose"`). */
  lines(name: string, labels: string): string[] {
    const sep = labels ? ',' : ''
    const out: string[] = []
    let cumulative = 0
    for (let i = 0; i < this.bounds.length; i++) {
      cumulative += this.counts[i]
      out.push(`${name}_bucket{${labels}${sep}le="${this.bounds[i]}"} ${cumulative}`)
    }
    out.push(`${name}_bucket{${labels}${sep}le="+Inf"} ${this.count}`)
    out.push(`${name}_sum${labels ? `{${labels}}` : ''} ${this.sum}`)
    out.push(`${name}_count${labels ? `{${labels}}` : ''} ${this.count}`)
    return out
  }
}

/** Escapes a label value (exposition format: backslash, double quote and newline). */
function labelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
}

/** The journal's counters (Journal.stats), in the order exposed: metric name, stats field, help. */
const JOURNAL_COUNTERS = [
  [
    'kt_fsync_batches_total',
    'batches',
    'Journal flushes (each one pwrite of a frame holding every event since the previous flush, and one fdatasync).',
  ],
  ['kt_fsync_commits_total', 'commits', 'Logged events made durable by the journal.'],
  ['kt_fsync_syncs_total', 'syncs', 'Journal fdatasyncs issued (one per flush).'],
  [
    'kt_fsync_failures_total',
    'failures',
    'Journal flushes that failed (their requests and every later one are answered 503 not_durable until a restart).',
  ],
  [
    'kt_journal_checkpoints_total',
    'checkpoints',
    'Journal segments retired: every tenant log written since synced, the segment deleted.',
  ],
  [
    'kt_journal_disk_full_total',
    'diskFull',
    'Events refused 503 not_durable (nothing applied) because the disk had no room for the next journal segment.',
  ],
  [
    'kt_journal_checkpoint_failures_total',
    'checkpointFailures',
    'Journal segment retirements that failed (a tenant log the disk had no room for): the segment is kept and retried every second.',
  ],
] as const

export class ServiceMetrics {
  /** Per route: its latency histogram and its answers by status code (no key string built per request). */
  private readonly routes = new Map<string, {latency: Histogram; codes: Map<number, number>}>()
  readonly commitBatch = new Histogram()
  connections = 0
  connectionsRejected = 0
  /** Reads of the reranker registry (its index or the current version's model) that failed. */
  registryErrors = 0

  request(route: string, status: number, seconds: number): void {
    let r = this.routes.get(route)
    if (!r) this.routes.set(route, (r = {latency: new Histogram(), codes: new Map()}))
    r.codes.set(status, (r.codes.get(status) ?? 0) + 1)
    r.latency.observe(seconds)
  }

  render(extra: {
    tenantsOpen: number
    memory: {pending: number; evicted: number; closedIdle: number}
    commit: Record<(typeof JOURNAL_COUNTERS)[number][1], number>
    modelVersion: string | null
    registryDamaged?: boolean
  }): string {
    const out: string[] = []
    const family = (name: string, type: string, help: string): void => {
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`)
    }
    const scalar = (name: string, type: string, help: string, value: number): void => {
      family(name, type, help)
      out.push(`${name} ${value}`)
    }
    family('kt_http_requests_total', 'counter', 'HTTP requests by route and status code.')
    for (const [route, r] of this.routes)
      for (const [code, n] of r.codes)
        out.push(`kt_http_requests_total{route="${labelValue(route)}",code="${code}"} ${n}`)
    family(
      'kt_http_request_duration_seconds',
      'histogram',
      "Time from the request's arrival to its response, by route (durable writes included).",
    )
    for (const [route, r] of this.routes)
      out.push(...r.latency.lines('kt_http_request_duration_seconds', `route="${labelValue(route)}"`))
    scalar('kt_http_connections', 'gauge', 'Open client connections.', this.connections)
    scalar(
      'kt_http_connections_rejected_total',
      'counter',
      'Connections refused with 429 because the connection limit was reached.',
      this.connectionsRejected,
    )
    scalar('kt_tenants_open', 'gauge', 'Tenants this server has open.', extra.tenantsOpen)
    scalar(
      'kt_pending_queries',
      'gauge',
      'Queries the open tenants remember (the memory the caps --max-pending and --max-pending-total bound).',
      extra.memory.pending,
    )
    scalar(
      'kt_pending_evicted_total',
      'counter',
      'Queries forgotten, oldest first, to keep under the caps (an open implicit window settles as unused; later feedback is late).',
      extra.memory.evicted,
    )
    scalar(
      'kt_tenants_closed_idle_total',
      'counter',
      'Tenants closed after --idle-tenant-seconds without a request.',
      extra.memory.closedIdle,
    )
    for (const [name, field, help] of JOURNAL_COUNTERS) scalar(name, 'counter', help, extra.commit[field])
    family('kt_fsync_batch_duration_seconds', 'histogram', 'Time one journal flush took (write and fdatasync).')
    out.push(...this.commitBatch.lines('kt_fsync_batch_duration_seconds', ''))
    family('kt_rerank_model_info', 'gauge', 'The deployed reranker version served by POST /rerank (absent: none).')
    if (extra.modelVersion !== null) out.push(`kt_rerank_model_info{version="${labelValue(extra.modelVersion)}"} 1`)
    scalar(
      'kt_rerank_registry_damaged',
      'gauge',
      "1 while the reranker registry's last change could not be read: POST /rerank serves the last good version (kt_rerank_model_info), or answers 503 model_unavailable if there is none.",
      extra.registryDamaged ? 1 : 0,
    )
    scalar(
      'kt_rerank_registry_errors_total',
      'counter',
      'Reads of the reranker registry (index or model file) that failed; each is logged once at error level.',
      this.registryErrors,
    )
    return `${out.join('\n')}\n`
  }
}
