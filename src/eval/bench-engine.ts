import {performance} from 'node:perf_hooks'
import {parseLocomo} from '../data/conversations/locomo.js'
import type {MemoryDataset} from '../data/conversations/types.js'
import {generateMemoryDataset, MIN_SESSIONS} from '../data/memory-synth/generate.js'
import {RetrievalEngine, defaultRetrievalConfig} from '../engine/retrieval/engine.js'
import type {Config} from '../space/types.js'
import {quantile} from '../stats/summary.js'
import {LATENCY_WARMUP_QUERIES} from './harness.js'

/** Targets of the issue: p99 query latency at 10,000 turns and classifier time per query. */
export const ENGINE_P99_TARGET_MS = 5
export const ENGINE_P99_TARGET_TURNS = 10_000
export const CLASSIFIER_TARGET_US = 20

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
export function benchEngineAt(
  turns: number,
  options: {seed: number; repeats: number; config?: Config},
): EngineBenchRow {
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
