import {availableParallelism, loadavg} from 'node:os'
import {performance} from 'node:perf_hooks'
import {parseLocomo} from '../data/conversations/locomo.js'
import type {MemoryDataset} from '../data/conversations/types.js'
import {generateMemoryDataset, MIN_SESSIONS} from '../data/memory-synth/generate.js'
import {RetrievalEngine, defaultRetrievalConfig} from '../engine/retrieval/engine.js'
import type {Config} from '../space/types.js'
import {quantile} from '../stats/summary.js'
import {LATENCY_WARMUP_QUERIES} from './harness.js'
import {renderTable} from './table.js'

/** Targets of the issue: p99 query latency at 10,000 turns and classifier time per query. */
const ENGINE_P99_TARGET_MS = 5
const ENGINE_P99_TARGET_TURNS = 10_000
const CLASSIFIER_TARGET_US = 20

/** Synthetic benchmark corpora: sessions of this many turns, with Zipf noise words in small talk. */
const BENCH_TURNS_PER_SESSION = 20
const BENCH_NOISE_WORDS = 6
/** Results are top-k lists of this size (the LoCoMo convention's largest cut-off). */
export const BENCH_K = 20

export interface EngineBenchRow {
  readonly turns: number
  readonly queries: number
  readonly build_ms: number
  readonly p50_ms: number
  readonly p95_ms: number
  readonly p99_ms: number
  /**
   * p99 of process CPU time per query: excludes time the process waited while other processes
   * held the cores (a loaded machine inflates wall-clock tails), but includes the CPU time of the
   * process's other threads (concurrent GC, JIT compilation), so it can exceed wall time.
   */
  readonly cpu_p99_ms: number
  readonly bm25_p50_ms: number
  readonly classifier_us: number
  readonly nodes: number
  readonly edges: number
}

/** The seeded synthetic benchmark dataset: one conversation of about `turns` turns with its questions. */
export function benchDataset(turns: number, seed: number): MemoryDataset {
  const sessions = Math.max(MIN_SESSIONS, Math.round(turns / BENCH_TURNS_PER_SESSION))
  const samples = generateMemoryDataset({
    seed,
    conversations: 1,
    sessions,
    turnsPerSession: BENCH_TURNS_PER_SESSION,
    noiseWords: BENCH_NOISE_WORDS,
  })
  return parseLocomo(`synthetic-${turns}`, '', samples)
}

/**
 * Builds a synthetic conversation of about `turns` turns and times, warm and in-process, every
 * generated question run `repeats` times through the engine (default configuration, top 20),
 * plain BM25, and the query classifier.
 */
function benchEngineAt(turns: number, options: {seed: number; repeats: number; config?: Config}): EngineBenchRow {
  const dataset = benchDataset(turns, options.seed)
  const conversation = dataset.conversations[0]
  const t0 = performance.now()
  const engine = new RetrievalEngine(conversation)
  const buildMs = performance.now() - t0
  const config = options.config ?? defaultRetrievalConfig()
  const queries = dataset.questions.map((q) => q.text)
  // Warm-up as in measureLatency: enough untimed queries for V8 to optimise the hot paths.
  for (let w = 0; w < Math.ceil(LATENCY_WARMUP_QUERIES / Math.max(1, queries.length)); w++)
    for (const q of queries) engine.search(q, config, BENCH_K)
  const times: number[] = []
  const cpu: number[] = []
  const bm25: number[] = []
  for (let r = 0; r < options.repeats; r++) {
    for (const q of queries) {
      const c = process.cpuUsage()
      const a = performance.now()
      engine.search(q, config, BENCH_K)
      const b = performance.now()
      const used = process.cpuUsage(c)
      engine.searchBm25(q, BENCH_K)
      times.push(b - a)
      cpu.push((used.user + used.system) / 1000)
      bm25.push(performance.now() - b)
    }
  }
  const classifierRounds = options.repeats * 10
  for (const q of queries) engine.classify(q)
  const c0 = performance.now()
  for (let r = 0; r < classifierRounds; r++) for (const q of queries) engine.classify(q)
  const classifierUs = ((performance.now() - c0) * 1000) / (classifierRounds * queries.length)
  return {
    turns: conversation.turns.length,
    queries: times.length,
    build_ms: buildMs,
    p50_ms: quantile(times, 0.5),
    p95_ms: quantile(times, 0.95),
    p99_ms: quantile(times, 0.99),
    cpu_p99_ms: quantile(cpu, 0.99),
    bm25_p50_ms: quantile(bm25, 0.5),
    classifier_us: classifierUs,
    nodes: engine.graph.nodeCount,
    edges: engine.graph.target.length,
  }
}

