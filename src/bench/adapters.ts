/**
 * `kt bench adapters`: what kt adds around an external engine's own run time, measured through
 * the whole `kt search --engine` path (engine file, study runner, SQLite store, optimiser, the
 * command adapter's process group, files and parsing), each figure printed against its target.
 *
 * Each line is one entry of ADAPTER_BENCHES: a function returning {name, value, unit, target,
 * met, detail}; a new adapter's figure (e.g. the retrieval service's per-query overhead) is one
 * more entry.
 */
import {spawn} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {loadavg, availableParallelism, tmpdir} from 'node:os'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'
import {quantile} from '../stats/summary.js'
import {runSearch} from '../study/search.js'
import {serviceOverhead} from './service-overhead.js'

/** Issue 9's targets. */
const TRIAL_OVERHEAD_TARGET_MS = 5
const WORKERS_SPEEDUP_TARGET = 7
/** The slow command of the throughput line: 200 ms of sleep, then the metrics. */
const SLOW_COMMAND_MS = 200
const SPEEDUP_WORKERS = 8

export interface BenchLine {
  readonly name: string
  readonly value: number
  readonly unit: string
  /** e.g. "<= 5 ms" */
  readonly target: string
  readonly met: boolean
  readonly detail: string
}

export interface AdapterBenchOptions {
  /** Trials of the no-op command timed (after warm-up). */
  readonly trials: number
  /** Trials of the 200 ms command with one worker (eight workers run eight times as many). */
  readonly slowTrials: number
  readonly seed: number
}

type AdapterBench = (options: AdapterBenchOptions, dir: string) => Promise<BenchLine>

/** A no-op engine command: prints a metrics line and exits (no interpreter to start). */
const NOOP_ARGV = ['/bin/echo', '{"score": 1}']

function engineFile(dir: string, name: string, argv: readonly string[]): string {
  const file = join(dir, `${name}.json`)
  writeFileSync(
    file,
    JSON.stringify({
      kt_engine: 1,
      name,
      parameters: [{name: 'x', type: 'float', low: 0, high: 1, default: 0.5, env: 'BENCH_X'}],
      evaluate: {kind: 'command', command: argv, timeout_s: 60},
      objectives: [{metric: 'score', direction: 'maximize'}],
    }),
  )
  return file
}

/** Wall time of one bare spawn of the command (pipes read, exit awaited): the command's own run time. */
function bareRun(argv: readonly string[], detached = false): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    const child = spawn(argv[0], argv.slice(1), {stdio: ['ignore', 'pipe', 'pipe'], detached})
    child.stdout.resume()
    child.stderr.resume()
    child.on('error', reject)
    child.on('close', () => resolve(performance.now() - t0))
  })
}

/** Per-trial cycle times of a one-worker study (time between consecutive finished trials). */
async function studyCycles(
  file: string,
  storage: string,
  study: string,
  trials: number,
  workers: number,
  seed: number,
): Promise<{cycles: number[]; evaluations: number[]; wallMs: number}> {
  const stamps: number[] = []
  const evaluations: number[] = []
  const t0 = performance.now()
  await runSearch({
    storage,
    study,
    objective: {name: 'engine', options: {file}},
    optimizer: 'random',
    seed,
    maxTrials: trials,
    workers,
    onTrial: (_, outcome) => {
      stamps.push(performance.now())
      evaluations.push(outcome.durationMs)
    },
  })
  const wallMs = performance.now() - t0
  const cycles = stamps.slice(1).map((t, i) => t - stamps[i])
  return {cycles, evaluations: evaluations.slice(1), wallMs}
}

/** Blocks of the measurements, interleaved, so that a change of the machine's load hits all of them alike. */
const OVERHEAD_BLOCKS = 4

