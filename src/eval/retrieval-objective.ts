/**
 * The retrieval engine as a bi-objective search objective: quality (a ranking metric over the
 * fidelity tier's queries, maximised) and P99 query latency (minimised), with the quality per
 * query type (the engine's classifier) in the metrics so domain profiles and routed sweeps can
 * read it. Built on the engine's evaluation harness (src/eval), which it does not change.
 *
 * - loss = -quality; values = [-quality, p99_ms] (both minimised, for BOHB's Pareto ranking);
 * - budget picks the fidelity tier (1, 3, 9: a ninth, a third, all of the queries);
 * - `queryType` restricts the objective to the queries the classifier gives that type (tiers are
 *   then built from those queries), for per-type sweeps.
 *
 * Latency in the objective is the cost-model ESTIMATE, not a timing: each query's counted work
 * (RetrievalEngine.lastWork) through estimatedLatencyMs (src/engine/retrieval/cost.ts), so
 * `p99_ms` / `p50_ms` and the values are deterministic, and a repeated study (same seed) repeats
 * its trials, Pareto ranking, front and domain profiles exactly. The measured wall-clock
 * percentiles of the same pass are kept in the metrics under TIMING_METRIC_PREFIX
 * (`measured_p99_ms`, `measured_p50_ms`): they are timings, differ from run to run, and are
 * never read by the optimiser or the profiles.
 */
import {performance} from 'node:perf_hooks'
import {estimatedLatencyMs} from '../engine/retrieval/cost.js'
import {loadMemoryDataset} from '../data/conversations/index.js'
import {QUERY_TYPES, type QueryType} from '../engine/retrieval/classifier.js'
import type {RetrievalEngine} from '../engine/retrieval/engine.js'
import {RETRIEVAL_SPACE} from '../engine/retrieval/space.js'
import {
  LATENCY_MAX_PASSES,
  LATENCY_MIN_TIMINGS,
  prepareEvaluation,
  rankQuery,
  type PreparedEvaluation,
} from './harness.js'
import {DEFAULT_KS, queryMetrics, rankingDepth, retrievalMetricNames} from '../data/conversations/metrics.js'
import type {EvalQuery} from '../data/conversations/queries.js'
import {fidelityTiers, tierForBudget, type FidelityTier} from '../data/conversations/tiers.js'
import {splitDataset, type SplitPart, type SplitSpec} from '../data/conversations/split.js'
import {RETRIEVAL_FIDELITY} from './tune.js'
import {DEFAULT_TUNING_METRIC} from '../data/conversations/metrics.js'
import {defaultConfig, type Config} from '../space/index.js'
import {quantile} from '../stats/summary.js'
import {InputError} from '../util/errors.js'
import {TIMING_METRIC_PREFIX, type EvalResult, type Objective} from '../search/types.js'

/** Names of the minimised objective vector; p99_ms is the cost-model estimate (deterministic). */
export const RETRIEVAL_VALUE_NAMES = ['neg_quality', 'p99_ms'] as const
/** Percentiles of query latency reported. */
const P50 = 0.5
const P99 = 0.99

export interface RetrievalObjectiveOptions {
  /** Ranking metric to maximise (default recall@10). */
  readonly metric?: string
  /** Only the queries the classifier gives this type. */
  readonly queryType?: string
  /** Seed of the fidelity tiers (default 0). */
  readonly tierSeed?: number
}

/** The classifier's type of each scored query. */
export function queryTypes(prepared: PreparedEvaluation): Map<string, QueryType> {
  const types = new Map<string, QueryType>()
  for (const q of prepared.selection.queries)
    types.set(q.id, (prepared.engines.get(q.conversation) as RetrievalEngine).classify(q.text))
  return types
}

/**
 * The cost model against the clock for one configuration: the model's P50/P99 over the queries
 * (deterministic) and the measured ones, warm (one untimed pass first) and repeated (timed passes
 * until LATENCY_MIN_TIMINGS timings, at most LATENCY_MAX_PASSES). A timing: it differs by run and
 * machine load, and never feeds the optimiser, the front or the profiles.
 */
