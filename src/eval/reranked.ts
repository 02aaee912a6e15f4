import {performance} from 'node:perf_hooks'
import {candidateFeatures, DEFAULT_CANDIDATE_POOL} from '../engine/retrieval/features.js'
import type {RetrievalEngine} from '../engine/retrieval/engine.js'
import type {EngineReranker} from '../rank/apply.js'
import {rerankCandidates, rerankedSearch} from '../rank/search.js'
import type {Config} from '../space/types.js'
import {meanStatistic, pairedBootstrapDelta} from '../stats/bootstrap.js'
import {InputError} from '../util/errors.js'
import {Rng} from '../util/rng.js'
import type {MemoryDataset} from '../data/conversations/types.js'
import type {EngineOptions} from '../engine/retrieval/engine.js'
import {
  evaluatePrepared,
  evaluateRanking,
  evaluateSystem,
  latencySummary,
  prepareEvaluation,
  runTimedPasses,
  type EvalOutput,
  type LatencySummary,
  type PreparedEvaluation,
} from './harness.js'
import {DEFAULT_KS, NDCG_K, rankingDepth, type MetricReport, type MetricValues} from '../data/conversations/metrics.js'
import type {EvalQuery} from '../data/conversations/queries.js'

/**
 * `kt eval --reranker`: the engine followed by a learned reranker (src/rank) scored on the same
 * questions with the same metrics as the engine alone, a paired comparison of the two, and the
 * reranked path's latency (timing, separate from the results).
 */

/** Name of the reranked system in reports. */
const RERANKED_SYSTEM = 'engine+reranker'
/** Seed of the paired bootstrap (fixed so the interval is reproducible). */
const RERANK_BOOTSTRAP_SEED = 20_241
/** Metrics the paired comparison reports (NDCG at the report's cut-off, MRR). */
const PAIRED_METRICS = [`ndcg@${NDCG_K}`, 'mrr'] as const

export interface RerankOptions {
  readonly reranker: EngineReranker
  /** Engine candidates the model reorders per query. */
  readonly pool: number
}

/** The top `depth` turn ids of the reranked system for one query. */
export function rankReranked(
  prepared: PreparedEvaluation,
  query: EvalQuery,
  config: Config,
  depth: number,
  options: RerankOptions,
): string[] {
  const engine = prepared.engines.get(query.conversation) as RetrievalEngine
  return rerankedSearch(engine, options.reranker, query.text, config, depth, options.pool).ids
}

/** The ranking depth the cut-offs need must fit in the pool (a one-line error naming `where` the pool came from). */
export function checkPool(pool: number, ks: readonly number[], where = '--rerank-pool'): void {
  const depth = rankingDepth(ks)
  if (!Number.isInteger(pool) || pool < depth)
    throw new InputError(where, `an integer >= the ranking depth the cut-offs need (${depth})`, String(pool))
}

/** The pool a reranker is served with, and a warning for the user when the choice is unchecked. */
export interface RerankPool {
  readonly pool: number
  /** Where the pool came from, for messages: --rerank-pool, the model file's pool field, or the default. */
  readonly from: string
  readonly warning?: string
}

/**
 * The pool to serve a loaded model with. The model's recorded pool (its training log's `--pool`)
 * is the default, else DEFAULT_CANDIDATE_POOL. A model with query-level columns (computed over the
 * pool, so another pool feeds it other numbers) refuses a different explicit pool with a one-line
 * InputError; when such a model records no pool, the pool used cannot be checked: warned.
 */
export function resolveRerankPool(
  explicit: number | undefined,
  model: {readonly file: string; readonly pool?: number; readonly reranker: Pick<EngineReranker, 'layout'>},
): RerankPool {
  const queryLevel = model.reranker.layout.queryFeatures.length > 0
  if (model.pool !== undefined) {
    if (queryLevel && explicit !== undefined && explicit !== model.pool) {
      throw new InputError(
        '--rerank-pool',
        `${model.pool}, the pool ${model.file}'s query-level columns were computed over (omit the flag to use it)`,
        String(explicit),
      )
    }
    return explicit !== undefined
      ? {pool: explicit, from: '--rerank-pool'}
      : {pool: model.pool, from: `${model.file} field pool (the default --rerank-pool)`}
  }
  const pool = explicit ?? DEFAULT_CANDIDATE_POOL
  const from = explicit !== undefined ? '--rerank-pool' : `--rerank-pool (default ${DEFAULT_CANDIDATE_POOL})`
  if (!queryLevel) return {pool, from}
  return {
    pool,
    from,
    warning: `${model.file} has query-level columns but records no candidate pool: serving with pool ${pool}, which must equal its training log's --pool`,
  }
}

/** Per-query metric rows and their averages for the engine + reranker. */
export function evaluateReranked(
  prepared: PreparedEvaluation,
  config: Config,
  options: RerankOptions & {queryIds?: readonly string[]; ks?: readonly number[]},
): {report: MetricReport; rows: MetricValues[]; queries: EvalQuery[]} {
  checkPool(options.pool, options.ks ?? DEFAULT_KS)
  return evaluateRanking(prepared, (q, depth) => rankReranked(prepared, q, config, depth, options), options)
}

