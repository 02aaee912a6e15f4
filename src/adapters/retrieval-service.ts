/**
 * The `retrieval-service` evaluation kind: the engine only stores and ranks; kt brings the
 * benchmark. kt resets the service, ingests every conversation of a dataset, asks it to rank
 * turns for each scored question (the messages: src/adapters/README.md "retrieval-service: kt
 * brings the benchmark"), and scores the rankings with the harness of `kt eval`. Latency is
 * measured on kt's side per search, warmed and repeated. Re-ingestion happens only when a
 * parameter marked `"ingest": true` changes between trials. A reply that is not JSON (the byte
 * offset is named), is not `{"ids": [...]}`, or names an id that is not a turn of the conversation
 * fails that trial; the study goes on, with the service still ingested.
 */
import {performance} from 'node:perf_hooks'
import {valueNames} from './metrics.js'
import type {Conversation, MemoryDataset} from '../data/conversations/types.js'
import {
  aggregate,
  DEFAULT_KS,
  DEFAULT_TUNING_METRIC,
  queryMetrics,
  rankingDepth,
  type MetricReport,
  type MetricValues,
} from '../data/conversations/metrics.js'
import {selectScoredQueries, type EvalQuery, type QuerySelection} from '../data/conversations/queries.js'
import {questionTiers, tierForBudget, type TierSpec} from '../data/conversations/tiers.js'
import {TIMING_METRIC_PREFIX, type EvalResult, type Objective} from '../space/objective.js'
import type {Config, ParamSpace} from '../space/index.js'
import {defaultConfig} from '../space/index.js'
import {quantile} from '../stats/summary.js'
import type {SplitPart, SplitSpec} from '../data/conversations/split.js'
import {InputError, describeValue, oneLine} from '../util/errors.js'
import type {DeclaredProperty, RetrievalServiceEvaluate} from './file-schema.js'
import {loadEngineFile, tierFidelity, type EngineSpec} from './file.js'
import {parseJsonOrOffset} from './json-offset.js'
import {
  openTransport,
  ServiceError,
  type ServiceOp,
  type ServiceTransport,
  type TransportSpec,
} from './service-transport.js'

/** Untimed searches before timing starts (the service's caches and JIT, kt's connection). */
const SERVICE_WARMUP_QUERIES = 20
/** Timed searches wanted per evaluation for a tail percentile (a p99 of 50 timings is nearly the maximum). */
const SERVICE_MIN_TIMINGS = 200
/** At most this many timed passes over a tier's questions. */
const SERVICE_MAX_PASSES = 10
/** Characters of an offending reply quoted in an error. */
const EXCERPT_CHARS = 60

/** Where the latency objective comes from. */
type LatencySource = 'measured' | 'cost_model'

/** What kt needs to know about a retrieval service (read from an engine file). */
export interface RetrievalServiceSpec {
  readonly name: string
  /** The engine file (absolute), named by errors about the engine's program. */
  readonly file?: string
  readonly space: ParamSpace
  /** Parameters whose change requires re-ingesting (`"ingest": true` in the engine file). */
  readonly ingestParams: readonly string[]
  readonly transport: TransportSpec
  /** Fidelity tiers: budgets; each tier gets budget / largest budget of the questions. */
  readonly tiers?: ReadonlyArray<{readonly name: string; readonly budget: number}>
  /** The quality metric (recall@k, hit@k, ndcg@10, mrr); default recall@10. */
  readonly metric?: string
  /**
   * 'measured' (default): p99_ms is kt's wall time per search. 'cost_model': the engine declares a
   * deterministic cost and returns it as `cost_ms` in each search reply; p99_ms is then over those,
   * and the wall time stays in the measured_ metrics.
   */
  readonly latency?: LatencySource
  /** false: the same configuration and data may rank differently (phase 1 skips its determinism check). */
  readonly deterministic?: boolean
  /** Properties of its own metrics the engine declares, checked by phase 1. */
  readonly properties?: readonly DeclaredProperty[]
}

