/**
 * `kt eval --engine FILE`: a retrieval service scored as `kt eval` scores kt's own engine: the
 * same questions (scored LoCoMo categories, evidence present), recall@k, hit@k, NDCG@10 and MRR
 * overall and per category, beside kt's plain BM25 and vector baselines on the same questions,
 * and the latency of the service's searches measured on kt's side (warm, repeated).
 */
import type {MemoryDataset} from '../data/conversations/types.js'
import {runService, type RetrievalServiceSpec, ServiceSession} from '../adapters/retrieval-service.js'
import {parseProfile, readProfileValue} from '../deploy/load.js'
import {defaultConfig, type Config, type ParamSpace} from '../space/index.js'
import {InputError, describeValue} from '../util/errors.js'
import {evaluateSystem, prepareEvaluation, queryTypes} from './harness.js'
import {DEFAULT_KS, NDCG_K, type MetricReport, type MetricValues} from '../data/conversations/metrics.js'
import {selectScoredQueries, type EvalQuery, type QuerySelection} from '../data/conversations/queries.js'
import {questionResults, systemResults, type QuestionResults} from './question-results.js'
import {KT_VERSION} from '../util/paths.js'
import {fmt, renderTable} from './table.js'

export interface ServiceEvalOutput {
  readonly data: string
  readonly engine: string
  readonly queries: number
  readonly skipped: QuerySelection['skipped']
  readonly ks: readonly number[]
  readonly config: Config
  /** The service's rankings scored (key `service` so the JSON reads like kt eval's `engine`). */
  readonly service: MetricReport
  /** kt's plain BM25 and vector-only rankings of the same questions, for scale. */
  readonly baselines: {readonly bm25: MetricReport; readonly vector: MetricReport}
  /** Per search, measured on kt's side: wall time of the message round trip (timing only). */
  readonly latency_ms: {
    readonly p50: number
    readonly p95: number
    readonly p99: number
    readonly timings: number
    readonly source: 'measured' | 'cost_model'
  }
  /** The engine's declared cost model, when it has one. */
  readonly cost_model_ms?: {readonly p50: number; readonly p95: number; readonly p99: number}
  /** Wall time to reset and ingest every conversation (timing only). */
  readonly ingest_ms: number
  readonly warnings: Record<string, number>
  readonly turns: number
  readonly conversations: number
}

/**
 * A configuration of an engine's parameters from a file: a kt profile of the engine's space
 * (`kt_profile`), or a JSON object of parameter values (the others take their defaults).
 */
export function loadEngineProfile(file: string, space: ParamSpace): Config {
  const value = readProfileValue(file)
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InputError(file, `a JSON object of ${space.id} parameter values, or a kt profile`, describeValue(value))
  // THE profile loader (src/deploy/load.ts): a kt profile of this engine's space, or plain parameter values
  const loaded = parseProfile(value, file, {space, parametersOf: space})
  if (loaded.space.id !== space.id)
    throw new InputError(`${file}: space`, JSON.stringify(space.id), JSON.stringify(loaded.space.id))
  return {...defaultConfig(space), ...loaded.profile.config}
}

/** Scores a service on every scored question of a dataset (ingesting it first). */
export async function evaluateService(
  spec: RetrievalServiceSpec,
  dataset: MemoryDataset,
  config: Config,
  options: {ks?: readonly number[]; minTimings?: number} = {},
): Promise<{output: ServiceEvalOutput; rows: MetricValues[]; queries: EvalQuery[]; types: Map<string, string>}> {
  const ks = options.ks ?? DEFAULT_KS
  const selection = selectScoredQueries(dataset)
  const session = new ServiceSession(spec, dataset)
  try {
    const run = await runService(session, selection.queries, config, {ks, minTimings: options.minTimings})
    const prepared = prepareEvaluation(dataset)
    const baseline = (system: 'bm25' | 'vector'): MetricReport => evaluateSystem(prepared, system, config, {ks}).report
    const latency = spec.latency === 'cost_model' && run.latency.cost ? run.latency.cost : run.latency
    const output: ServiceEvalOutput = {
      data: dataset.source,
      engine: spec.name,
      queries: selection.queries.length,
      skipped: selection.skipped,
      ks,
      config,
      service: run.report,
      baselines: {bm25: baseline('bm25'), vector: baseline('vector')},
      latency_ms: {
        p50: run.latency.p50,
        p95: run.latency.p95,
        p99: run.latency.p99,
        timings: run.latency.timings,
        source: 'measured',
      },
      ...(spec.latency === 'cost_model' && run.latency.cost
        ? {cost_model_ms: {p50: latency.p50, p95: latency.p95, p99: latency.p99}}
        : {}),
      ingest_ms: session.lastIngestMs,
      warnings: dataset.warnings,
      turns: dataset.conversations.reduce((s, c) => s + c.turns.length, 0),
      conversations: dataset.conversations.length,
    }
    return {output, rows: run.rows, queries: run.queries, types: queryTypes(prepared)}
  } finally {
    await session.close()
  }
}

