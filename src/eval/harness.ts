import {performance} from 'node:perf_hooks'
import type {MemoryDataset} from '../data/conversations/types.js'
import {RetrievalEngine, type EngineOptions} from '../engine/retrieval/engine.js'
import {QUERY_TYPES, type QueryType} from '../engine/retrieval/classifier.js'
import type {Config} from '../space/types.js'
import {quantile} from '../stats/summary.js'
import {
  aggregate,
  DEFAULT_KS,
  queryMetrics,
  rankingDepth,
  type MetricReport,
  type MetricValues,
} from '../data/conversations/metrics.js'
import {selectScoredQueries, type EvalQuery, type QuerySelection} from '../data/conversations/queries.js'
import type {RerankedOutput} from './reranked.js'

/** The three systems every evaluation compares. */
export type SystemName = 'engine' | 'bm25' | 'vector'

/** A dataset with its engines built once, reused by every configuration evaluated on it. */
export interface PreparedEvaluation {
  readonly dataset: MemoryDataset
  readonly selection: QuerySelection
  readonly engines: ReadonlyMap<string, RetrievalEngine>
  /** Wall time to build every conversation's indexes and graph (timing only, not a result). */
  readonly buildMs: number
}

/** Each scored question's query type (kt's classifier over its conversation's names), by question id. */
export function queryTypes(prepared: PreparedEvaluation): Map<string, QueryType> {
  return new Map(prepared.selection.queries.map((q) => [q.id, prepared.engines.get(q.conversation)!.classify(q.text)]))
}

export function prepareEvaluation(dataset: MemoryDataset, options: EngineOptions = {}): PreparedEvaluation {
  const engines = new Map<string, RetrievalEngine>()
  const start = performance.now()
  for (const c of dataset.conversations) engines.set(c.id, new RetrievalEngine(c, options))
  const buildMs = performance.now() - start
  return {dataset, selection: selectScoredQueries(dataset), engines, buildMs}
}

/** The top `depth` turn ids for a query from one system. */
export function rankQuery(
  prepared: PreparedEvaluation,
  query: EvalQuery,
  system: SystemName,
  config: Config,
  depth: number,
): string[] {
  const engine = prepared.engines.get(query.conversation) as RetrievalEngine
  if (system === 'bm25') return engine.ids(engine.searchBm25(query.text, depth))
  if (system === 'vector') return engine.ids(engine.searchVector(query.text, depth))
  return engine.ids(engine.search(query.text, config, depth))
}

/** Queries by id (all scored queries when `ids` is absent), in dataset order. */
function queriesOf(prepared: PreparedEvaluation, ids?: readonly string[]): EvalQuery[] {
  if (ids === undefined) return prepared.selection.queries
  const wanted = new Set(ids)
  return prepared.selection.queries.filter((q) => wanted.has(q.id))
}

/** Per-query metric rows and their averages for one system and configuration. */
export function evaluateSystem(
  prepared: PreparedEvaluation,
  system: SystemName,
  config: Config,
  options: {queryIds?: readonly string[]; ks?: readonly number[]} = {},
): {report: MetricReport; rows: MetricValues[]; queries: EvalQuery[]} {
  return evaluateRanking(prepared, (q, depth) => rankQuery(prepared, q, system, config, depth), options)
}

/** Per-query metric rows and their averages for any ranking of the queries (ids best first, at least `depth` deep). */
export function evaluateRanking(
  prepared: PreparedEvaluation,
  rank: (query: EvalQuery, depth: number) => string[],
  options: {queryIds?: readonly string[]; ks?: readonly number[]} = {},
): {report: MetricReport; rows: MetricValues[]; queries: EvalQuery[]} {
  const ks = options.ks ?? DEFAULT_KS
  const depth = rankingDepth(ks)
  const queries = queriesOf(prepared, options.queryIds)
  const rows = queries.map((q) => queryMetrics(rank(q, depth), q.evidence, ks))
  return {report: aggregate(queries, rows), rows, queries}
}

export interface LatencySummary {
  readonly p50: number
  readonly p95: number
  readonly p99: number
  readonly queries: number
}

/** Timed queries wanted for stable tail percentiles (a p99 from 50 timings is nearly the maximum). */
export const LATENCY_MIN_TIMINGS = 500
/** At most this many timed passes over the queries. */
export const LATENCY_MAX_PASSES = 20
/**
 * Untimed queries first: V8 optimises hot functions only after a few hundred calls, and the calls
 * around that point can take tens of milliseconds (compilation, deoptimisation).
 */
export const LATENCY_WARMUP_QUERIES = 500

/**
 * Engine latency per query in milliseconds, warm and in-process: untimed passes over the
 * queries first (at least LATENCY_WARMUP_QUERIES queries), then timed passes until there are
 * LATENCY_MIN_TIMINGS timings (at most LATENCY_MAX_PASSES passes each way).
 */
function measureLatency(
  prepared: PreparedEvaluation,
  config: Config,
  ks: readonly number[] = DEFAULT_KS,
): LatencySummary {
  const depth = rankingDepth(ks)
  const times: number[] = []
  runTimedPasses(prepared.selection.queries, (q, timed) => {
    const t0 = performance.now()
    rankQuery(prepared, q, 'engine', config, depth)
    if (timed) times.push(performance.now() - t0)
  })
  return latencySummary(times)
}

/**
 * Runs `run` over the queries: untimed passes first (at least LATENCY_WARMUP_QUERIES queries), then
 * timed passes until LATENCY_MIN_TIMINGS queries ran (at most LATENCY_MAX_PASSES passes each way);
 * `timed` tells `run` whether to record its timings.
 */