/** Timings of one search. */
interface Ranked {
  readonly ids: string[]
  readonly ms: number
  readonly cost?: number
}

/** A question that names its conversation, for messages. */
function label(q: EvalQuery): string {
  return `question ${q.id} (conversation ${q.conversation})`
}

function excerpt(text: string, byte: number): string {
  const buf = Buffer.from(text, 'utf8')
  const from = Math.max(0, byte - 10)
  return JSON.stringify(buf.subarray(from, from + EXCERPT_CHARS).toString('utf8'))
}

/**
 * A failure of the engine's service (its program exited, closed its output, did not listen or
 * answer) as the user's error, exit 2, naming the engine file and the program's last stderr line:
 * it is the engine that failed, not kt. In a study the trial fails with this message instead.
 */
function engineFailure(spec: RetrievalServiceSpec, error: unknown): unknown {
  if (!(error instanceof ServiceError)) return error
  const got =
    error.lastStderrLine === undefined
      ? error.message
      : `its program stopped (exited or closed its output); last stderr line: ${error.lastStderrLine}`
  return new InputError(
    `${spec.file ?? spec.name}: evaluate`,
    'a retrieval service that starts and answers kt',
    oneLine(got).slice(0, ENGINE_FAILURE_CHARS),
  )
}

/** Longest quoted failure: one terminal line or two. */
const ENGINE_FAILURE_CHARS = 300

/**
 * One connection to a service with a dataset: keeps what is ingested, and checks every reply.
 * Messages are sent one at a time (the service's state is shared).
 */
export class ServiceSession {
  private transport: ServiceTransport | undefined
  private ingestedKey: string | undefined
  private readonly turnIds = new Map<string, Set<string>>()
  /** Wall time of the last (re-)ingestion, ms (a timing). */
  lastIngestMs = 0
  /** How many times the dataset was ingested. */
  ingestions = 0

  constructor(
    readonly spec: RetrievalServiceSpec,
    readonly dataset: MemoryDataset,
  ) {
    for (const c of dataset.conversations) this.turnIds.set(c.id, new Set(c.turns.map((t) => t.id)))
  }

  private async open(): Promise<ServiceTransport> {
    try {
      this.transport ??= await openTransport(this.spec.transport)
    } catch (error) {
      throw engineFailure(this.spec, error)
    }
    return this.transport
  }

  /** Sends a message and parses the JSON object it answers (errors name the message and the offset). */
  async call(op: ServiceOp, body: Record<string, unknown>, what: string): Promise<Record<string, unknown>> {
    const transport = await this.open()
    let text: string
    try {
      text = await transport.send(op, body)
    } catch (error) {
      throw engineFailure(this.spec, error)
    }
    const parsed = parseJsonOrOffset(text)
    if (!parsed.ok)
      throw new Error(
        `${this.spec.name}: ${op} reply for ${what} is not JSON at byte ${parsed.offset} (${excerpt(text, parsed.offset)}): ${parsed.message}`,
      )
    const value = parsed.value
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new Error(
        `${this.spec.name}: ${op} reply for ${what} is not a JSON object: ${JSON.stringify(text.slice(0, EXCERPT_CHARS))}`,
      )
    const obj = value as Record<string, unknown>
    if (typeof obj.error === 'string')
      throw new Error(`${this.spec.name}: ${op} for ${what} failed in the service: ${obj.error.slice(0, 300)}`)
    return obj
  }

  /** The ingest-time part of a configuration, as a key. */
  private ingestKey(config: Config): string {
    return JSON.stringify(this.spec.ingestParams.map((name) => config[name] ?? null))
  }