export interface LatencyCheck {
  readonly model_p50_ms: number
  readonly model_p99_ms: number
  readonly measured_p50_ms: number
  readonly measured_p95_ms: number
  readonly measured_p99_ms: number
  readonly timings: number
  /** (model - measured) / measured. */
  readonly error_p50: number
  readonly error_p99: number
}

export function retrievalSearchObjective(
  prepared: PreparedEvaluation,
  options: RetrievalObjectiveOptions = {},
): Objective & {checkLatency(config: Config): LatencyCheck} {
  const metric = options.metric ?? DEFAULT_TUNING_METRIC
  // checked before any trial: a wrong name used to fail every trial and still exit 0
  const metrics = retrievalMetricNames(DEFAULT_KS)
  if (!metrics.includes(metric))
    throw new InputError('retrieval metric', `one of ${metrics.join(', ')}`, JSON.stringify(metric))
  const types = queryTypes(prepared)
  let pool: readonly EvalQuery[] = prepared.selection.queries
  if (options.queryType !== undefined) {
    if (!(QUERY_TYPES as readonly string[]).includes(options.queryType))
      throw new InputError('query type', `one of ${QUERY_TYPES.join(', ')}`, options.queryType)
    pool = pool.filter((q) => types.get(q.id) === options.queryType)
    if (pool.length === 0)
      throw new InputError(
        `query type ${options.queryType}`,
        'at least one scored query of that type',
        'none in the dataset',
      )
  }
  const tiers: FidelityTier[] = fidelityTiers(pool, options.tierSeed ?? 0)
  const byId = new Map(pool.map((q) => [q.id, q]))
  const base = defaultConfig(RETRIEVAL_SPACE)
  const depth = rankingDepth(DEFAULT_KS)
  // One untimed pass with the defaults, so the first trial's measured latency is not the JIT warming up.
  for (const q of pool) rankQuery(prepared, q, 'engine', base, depth)
  return {
    id: `retrieval:${prepared.dataset.source}${options.queryType ? `:${options.queryType}` : ''}`,
    space: RETRIEVAL_SPACE,
    fidelity: RETRIEVAL_FIDELITY,
    valueNames: RETRIEVAL_VALUE_NAMES,
    evaluate(config, budget): EvalResult {
      const tier = tierForBudget(tiers, budget)
      const full = {...base, ...config}
      const times: number[] = []
      const works: number[] = []
      const estimates: number[] = []
      const sums = new Map<string, {sum: number; n: number}>()
      let total = 0
      for (const id of tier.queryIds) {
        const q = byId.get(id) as EvalQuery
        const t0 = performance.now()
        const ranked = rankQuery(prepared, q, 'engine', full, depth)
        times.push(performance.now() - t0)
        const work = (prepared.engines.get(q.conversation) as RetrievalEngine).lastWork
        works.push(work)
        estimates.push(estimatedLatencyMs(work))
        const value = queryMetrics(ranked, q.evidence, DEFAULT_KS)[metric]
        if (value === undefined) throw new InputError('retrieval metric', 'recall@k, hit@k, ndcg@10 or mrr', metric)
        total += value
        const type = types.get(id) as string
        const s = sums.get(type) ?? {sum: 0, n: 0}
        s.sum += value
        s.n++
        sums.set(type, s)
      }
      const quality = total / tier.queryIds.length
      const p99 = quantile(estimates, P99)
      const metrics: Record<string, number> = {
        quality,
        p99_ms: p99,
        p50_ms: quantile(estimates, P50),
        [`${TIMING_METRIC_PREFIX}p99_ms`]: quantile(times, P99),
        [`${TIMING_METRIC_PREFIX}p50_ms`]: quantile(times, P50),
        work_p99: quantile(works, P99),
        queries: tier.queryIds.length,
      }
      for (const [type, s] of sums) {
        metrics[`quality.${type}`] = s.sum / s.n
        metrics[`queries.${type}`] = s.n
      }
      return {loss: -quality, values: [-quality, p99], metrics}
    },
    checkLatency(config: Config): LatencyCheck {
      const full = {...base, ...config}
      const estimates: number[] = []
      for (const q of pool) {
        rankQuery(prepared, q, 'engine', full, depth)
        estimates.push(estimatedLatencyMs((prepared.engines.get(q.conversation) as RetrievalEngine).lastWork))
      }
      const times: number[] = []
      const passes = Math.min(LATENCY_MAX_PASSES, Math.ceil(LATENCY_MIN_TIMINGS / pool.length))
      for (let p = 0; p < passes; p++)
        for (const q of pool) {
          const t0 = performance.now()
          rankQuery(prepared, q, 'engine', full, depth)
          times.push(performance.now() - t0)
        }
      const m50 = quantile(estimates, P50)
      const m99 = quantile(estimates, P99)
      const t50 = quantile(times, P50)
      const t99 = quantile(times, P99)
      return {
        model_p50_ms: m50,
        model_p99_ms: m99,
        measured_p50_ms: t50,
        measured_p95_ms: quantile(times, 0.95),
        measured_p99_ms: t99,
        timings: times.length,
        error_p50: (m50 - t50) / t50,
        error_p99: (m99 - t99) / t99,
      }
    },
  }
}