export function runTimedPasses(queries: readonly EvalQuery[], run: (query: EvalQuery, timed: boolean) => void): void {
  const passesFor = (wanted: number): number =>
    queries.length === 0 ? 0 : Math.min(LATENCY_MAX_PASSES, Math.ceil(wanted / queries.length))
  for (let pass = 0; pass < passesFor(LATENCY_WARMUP_QUERIES); pass++) for (const q of queries) run(q, false)
  for (let pass = 0; pass < passesFor(LATENCY_MIN_TIMINGS); pass++) for (const q of queries) run(q, true)
}

/** p50/p95/p99 of per-query timings in milliseconds (zeros when there are none). */
export function latencySummary(times: readonly number[]): LatencySummary {
  if (times.length === 0) return {p50: 0, p95: 0, p99: 0, queries: 0}
  return {p50: quantile(times, 0.5), p95: quantile(times, 0.95), p99: quantile(times, 0.99), queries: times.length}
}

/**
 * The query types the classifier is expected to give each LoCoMo category, for the agreement
 * figure beside the confusion matrix: LoCoMo's multi-hop questions mostly gather facts across
 * sessions (multi-hop or exploratory), open-domain ones ask for inference (multi-hop or
 * exploratory), single-hop ones ask one fact (simple factual or entity lookup).
 */
const EXPECTED_TYPES: Readonly<Record<string, readonly QueryType[]>> = {
  'multi-hop': ['multi_hop', 'exploratory'],
  temporal: ['temporal'],
  'open-domain': ['multi_hop', 'exploratory'],
  'single-hop': ['simple_factual', 'entity_lookup'],
}

export interface ConfusionMatrix {
  /** LoCoMo category -> query type -> count, over every question (adversarial included). */
  readonly matrix: Record<string, Record<QueryType, number>>
  /** Share of scored questions whose type is one EXPECTED_TYPES allows for their category. */
  readonly agreement: number
}

export function classifierConfusion(prepared: PreparedEvaluation): ConfusionMatrix {
  const matrix: Record<string, Record<QueryType, number>> = {}
  let agree = 0
  let scored = 0
  for (const q of prepared.dataset.questions) {
    const type = (prepared.engines.get(q.conversation) as RetrievalEngine).classify(q.text)
    const row = (matrix[q.category] ??= Object.fromEntries(QUERY_TYPES.map((t) => [t, 0])) as Record<QueryType, number>)
    row[type]++
    const expected = EXPECTED_TYPES[q.category]
    if (expected) {
      scored++
      if (expected.includes(type)) agree++
    }
  }
  return {matrix, agreement: scored === 0 ? 0 : agree / scored}
}

/** Mean classifier time per question in microseconds (warm; timing only). */
function classifierMicroseconds(prepared: PreparedEvaluation, repeats = 20): number {
  const questions = prepared.dataset.questions
  if (questions.length === 0) return 0
  const classify = (): void => {
    for (const q of questions) (prepared.engines.get(q.conversation) as RetrievalEngine).classify(q.text)
  }
  classify()
  const t0 = performance.now()
  for (let r = 0; r < repeats; r++) classify()
  return ((performance.now() - t0) * 1000) / (repeats * questions.length)
}

/** Everything `kt eval` prints, in the JSON shape of the issue (plus details). */
export interface EvalOutput {
  readonly data: string
  readonly queries: number
  readonly skipped: QuerySelection['skipped']
  readonly ks: readonly number[]
  readonly engine: MetricReport
  readonly baselines: {readonly bm25: MetricReport; readonly vector: MetricReport}
  readonly latency_ms: {readonly p50: number; readonly p95: number; readonly p99: number}
  readonly build_ms: number
  readonly classifier: ConfusionMatrix & {readonly us_per_query: number}
  readonly warnings: Record<string, number>
  readonly turns: number
  readonly conversations: number
  /** With `kt eval --reranker`: the engine followed by the learned reranker (eval/reranked.ts). */
  readonly reranked?: RerankedOutput
}

export function runEvaluation(
  dataset: MemoryDataset,
  config: Config,
  options: {ks?: readonly number[]; engine?: EngineOptions} = {},
): EvalOutput {
  return evaluatePrepared(prepareEvaluation(dataset, options.engine), config, options.ks ?? DEFAULT_KS)
}

/** runEvaluation on a dataset whose engines are already built. */
export function evaluatePrepared(
  prepared: PreparedEvaluation,
  config: Config,
  ks: readonly number[] = DEFAULT_KS,
): EvalOutput {
  const dataset = prepared.dataset
  const engine = evaluateSystem(prepared, 'engine', config, {ks}).report
  const bm25 = evaluateSystem(prepared, 'bm25', config, {ks}).report
  const vector = evaluateSystem(prepared, 'vector', config, {ks}).report
  const latency = measureLatency(prepared, config, ks)
  return {
    data: dataset.source,
    queries: prepared.selection.queries.length,
    skipped: prepared.selection.skipped,
    ks,
    engine,
    baselines: {bm25, vector},
    latency_ms: {p50: latency.p50, p95: latency.p95, p99: latency.p99},
    build_ms: prepared.buildMs,
    classifier: {...classifierConfusion(prepared), us_per_query: classifierMicroseconds(prepared)},
    warnings: dataset.warnings,
    turns: dataset.conversations.reduce((s, c) => s + c.turns.length, 0),
    conversations: dataset.conversations.length,
  }
}