  /** Resets and ingests every conversation unless the ingest-time parameters are what is ingested. */
  async ensureIngested(config: Config): Promise<boolean> {
    const key = this.ingestKey(config)
    if (key === this.ingestedKey) return false
    this.ingestedKey = undefined
    // starting the service is not ingesting
    await this.open()
    const t0 = performance.now()
    await this.call('reset', {}, 'reset')
    for (const c of this.dataset.conversations)
      await this.call('ingest', {conversation_id: c.id, turns: turnsOf(c), config}, `conversation ${c.id}`)
    this.lastIngestMs = performance.now() - t0
    this.ingestions++
    this.ingestedKey = key
    return true
  }

  /** The service's ranking for one question, checked against the conversation's turns. */
  async rank(q: EvalQuery, k: number, config: Config): Promise<Ranked> {
    const t0 = performance.now()
    const reply = await this.call('search', {conversation_id: q.conversation, query: q.text, k, config}, label(q))
    const ms = performance.now() - t0
    const ids = reply.ids
    if (!Array.isArray(ids)) throw new Error(`${this.spec.name}: search reply for ${label(q)} has no "ids" array`)
    const known = this.turnIds.get(q.conversation)!
    for (const id of ids) {
      if (typeof id !== 'string')
        throw new Error(`${this.spec.name}: search for ${label(q)} returned a non-string id ${JSON.stringify(id)}`)
      if (!known.has(id))
        throw new Error(
          `${this.spec.name}: search for ${label(q)} returned id ${JSON.stringify(id)}, not a turn of conversation ${q.conversation}`,
        )
    }
    const twice = ids.find((id, i) => ids.indexOf(id) !== i)
    if (twice !== undefined)
      throw new Error(`${this.spec.name}: search for ${label(q)} returned turn id ${JSON.stringify(twice)} twice`)
    let cost: number | undefined
    if (this.spec.latency === 'cost_model') {
      if (typeof reply.cost_ms !== 'number' || !Number.isFinite(reply.cost_ms) || reply.cost_ms < 0)
        throw new Error(
          `${this.spec.name}: the engine declares a cost model but the search reply for ${label(q)} has no non-negative "cost_ms"`,
        )
      cost = reply.cost_ms
    }
    return {ids: ids as string[], ms, cost}
  }

  /** Forgets what is ingested (after messages sent with call()), so the next ensureIngested resets and ingests. */
  invalidate(): void {
    this.ingestedKey = undefined
  }

  /** The service process kt started for this session, if any. */
  get pid(): number | undefined {
    return this.transport?.pid
  }

  async close(): Promise<void> {
    const t = this.transport
    this.transport = undefined
    this.ingestedKey = undefined
    await t?.close()
  }
}

/** The turns of a conversation as the ingest message carries them. */
export function turnsOf(c: Conversation): Array<{id: string; speaker: string; text: string; time: string | null}> {
  return c.turns.map((t) => ({
    id: t.id,
    speaker: t.speaker,
    text: t.caption ? `${t.text} [image: ${t.caption}]` : t.text,
    time: t.time === null ? null : new Date(t.time).toISOString(),
  }))
}

/** Per-search timings of a set of questions: warm-up first, then repeated timed passes. */
interface ServiceLatency {
  readonly p50: number
  readonly p95: number
  readonly p99: number
  readonly timings: number
  /** Percentiles of the engine's declared cost (cost_model engines only). */
  readonly cost?: {readonly p50: number; readonly p95: number; readonly p99: number}
}

/** Scores of one pass and the latency of repeated passes over the same questions. */
export interface ServiceRun {
  readonly report: MetricReport
  readonly rows: MetricValues[]
  readonly queries: EvalQuery[]
  readonly latency: ServiceLatency
}

/**
 * Scores `queries` with one pass (also timed), after SERVICE_WARMUP_QUERIES untimed searches, then
 * repeats timed passes until SERVICE_MIN_TIMINGS timings (at most SERVICE_MAX_PASSES passes).
 */