/** An evaluateService result. */
export type ServiceEvaluation = Awaited<ReturnType<typeof evaluateService>>

/**
 * Per-question results of evaluations on the same questions (the `questions` of kt eval --engine
 * --json, a run's questions.json), by system name (a profile, "defaults"), for kt compare.
 */
export function evaluationQuestions(
  systems: Readonly<Record<string, ServiceEvaluation>>,
  files: {engine: string; data: string},
  primary: string,
): QuestionResults {
  const first = systems[primary]
  const metrics = Object.keys(first.rows[0] ?? {})
  const stored = Object.fromEntries(
    Object.entries(systems).map(([name, {output: o, rows}]) => {
      const latency = o.cost_model_ms ?? o.latency_ms
      const kind = o.cost_model_ms ? 'cost_model' : 'measured'
      return [
        name,
        systemResults(rows, metrics, o.config, {p50: latency.p50, p95: latency.p95, p99: latency.p99, kind}),
      ]
    }),
  )
  return questionResults({
    ktVersion: KT_VERSION,
    engine: {name: first.output.engine, file: files.engine},
    data: files.data,
    queries: first.queries.map((q) => ({id: q.id, category: q.category, type: first.types.get(q.id)})),
    metrics,
    primary,
    systems: stored,
  })
}

/** The human-readable report of `kt eval --engine`, laid out as kt eval's. */
export function renderServiceEval(o: ServiceEvalOutput): string {
  const lines: string[] = []
  lines.push(
    `${o.data}: ${o.conversations} conversations, ${o.turns} turns, ${o.queries} scored queries (skipped: ${o.skipped.adversarial} adversarial, ${o.skipped.no_evidence} without evidence); engine ${o.engine}`,
  )
  const warnings = Object.entries(o.warnings)
  if (warnings.length > 0) lines.push(`loader: ${warnings.map(([k, v]) => `${v} ${k}`).join('; ')}`)
  lines.push('')
  const metricKeys = [...o.ks.map((k) => `recall@${k}`), ...o.ks.map((k) => `hit@${k}`), `ndcg@${NDCG_K}`, 'mrr']
  const systems: Array<[string, MetricReport]> = [
    [o.engine, o.service],
    ['bm25 (kt)', o.baselines.bm25],
    ['vector (kt)', o.baselines.vector],
  ]
  const groups = ['overall', ...Object.keys(o.service.by_category)]
  const rows: string[][] = []
  for (const g of groups) {
    systems.forEach(([name, report], i) => {
      const m = g === 'overall' ? report.overall : report.by_category[g]
      if (m) rows.push([i === 0 ? g : '', name, String(m.n), ...metricKeys.map((k) => fmt(m[k]))])
    })
  }
  lines.push(renderTable(['category', 'system', 'n', ...metricKeys], rows))
  lines.push('')
  const l = o.latency_ms
  lines.push(
    `latency per search (${o.engine}, measured on kt's side: message round trip, warm, ${l.timings} timed searches): p50 ${l.p50.toFixed(3)} ms, p95 ${l.p95.toFixed(3)} ms, p99 ${l.p99.toFixed(3)} ms; reset + ingest ${o.ingest_ms.toFixed(0)} ms`,
  )
  if (o.cost_model_ms)
    lines.push(
      `the engine's declared cost model: p50 ${o.cost_model_ms.p50.toFixed(3)} ms, p99 ${o.cost_model_ms.p99.toFixed(3)} ms`,
    )
  return lines.join('\n')
}
