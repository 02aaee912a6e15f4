/**
 * Measures the retrieval latency cost model (src/engine/retrieval/cost.ts) on this machine: for
 * seeded synthetic conversations of several sizes and configurations drawn uniformly from the
 * retrieval space (the region a search explores), each query's wall time (the minimum over
 * repeated passes: the least-disturbed measurement on a shared machine) against its counted work,
 * then a least-squares line through those points. Timings only; the committed constants are what
 * the retrieval objective uses.
 */
import {availableParallelism, loadavg} from 'node:os'
import {performance} from 'node:perf_hooks'
import {
  FIXED_QUERY_OVERHEAD_MS,
  NS_PER_WORK_UNIT,
  estimatedLatencyMs,
  fitLatencyModel,
  type LatencyFit,
} from '../engine/retrieval/cost.js'
import {RetrievalEngine, defaultRetrievalConfig} from '../engine/retrieval/engine.js'
import {RETRIEVAL_SPACE} from '../engine/retrieval/space.js'
import {BENCH_K, benchDataset} from '../eval/bench-engine.js'
import {LATENCY_WARMUP_QUERIES, type PreparedEvaluation} from '../eval/harness.js'
import type {Config} from '../space/index.js'
import {quantile} from '../stats/summary.js'
import {Rng} from '../util/rng.js'
import {Encoding} from '../search/encoding.js'

export interface LatencyModelOptions {
  /** Corpus sizes in turns. */
  readonly sizes: readonly number[]
  /** Random configurations besides the defaults. */
  readonly configs: number
  /** Timed passes; each query's time is its minimum over them. */
  readonly repeats: number
  readonly seed: number
  /** A real dataset to check the committed model on (not part of the fit). */
  readonly data?: PreparedEvaluation
}

/** One (corpus, configuration, query) point of the fit. */
interface LatencyPoint {
  readonly turns: number
  readonly config: number
  readonly work: number
  /** Minimum wall time over the repeats, ms. */
  readonly ms: number
}

export interface LatencyModelReport {
  readonly points: LatencyPoint[]
  /** The fit on these measurements (null if work never varied). */
  readonly fit: LatencyFit | null
  /** The same fit on each corpus size alone: where the one line bends. */
  readonly bySize: Array<{readonly turns: number; readonly fit: LatencyFit | null}>
  readonly committed: {readonly nsPerWorkUnit: number; readonly fixedOverheadMs: number}
  /** Fitted over committed constants (1 = this machine matches the committed model). */
  readonly ratio: {readonly nsPerWorkUnit: number | null; readonly fixedOverheadMs: number | null}
  /** Median and 90th percentile of |committed estimate - measured| / measured over the points. */
  readonly committedRelativeError: {readonly median: number; readonly p90: number}
  /** The committed model on a real dataset, when one was given. */
  readonly dataset?: DatasetCheck
  /** 1-minute load average before and after, and the cores: a loaded machine inflates timings. */
  readonly load: {readonly before: number; readonly after: number; readonly cores: number}
}

/** The defaults and `count` uniform draws from the retrieval space (seeded). */
function latencyModelConfigs(count: number, seed: number): Config[] {
  const encoding = new Encoding(RETRIEVAL_SPACE)
  const rng = new Rng(seed).fork('latency-model/configs')
  const configs = [defaultRetrievalConfig()]
  for (let i = 0; i < count; i++) configs.push(encoding.decode(encoding.sampleUniform(rng)))
  return configs
}

/** A query and the engine of its conversation. */
interface TimedQuery {
  readonly engine: RetrievalEngine
  readonly text: string
}

/**
 * Per-query minimum wall time over `repeats` passes, and work, for every configuration, after
 * LATENCY_WARMUP_QUERIES untimed queries (V8 optimises the hot paths first).
 */
function measureQueries(queries: readonly TimedQuery[], configs: readonly Config[], repeats: number): LatencyPoint[] {
  const passes = Math.ceil(LATENCY_WARMUP_QUERIES / Math.max(1, queries.length * configs.length))
  for (let w = 0; w < passes; w++) for (const c of configs) for (const q of queries) q.engine.search(q.text, c, BENCH_K)
  const best = configs.map(() => new Float64Array(queries.length).fill(Infinity))
  const work = configs.map(() => new Float64Array(queries.length))
  // Passes outermost, so a burst of load hits one repeat of many queries, not every repeat of one.
  for (let r = 0; r < repeats; r++) {
    configs.forEach((c, ci) => {
      queries.forEach((q, qi) => {
        const t0 = performance.now()
        q.engine.search(q.text, c, BENCH_K)
        const ms = performance.now() - t0
        if (ms < best[ci][qi]) best[ci][qi] = ms
        work[ci][qi] = q.engine.lastWork
      })
    })
  }
  return configs.flatMap((_, ci) =>
    queries.map((q, qi) => ({turns: q.engine.turnCount, config: ci, work: work[ci][qi], ms: best[ci][qi]})),
  )
}