/** How far a corpus size may be from ENGINE_P99_TARGET_TURNS and still be the one judged against the target. */
const TARGET_SIZE_TOLERANCE = 0.1

/** `kt bench engine`: every corpus size benchmarked, the verdict against the targets, the report's lines. */
export async function runEngineBench(
  sizes: readonly number[],
  options: {seed: number; repeats: number; config?: Config},
  onSize: (turns: number) => Promise<void>,
): Promise<{json: {rows: EngineBenchRow[]; verdict: Record<string, number | null>}; lines: string[]}> {
  const rows: EngineBenchRow[] = []
  for (const n of sizes) {
    await onSize(n)
    rows.push(benchEngineAt(n, options))
  }
  const atTarget = rows.find(
    (r) => Math.abs(r.turns - ENGINE_P99_TARGET_TURNS) / ENGINE_P99_TARGET_TURNS < TARGET_SIZE_TOLERANCE,
  )
  const classifierWorst = Math.max(...rows.map((r) => r.classifier_us))
  const verdict = {
    p99_target_ms: ENGINE_P99_TARGET_MS,
    p99_at_10000_ms: atTarget?.p99_ms ?? null,
    p99_ratio_to_target: atTarget ? atTarget.p99_ms / ENGINE_P99_TARGET_MS : null,
    cpu_p99_at_10000_ms: atTarget?.cpu_p99_ms ?? null,
    classifier_target_us: CLASSIFIER_TARGET_US,
    classifier_worst_us: classifierWorst,
    classifier_ratio_to_target: classifierWorst / CLASSIFIER_TARGET_US,
  }
  const f = (x: number, d = 3): string => x.toFixed(d)
  const header = ['turns', 'nodes', 'edges', 'build ms', 'queries', 'p50 ms', 'p95 ms', 'p99 ms', 'cpu p99 ms']
  const table = rows.map((r) => [
    ...[r.turns, r.nodes, r.edges].map(String),
    f(r.build_ms, 0),
    String(r.queries),
    ...[r.p50_ms, r.p95_ms, r.p99_ms, r.cpu_p99_ms, r.bm25_p50_ms].map((x) => f(x)),
    f(r.classifier_us, 2),
  ])
  const lines = [renderTable([...header, 'bm25 p50 ms', 'classifier us'], table)]
  if (atTarget)
    lines.push(
      `p99 at ${atTarget.turns} turns: ${f(atTarget.p99_ms)} ms wall = ${f(verdict.p99_ratio_to_target!, 2)} x the ${ENGINE_P99_TARGET_MS} ms target (${atTarget.p99_ms <= ENGINE_P99_TARGET_MS ? 'met' : 'MISSED'}); ${f(atTarget.cpu_p99_ms)} ms CPU time`,
      `machine load average (1 min): ${loadavg()[0].toFixed(2)} on ${availableParallelism()} cores; wall-clock tails grow with load, CPU time much less`,
    )
  lines.push(
    `classifier: ${f(classifierWorst, 2)} us/query = ${f(verdict.classifier_ratio_to_target, 2)} x the ${CLASSIFIER_TARGET_US} us target (${classifierWorst <= CLASSIFIER_TARGET_US ? 'met' : 'MISSED'})`,
  )
  return {json: {rows, verdict}, lines}
}