const commandOverhead: AdapterBench = async (options, dir) => {
  const file = engineFile(dir, 'noop', NOOP_ARGV)
  // warm-up: module loading, SQLite, the JIT
  await studyCycles(file, join(dir, 'warm.sqlite'), 'warm', 5, 1, options.seed)
  for (let i = 0; i < 5; i++) await bareRun(NOOP_ARGV)
  const cycles: number[] = []
  const evaluations: number[] = []
  const bare: number[] = []
  const grouped: number[] = []
  const perBlock = Math.max(2, Math.ceil(options.trials / OVERHEAD_BLOCKS))
  for (let b = 0; b < OVERHEAD_BLOCKS; b++) {
    const block = await studyCycles(file, join(dir, `noop${b}.sqlite`), 'noop', perBlock + 1, 1, options.seed + b)
    cycles.push(...block.cycles)
    evaluations.push(...block.evaluations)
    for (let i = 0; i < perBlock; i++) {
      bare.push(await bareRun(NOOP_ARGV))
      grouped.push(await bareRun(NOOP_ARGV, true))
    }
  }
  const trial = quantile(cycles, 0.5)
  const own = quantile(bare, 0.5)
  const overhead = trial - own
  // a new session/process group makes Node fork instead of vfork: part of the overhead, and the
  // price of killing everything a trial leaves behind
  const groupCost = quantile(grouped, 0.5) - own
  return {
    name: 'command trial overhead (no-op command, whole kt search path)',
    value: overhead,
    unit: 'ms',
    target: `<= ${TRIAL_OVERHEAD_TARGET_MS} ms median`,
    met: overhead <= TRIAL_OVERHEAD_TARGET_MS,
    detail: `median trial cycle ${trial.toFixed(2)} ms minus the command's own median run ${own.toFixed(2)} ms (${NOOP_ARGV.join(' ')}, spawned bare); ${cycles.length} trials; of the overhead, starting the command in its own process group costs ${groupCost.toFixed(2)} ms (median detached spawn minus plain spawn), the adapter (environment, files, reading the metrics) ${(quantile(evaluations, 0.5) - quantile(grouped, 0.5)).toFixed(2)} ms (median evaluation ${quantile(evaluations, 0.5).toFixed(2)} ms minus median detached spawn), the study runner, store and optimiser ${(trial - quantile(evaluations, 0.5)).toFixed(2)} ms`,
  }
}

const workersSpeedup: AdapterBench = async (options, dir) => {
  const argv = ['/bin/sh', '-c', `sleep ${SLOW_COMMAND_MS / 1000}; echo '{"score": 1}'`]
  const file = engineFile(dir, 'slow', argv)
  const one = await studyCycles(file, join(dir, 'slow1.sqlite'), 'slow1', options.slowTrials, 1, options.seed)
  // as many rounds of 8 as the one-worker run has trials, so fixed start-up costs weigh alike
  const manyTrials = options.slowTrials * SPEEDUP_WORKERS
  const many = await studyCycles(file, join(dir, 'slow8.sqlite'), 'slow8', manyTrials, SPEEDUP_WORKERS, options.seed)
  const t1 = options.slowTrials / (one.wallMs / 1000)
  const t8 = manyTrials / (many.wallMs / 1000)
  const ratio = t8 / t1
  return {
    name: `${SLOW_COMMAND_MS} ms command, --workers ${SPEEDUP_WORKERS} vs 1 (throughput)`,
    value: ratio,
    unit: 'x',
    target: `>= ${WORKERS_SPEEDUP_TARGET}x`,
    met: ratio >= WORKERS_SPEEDUP_TARGET,
    detail: `${t8.toFixed(2)} trials/s (${manyTrials} trials in ${(many.wallMs / 1000).toFixed(2)} s) vs ${t1.toFixed(2)} trials/s (${options.slowTrials} in ${(one.wallMs / 1000).toFixed(2)} s)`,
  }
}

/** The lines of `kt bench adapters`, in order. */
/** The retrieval service's line: kt's CPU per query at 1,000 queries over keep-alive HTTP (src/bench/service-overhead.ts). */
const retrievalServiceOverhead: AdapterBench = () => serviceOverhead()

const ADAPTER_BENCHES: AdapterBench[] = [commandOverhead, workersSpeedup, retrievalServiceOverhead]

export async function runAdapterBenches(
  options: AdapterBenchOptions,
  progress?: (line: string) => void,
): Promise<{lines: BenchLine[]; load: {before: number; after: number; cores: number}}> {
  const before = loadavg()[0]
  const dir = mkdtempSync(join(tmpdir(), 'kt-bench-adapters-'))
  const lines: BenchLine[] = []
  try {
    for (const bench of ADAPTER_BENCHES) {
      const line = await bench(options, dir)
      progress?.(line.name)
      lines.push(line)
    }
  } finally {
    rmSync(dir, {recursive: true, force: true})
  }
  return {lines, load: {before, after: loadavg()[0], cores: availableParallelism()}}
}