/** The points of one seeded synthetic corpus of about `turns` turns. */
function measureCorpus(turns: number, configs: readonly Config[], repeats: number, seed: number): LatencyPoint[] {
  const dataset = benchDataset(turns, seed)
  const engine = new RetrievalEngine(dataset.conversations[0])
  const queries = dataset.questions.map((q) => ({engine, text: q.text}))
  return measureQueries(queries, configs, repeats)
}

/** The least-squares line through measured points. */
function fitPoints(points: readonly LatencyPoint[]): LatencyFit | null {
  return fitLatencyModel(
    points.map((p) => p.work),
    points.map((p) => p.ms),
  )
}

/** How well given constants predict measured points: median and 90th percentile relative error. */
function relativeError(
  points: readonly LatencyPoint[],
  predict: (work: number) => number,
): {median: number; p90: number} {
  const errors = points.map((p) => Math.abs(predict(p.work) - p.ms) / p.ms)
  return {median: quantile(errors, 0.5), p90: quantile(errors, 0.9)}
}

/** The committed model checked on a real dataset's scored queries (not used in the fit). */
interface DatasetCheck {
  readonly source: string
  readonly points: number
  readonly committedRelativeError: {readonly median: number; readonly p90: number}
  /** The same least-squares fit on the dataset's points alone. */
  readonly fit: LatencyFit | null
  /** P99 over the points: measured, and the committed estimate. */
  readonly measuredP99Ms: number
  readonly estimatedP99Ms: number
}

function checkOnDataset(prepared: PreparedEvaluation, configs: readonly Config[], repeats: number): DatasetCheck {
  const queries = prepared.selection.queries.map((q) => ({
    engine: prepared.engines.get(q.conversation) as RetrievalEngine,
    text: q.text,
  }))
  const points = measureQueries(queries, configs, repeats)
  const p99 = (ms: (p: LatencyPoint) => number) => quantile(points.map(ms), 0.99)
  return {
    source: prepared.dataset.source,
    points: points.length,
    committedRelativeError: relativeError(points, estimatedLatencyMs),
    fit: fitPoints(points),
    measuredP99Ms: p99((p) => p.ms),
    estimatedP99Ms: p99((p) => estimatedLatencyMs(p.work)),
  }
}

/** Measures every corpus size, fits the line and compares it with the committed constants. */
export function measureLatencyModel(
  options: LatencyModelOptions,
  progress?: (stage: string) => void,
): LatencyModelReport {
  const before = loadavg()[0]
  const configs = latencyModelConfigs(options.configs, options.seed)
  const points: LatencyPoint[] = []
  const bySize: LatencyModelReport['bySize'] = []
  for (const turns of options.sizes) {
    progress?.(`${turns} turns`)
    const corpus = measureCorpus(turns, configs, options.repeats, options.seed)
    points.push(...corpus)
    bySize.push({turns: corpus[0]?.turns ?? turns, fit: fitPoints(corpus)})
  }
  const fit = fitPoints(points)
  if (options.data !== undefined) progress?.(options.data.dataset.source)
  const dataset = options.data && checkOnDataset(options.data, configs, options.repeats)
  const ratio = (fitted: number | undefined, committed: number): number | null =>
    fitted === undefined || committed === 0 ? null : fitted / committed
  return {
    points,
    fit,
    bySize,
    committed: {nsPerWorkUnit: NS_PER_WORK_UNIT, fixedOverheadMs: FIXED_QUERY_OVERHEAD_MS},
    ratio: {
      nsPerWorkUnit: ratio(fit?.nsPerWorkUnit, NS_PER_WORK_UNIT),
      fixedOverheadMs: ratio(fit?.fixedOverheadMs, FIXED_QUERY_OVERHEAD_MS),
    },
    committedRelativeError: relativeError(points, estimatedLatencyMs),
    dataset,
    load: {before, after: loadavg()[0], cores: availableParallelism()},
  }
}