/** A paired bootstrap interval of (reranked - engine) for one metric over the same queries. */
interface PairedDelta {
  readonly metric: string
  readonly engine: number
  readonly reranked: number
  readonly delta: number
  readonly low: number | null
  readonly high: number | null
  readonly confidence: number
  /** Queries where the reranked system scores higher / lower than the engine. */
  readonly better: number
  readonly worse: number
}

/** Paired deltas of PAIRED_METRICS (seeded percentile bootstrap over queries). */
function pairedDeltas(engineRows: readonly MetricValues[], rerankedRows: readonly MetricValues[]): PairedDelta[] {
  return PAIRED_METRICS.map((metric) => {
    const a = engineRows.map((r) => r[metric])
    const b = rerankedRows.map((r) => r[metric])
    const result = pairedBootstrapDelta(a.length, meanStatistic(a), meanStatistic(b), {
      rng: new Rng(RERANK_BOOTSTRAP_SEED),
    })
    return {
      metric,
      engine: result.estimateA ?? 0,
      reranked: result.estimateB ?? 0,
      delta: result.estimate ?? 0,
      low: result.low,
      high: result.high,
      confidence: result.confidence,
      better: a.filter((x, i) => b[i] > x).length,
      worse: a.filter((x, i) => b[i] < x).length,
    }
  })
}

/** Per-query latency of the reranked path (ms), whole and by stage. */
interface RerankLatency extends LatencySummary {
  /** The engine's search at pool depth plus the candidates' feature rows. */
  readonly candidates: LatencySummary
  /** The model: query-level columns, packed scoring and the sort (the reranking proper). */
  readonly model: LatencySummary
}

/** Warm in-process latency of engine + reranker per query, as measureLatency times the engine. */
function measureRerankLatency(
  prepared: PreparedEvaluation,
  config: Config,
  options: RerankOptions & {ks?: readonly number[]},
): RerankLatency {
  const depth = rankingDepth(options.ks ?? DEFAULT_KS)
  const total: number[] = []
  const candidates: number[] = []
  const model: number[] = []
  runTimedPasses(prepared.selection.queries, (q, timed) => {
    const engine = prepared.engines.get(q.conversation) as RetrievalEngine
    const t0 = performance.now()
    const rows = candidateFeatures(engine, q.text, config, options.pool)
    const t1 = performance.now()
    rerankCandidates(options.reranker, rows, depth)
    const t2 = performance.now()
    if (timed) {
      total.push(t2 - t0)
      candidates.push(t1 - t0)
      model.push(t2 - t1)
    }
  })
  return {...latencySummary(total), candidates: latencySummary(candidates), model: latencySummary(model)}
}

/** What `kt eval --reranker` adds to the evaluation output. */
export interface RerankedOutput extends MetricReport {
  readonly system: typeof RERANKED_SYSTEM
  /** The model file read (a registry version's file for `deployed`). */
  readonly model: string
  readonly version?: string
  readonly trees: number
  readonly feature_names: readonly string[]
  readonly pool: number
  /** Paired (reranked - engine) differences over the same queries. */
  readonly vs_engine: PairedDelta[]
  /** Timing only (varies from run to run): per query, warm, in-process. */
  readonly latency_ms: {
    readonly p50: number
    readonly p95: number
    readonly p99: number
    readonly candidates: {readonly p50: number; readonly p99: number}
    readonly model: {readonly p50: number; readonly p99: number}
  }
}

/** The model as the report names it. */
export interface RerankerIdentity {
  readonly file: string
  readonly version?: string
  readonly trees: number
  readonly featureNames: readonly string[]
}

/** The engine + reranker's part of the evaluation output. */
function rerankedOutput(
  prepared: PreparedEvaluation,
  config: Config,
  ks: readonly number[],
  options: RerankOptions & {identity: RerankerIdentity},
): RerankedOutput {
  const engine = evaluateSystem(prepared, 'engine', config, {ks})
  const reranked = evaluateReranked(prepared, config, {...options, ks})
  const latency = measureRerankLatency(prepared, config, {...options, ks})
  return {
    system: RERANKED_SYSTEM,
    model: options.identity.file,
    ...(options.identity.version === undefined ? {} : {version: options.identity.version}),
    trees: options.identity.trees,
    feature_names: options.identity.featureNames,
    pool: options.pool,
    ...reranked.report,
    vs_engine: pairedDeltas(engine.rows, reranked.rows),
    latency_ms: {
      p50: latency.p50,
      p95: latency.p95,
      p99: latency.p99,
      candidates: {p50: latency.candidates.p50, p99: latency.candidates.p99},
      model: {p50: latency.model.p50, p99: latency.model.p99},
    },
  }
}

/** runEvaluation plus the engine + reranker on the same questions (engines built once). */
export function runRerankedEvaluation(
  dataset: MemoryDataset,
  config: Config,
  options: RerankOptions & {identity: RerankerIdentity; ks?: readonly number[]; engine?: EngineOptions},
): EvalOutput {
  const ks = options.ks ?? DEFAULT_KS
  checkPool(options.pool, ks)
  const prepared = prepareEvaluation(dataset, options.engine)
  return {...evaluatePrepared(prepared, config, ks), reranked: rerankedOutput(prepared, config, ks, options)}
}