export async function runService(
  session: ServiceSession,
  queries: readonly EvalQuery[],
  config: Config,
  options: {ks?: readonly number[]; minTimings?: number} = {},
): Promise<ServiceRun> {
  const ks = options.ks ?? DEFAULT_KS
  const depth = rankingDepth(ks)
  await session.ensureIngested(config)
  for (let i = 0; i < Math.min(SERVICE_WARMUP_QUERIES, queries.length); i++)
    await session.rank(queries[i], depth, config)
  const times: number[] = []
  const costs: number[] = []
  const rows: MetricValues[] = []
  for (const q of queries) {
    const r = await session.rank(q, depth, config)
    times.push(r.ms)
    if (r.cost !== undefined) costs.push(r.cost)
    rows.push(queryMetrics(r.ids, q.evidence, ks))
  }
  const wanted = options.minTimings ?? SERVICE_MIN_TIMINGS
  const passes = queries.length === 0 ? 0 : Math.min(SERVICE_MAX_PASSES, Math.ceil(wanted / queries.length)) - 1
  for (let p = 0; p < passes; p++)
    for (const q of queries) {
      const r = await session.rank(q, depth, config)
      times.push(r.ms)
      if (r.cost !== undefined) costs.push(r.cost)
    }
  const pct = (xs: number[]) => ({p50: quantile(xs, 0.5), p95: quantile(xs, 0.95), p99: quantile(xs, 0.99)})
  return {
    report: aggregate(queries, rows),
    rows,
    queries: [...queries],
    latency: {...pct(times), timings: times.length, ...(costs.length > 0 ? {cost: pct(costs)} : {})},
  }
}

export interface ServiceObjectiveOptions {
  /** Seed of the question tiers (default 0). */
  readonly tierSeed?: number
  /** Metric to maximise (default: the spec's, else recall@10). */
  readonly metric?: string
  /** Timed searches wanted per evaluation (default SERVICE_MIN_TIMINGS). */
  readonly minTimings?: number
  /** Label of the data in the objective id. */
  readonly dataLabel?: string
}

/** kt's tiers when an engine file names none: a ninth, a third and all of the questions. */
const DEFAULT_SERVICE_TIERS = [
  {name: 'low', budget: 1},
  {name: 'medium', budget: 3},
  {name: 'high', budget: 9},
]

/** Names of the minimised objective vector of a retrieval service study (without engine-file objectives). */
const SERVICE_VALUE_NAMES = ['neg_quality', 'p99_ms'] as const

/** At most this many service processes kt runs at once for one study (one per trial in flight). */
const MAX_SERVICE_SESSIONS = 8

/** A study's objective in the engine file's terms: the metric, its direction. */
export interface ServiceObjectiveTerm {
  readonly metric: string
  readonly direction: 'maximize' | 'minimize'
}

/**
 * Sessions to a service, one per trial in flight. A service that kt starts itself (stdio, or an
 * HTTP server with a command) gets one process per session, so trials in flight never share
 * ingested state; a service at a fixed URL is one shared state, so its trials run one at a time.
 */
class SessionPool {
  private readonly idle: ServiceSession[] = []
  private readonly all: ServiceSession[] = []
  private readonly waiters: Array<(s: ServiceSession) => void> = []

  constructor(
    private readonly spec: RetrievalServiceSpec,
    private readonly dataset: MemoryDataset,
  ) {}

  private get capacity(): number {
    return this.spec.transport.command ? MAX_SERVICE_SESSIONS : 1
  }

  acquire(): Promise<ServiceSession> {
    const free = this.idle.pop()
    if (free) return Promise.resolve(free)
    if (this.all.length < this.capacity) {
      const session = new ServiceSession(this.spec, this.dataset)
      this.all.push(session)
      return Promise.resolve(session)
    }
    return new Promise((resolve) => this.waiters.push(resolve))
  }

  release(session: ServiceSession): void {
    const next = this.waiters.shift()
    if (next) next(session)
    else this.idle.push(session)
  }

  get first(): ServiceSession | undefined {
    return this.all[0]
  }

  async close(): Promise<void> {
    await Promise.all(this.all.map((s) => s.close()))
  }
}