/**
 * Module factory for `kt search --objective retrieval` and worker threads: loads the dataset and
 * builds the engines in this thread. Options: data (path), metric, queryType, tierSeed, format,
 * questions, columns (as `kt eval`), split (a SplitSpec, src/data/conversations/split.ts) and part ('train', the
 * default, or 'holdout').
 */
export async function createObjective(options: Record<string, unknown>): Promise<Objective> {
  const data = options.data
  if (typeof data !== 'string')
    throw new InputError('retrieval objective: data', 'a dataset path (--data)', String(data))
  const loaded = loadMemoryDataset(data, {
    format: options.format as 'locomo' | 'jsonl' | 'csv' | undefined,
    questions: options.questions as string | undefined,
    columns: options.columns as never,
  })
  // with a split, the part of the conversations this objective sees (tuning by default)
  const dataset = options.split
    ? splitDataset(loaded, options.split as SplitSpec, (options.part as SplitPart | undefined) ?? 'train')
    : loaded
  return retrievalSearchObjective(prepareEvaluation(dataset), {
    metric: options.metric as string | undefined,
    queryType: options.queryType as string | undefined,
    tierSeed: options.tierSeed as number | undefined,
  })
}

/**
 * Loads a dataset once (with a split, its tuning conversations) and hands out objectives over all
 * queries or one query type (for routed sweeps), with the serializable spec worker threads and
 * resumed studies rebuild them from.
 * Types without any scored query in the dataset are listed in `missingTypes`.
 */
export function retrievalObjectives(options: {data: string; metric?: string; tierSeed?: number; split?: SplitSpec}): {
  objectiveFor: (type: string | undefined) => {
    spec: {name: 'retrieval'; options: Record<string, unknown>}
    instance: Objective
  }
  types: QueryType[]
  missingTypes: QueryType[]
} {
  // with a split, only the tuning conversations: the held-out ones are for validation
  const loaded = loadMemoryDataset(options.data)
  const prepared = prepareEvaluation(options.split ? splitDataset(loaded, options.split, 'train') : loaded)
  const counts = new Map<string, number>()
  for (const type of queryTypes(prepared).values()) counts.set(type, (counts.get(type) ?? 0) + 1)
  const cache = new Map<string, Objective>()
  return {
    objectiveFor(type) {
      const key = type ?? '*'
      if (!cache.has(key))
        cache.set(
          key,
          retrievalSearchObjective(prepared, {metric: options.metric, queryType: type, tierSeed: options.tierSeed}),
        )
      return {
        spec: {
          name: 'retrieval',
          options: {
            data: options.data,
            metric: options.metric,
            tierSeed: options.tierSeed,
            queryType: type,
            ...(options.split ? {split: options.split, part: 'train'} : {}),
          },
        },
        instance: cache.get(key)!,
      }
    },
    types: QUERY_TYPES.filter((t) => (counts.get(t) ?? 0) > 0),
    missingTypes: QUERY_TYPES.filter((t) => (counts.get(t) ?? 0) === 0),
  }
}