/**
 * A retrieval service over a dataset as a search objective, a budget picking a question tier.
 * Metrics: `quality` (the quality metric) and every overall metric by name (recall@k, hit@k,
 * ndcg@10, mrr), `quality.<category>`, `p50_ms`/`p95_ms`/`p99_ms` (measured wall time per search
 * on kt's side, or the engine's declared cost model; the wall time is then in measured_*), and the
 * ingestion time as a timing. With `objectives` (an engine file's), loss and values follow them
 * (first = loss, maximised ones negated); otherwise [-quality, p99_ms].
 */
export function retrievalServiceObjective(
  spec: RetrievalServiceSpec,
  dataset: MemoryDataset,
  options: ServiceObjectiveOptions & {objectives?: readonly ServiceObjectiveTerm[]} = {},
): Objective & {
  close(): Promise<void>
  readonly selection: QuerySelection
  readonly firstSession: () => ServiceSession | undefined
} {
  const metric = options.metric ?? spec.metric ?? DEFAULT_TUNING_METRIC
  const selection = selectScoredQueries(dataset)
  const tierList = spec.tiers && spec.tiers.length > 0 ? spec.tiers : DEFAULT_SERVICE_TIERS
  const max = tierList.at(-1)!.budget
  const specs: TierSpec[] = tierList.map((t) => ({name: t.name, budget: t.budget, fraction: t.budget / max}))
  const tiers = questionTiers(selection.queries, options.tierSeed ?? 0, specs)
  const byId = new Map(selection.queries.map((q) => [q.id, q]))
  const pool = new SessionPool(spec, dataset)
  const base = defaultConfig(spec.space)
  const objectives = options.objectives
  return {
    id: `service:${spec.name}:${options.dataLabel ?? dataset.source}`,
    space: spec.space,
    fidelity: tierFidelity(tierList),
    valueNames: objectives ? valueNames(objectives) : SERVICE_VALUE_NAMES,
    concurrent: true,
    selection,
    firstSession: () => pool.first,
    async evaluate(config, budget): Promise<EvalResult> {
      const tier = tierForBudget(tiers, budget)
      const full = {...base, ...config}
      const session = await pool.acquire()
      let run: ServiceRun
      const ingestions = session.ingestions
      try {
        run = await runService(
          session,
          tier.queryIds.map((id) => byId.get(id)!),
          full,
          {minTimings: options.minTimings},
        )
      } finally {
        pool.release(session)
      }
      const overall = run.report.overall
      const quality = overall[metric]
      if (quality === undefined)
        throw new Error(`metric ${metric}: expected recall@k, hit@k, ndcg@10 or mrr (k in ${DEFAULT_KS.join(', ')})`)
      const lat = spec.latency === 'cost_model' && run.latency.cost ? run.latency.cost : run.latency
      const metrics: Record<string, number> = {
        quality,
        p99_ms: lat.p99,
        p95_ms: lat.p95,
        p50_ms: lat.p50,
        queries: tier.queryIds.length,
        [`${TIMING_METRIC_PREFIX}p99_ms`]: run.latency.p99,
        [`${TIMING_METRIC_PREFIX}p50_ms`]: run.latency.p50,
        [`${TIMING_METRIC_PREFIX}timings`]: run.latency.timings,
      }
      if (session.ingestions !== ingestions) metrics[`${TIMING_METRIC_PREFIX}ingest_ms`] = session.lastIngestMs
      for (const [k, v] of Object.entries(overall)) if (k !== 'n') metrics[k] = v
      for (const [category, m] of Object.entries(run.report.by_category)) {
        metrics[`quality.${category}`] = m[metric]
        metrics[`queries.${category}`] = m.n
      }
      if (!objectives) return {loss: -quality, values: [-quality, lat.p99], metrics}
      const values = objectives.map((o) => {
        const v = metrics[o.metric]
        if (v === undefined || !Number.isFinite(v))
          throw new Error(
            `objective ${o.metric}: not a metric of a retrieval service (quality, recall@k, hit@k, ndcg@10, mrr, p50_ms, p95_ms, p99_ms, quality.<category>)`,
          )
        return o.direction === 'maximize' ? -v : v
      })
      return {loss: values[0], values: values.length > 1 ? values : undefined, metrics}
    },
    close: () => pool.close(),
  }
}

/** Ranking metrics kt computes for a service (what an engine file's quality objective may name). */
const RANKING_METRIC = /^(recall@\d+|hit@\d+|ndcg@10|mrr)$/

/** What kt needs from a loaded engine file whose evaluate.kind is retrieval-service. */
export function serviceSpecOf(engine: EngineSpec): RetrievalServiceSpec {
  const ev = engine.evaluate
  if (ev.kind !== 'retrieval-service')
    throw new InputError(`${engine.file}: evaluate.kind`, '"retrieval-service"', describeValue(ev.kind))
  const quality = engine.objectives.find((o) => RANKING_METRIC.test(o.metric) && o.direction === 'maximize')
  return {
    name: engine.name,
    file: engine.file,
    space: engine.space,
    ingestParams: engine.parameters.filter((p) => p.ingest).map((p) => p.name),
    transport: {
      transport: ev.transport,
      url: ev.url,
      command: ev.command,
      cwd: ev.cwd,
      env: ev.env,
      timeoutMs: ev.timeout_s * 1000,
      startupTimeoutMs: ev.startup_timeout_s * 1000,
    },
    tiers: engine.tiers,
    metric: quality?.metric ?? DEFAULT_TUNING_METRIC,
    latency: ev.latency,
    deterministic: engine.deterministic,
    properties: engine.properties,
  }
}

/** An engine file that must be a retrieval service for `purpose` (e.g. "kt eval"): one line naming its evaluate.kind otherwise. */
export function loadServiceEngine(file: string, purpose: string): {engine: EngineSpec; spec: RetrievalServiceSpec} {
  const engine = loadEngineFile(file)
  if (engine.evaluate.kind !== 'retrieval-service')
    throw new InputError(
      `${file}: evaluate.kind`,
      `"retrieval-service" for ${purpose}`,
      JSON.stringify(engine.evaluate.kind),
    )
  return {engine, spec: serviceSpecOf(engine)}
}

/**
 * Module factory (the `module` objective spec, worker threads, resumed studies): options engine
 * (engine file path), data (dataset path), format, questions, columns (as `kt eval`), split and
 * part (src/data/conversations/split.ts), tierSeed.
 */
export async function createObjective(options: Record<string, unknown>): Promise<Objective> {
  if (typeof options.engine !== 'string')
    throw new InputError('retrieval-service objective: engine', 'an engine file path', describeValue(options.engine))
  return serviceObjectiveOf(loadEngineFile(options.engine), options)
}

/** A loaded retrieval-service engine file over a dataset (options data, format, questions, columns, split, part, tierSeed). */
export async function serviceObjectiveOf(engine: EngineSpec, options: Record<string, unknown>): Promise<Objective> {
  const {loadMemoryDataset} = await import('../data/conversations/index.js')
  const {splitDataset} = await import('../data/conversations/split.js')
  if (typeof options.data !== 'string')
    throw new InputError('retrieval-service objective: data', 'a dataset path (--data)', describeValue(options.data))
  const loaded = loadMemoryDataset(options.data, {
    format: options.format as never,
    questions: options.questions as string | undefined,
    columns: options.columns as never,
  })
  const dataset = options.split
    ? splitDataset(loaded, options.split as SplitSpec, (options.part as SplitPart | undefined) ?? 'train')
    : loaded
  const spec = serviceSpecOf(engine)
  const ev = engine.evaluate as RetrievalServiceEvaluate
  return retrievalServiceObjective(spec, dataset, {
    tierSeed: options.tierSeed as number | undefined,
    objectives: engine.objectives,
    minTimings: ev.timings,
    dataLabel: options.data,
  })
}
