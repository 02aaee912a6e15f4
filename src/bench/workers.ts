/**
 * `kt bench workers`: throughput of `kt worker` processes sharing one BOHB study on PostgreSQL,
 * against the ideal (every process always evaluating) and beside Optuna's figures measured on this
 * kind of machine; and the coordination cost per trial with a trial that does nothing.
 *
 * Each configuration is a fresh study; its worker processes (the built CLI, as users run it) are
 * started together at a set time after they have connected and warmed up, and the throughput is
 * the trials finished over the time from that start to the last finish (the store's timestamps).
 */
import {spawn} from 'node:child_process'
import {existsSync, mkdtempSync, readdirSync, readFileSync, rmSync} from 'node:fs'
import {loadavg, tmpdir} from 'node:os'
import {join} from 'node:path'
import {freePort, startServer, type PgServer} from '../db/server.js'
import {runSearch} from '../study/search.js'
import {openStorage, redactStorage} from '../study/storage.js'
import {packageRoot} from '../util/paths.js'
import type {WorkerTiming} from '../study/optimize-options.js'
import {WORKERS_WORKLOAD} from './workers-workload.js'

/** Targets of issue 11: at least this share of the ideal throughput with BOHB, and at most this coordination cost per trial. */
const THROUGHPUT_TARGET = 0.9
const COORDINATION_TARGET_MS = 3

/**
 * Optuna 3.1 with a PostgreSQL study, measured on this kind of machine (2 cores; issue 11): trials
 * per second on a 50 ms sleeping trial by worker processes (TPE with 4 workers: 13), and on a
 * no-op trial.
 */
const OPTUNA_ANCHOR = {
  sleep50: {1: 11, 2: undefined, 4: 35, 8: 35} as Record<number, number | undefined>,
  tpe4: 13,
  noopLow: 25,
  noopHigh: 35,
}

/** Time the worker processes get to start, connect and build their objective before the common start (ms). */
const WARMUP_MS_BASE = 2500
/** ... plus this much per process: starting eight Node processes on a busy 2-core machine takes seconds. */
const WARMUP_MS_PER_PROCESS = 600

interface WorkersRow {
  readonly processes: number
  readonly trials: number
  readonly seconds: number
  readonly trials_per_s: number
  readonly ideal_per_s: number
  readonly share_of_ideal: number
  readonly optuna_per_s: number | null
  readonly takeovers: number
  /** Where the time went, per trial (see Mechanism). */
  readonly mechanism: Mechanism | null
}

/**
 * Where the worker processes' time went in one configuration, from each process's own account
 * (src/study/optimize.ts WorkerTiming) and the server's CPU (/proc): per trial finished, and as
 * shares of the processes' wall time.
 */
interface Mechanism {
  /** Worker process CPU per trial (all processes, all threads), ms. */
  readonly worker_cpu_ms_per_trial: number
  /** Wall time the optimiser copies spent replaying, telling and asking (all processes), ms: about their CPU when the machine is idle. */
  readonly optimizer_ms_per_trial: number
  /** PostgreSQL server CPU per trial (all backends, from the common start to the workers' exit), ms; null when the server was not started here. */
  readonly server_cpu_ms_per_trial: number | null
  /** Statements sent per trial (all processes). */
  readonly round_trips_per_trial: number
  /**
   * Mean time of one locked section until its trial's evaluation could begin (queueing, catch-up,
   * lock wait, replay, ask; the commit's fsync overlaps the evaluation), and of the study lock's
   * wait (the first round trip) and hold (from its grant to the end of the commit, on the server's
   * clock: the commit is asynchronous, its durability barrier's WAL flush comes after), ms; and
   * the time from sending the COMMIT to the barrier's acknowledgement (overlaps the evaluation).
   */
  readonly section_ms: number
  readonly lock_wait_ms: number
  readonly lock_held_ms: number
  readonly durable_ms: number
  /** Shares of the processes' wall time: evaluating, in sections, waiting for work. */
  readonly evaluating_share: number
  readonly section_share: number
  readonly waiting_share: number
  /** The window: how late the last process began after the common start, and how long the processes sat idle at the end on average (the study's last trials), ms. */
  readonly latest_start_ms: number
  readonly idle_at_end_ms: number
}

/** The server's CPU is read this long before the common start (ms): the workers are idle then, and the reading does not compete with their start. */
const SERVER_CPU_LEAD_MS = 20

/** Linux clock ticks per second of /proc/PID/stat times (sysconf(_SC_CLK_TCK), 100 on Linux). */
const CLOCK_TICKS_PER_S = 100

/** CPU time (ms) a PostgreSQL server has used: the postmaster, its reaped children and its live ones (/proc). */
function serverCpuMs(dataDir: string): number | null {
  try {
    const pidFile = join(dataDir, 'postmaster.pid')
    if (!existsSync(pidFile) || !existsSync('/proc/self/stat')) return null
    const master = Number(readFileSync(pidFile, 'utf8').split('\n')[0])
    const fields = (pid: string): string[] | undefined => {
      try {
        const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
        // fields after the command name (which may hold spaces), numbered from field 3
        return text.slice(text.lastIndexOf(')') + 2).split(' ')
      } catch {
        return undefined
      }
    }
    const own = fields(String(master))
    if (!own) return null
    // utime, stime, cutime, cstime are fields 14-17 (index 11-14 from field 3)
    let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14])
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue
      const f = fields(pid)
      if (f && Number(f[1]) === master) ticks += Number(f[11]) + Number(f[12])
    }
    return (ticks * 1000) / CLOCK_TICKS_PER_S
  } catch {
    return null
  }
}

export interface WorkersBench {
  readonly storage: string
  readonly server: string
  readonly trial_ms: number
  readonly optimizer: 'bohb'
  readonly rows: WorkersRow[]
  readonly noop: {readonly trials: number; readonly ms_per_trial: number; readonly in_process_ms_per_trial: number}
  readonly targets: {readonly share_of_ideal: number; readonly coordination_ms: number}
  readonly met: {readonly throughput: boolean; readonly coordination: boolean}
  readonly load_average: number
}

/** Worker processes of the run, stopped with it on a signal. */
const children = new Set<import('node:child_process').ChildProcess>()

function runWorkers(url: string, study: string, processes: number, startAt: number, statsDir: string): Promise<void> {
  const runs = Array.from(
    {length: processes},
    (_, i) =>
      new Promise<void>((resolve, reject) => {
        const env: NodeJS.ProcessEnv = {
          ...process.env,
          KT_NO_PROGRESS: '1',
          KT_BENCH_START_AT: String(startAt),
          KT_BENCH_STATS_FILE: join(statsDir, `${study}-${i}.json`),
        }
        delete env.NODE_ENV
        const child = spawn(
          process.execPath,
          [join(packageRoot, 'bin', 'kt.js'), 'worker', '--storage', url, '--study', study],
          {cwd: packageRoot, env, stdio: ['ignore', 'ignore', 'pipe']},
        )
        children.add(child)
        let err = ''
        child.stderr.on('data', (d) => (err += d))
        child.on('exit', () => children.delete(child))
        child.on('exit', (code) =>
          code === 0 ? resolve() : reject(new Error(`kt worker exited with ${code}: ${err.trim().split('\n')[0]}`)),
        )
      }),
  )
  return Promise.all(runs).then(() => undefined)
}

async function measure(
  url: string,
  study: string,
  processes: number,
  trials: number,
  delayMs: number,
  statsDir: string,
  dataDir: string | undefined,
): Promise<{seconds: number; takeovers: number; mechanism: Mechanism | null}> {
  await runSearch({
    storage: url,
    study,
    objective: {name: 'counting_ones', delayMs},
    optimizer: 'bohb',
    seed: WORKERS_WORKLOAD.seed,
    maxTrials: trials,
    createOnly: true,
  })
  const startAt = Date.now() + WARMUP_MS_BASE + WARMUP_MS_PER_PROCESS * processes
  // the server's CPU from just before the common start (the processes' connections and warm-up
  // are not trials' work) to the workers' exit
  let server0: number | null = null
  const atStart = setTimeout(
    () => (server0 = dataDir ? serverCpuMs(dataDir) : null),
    Math.max(0, startAt - SERVER_CPU_LEAD_MS - Date.now()),
  )
  await runWorkers(url, study, processes, startAt, statsDir).finally(() => clearTimeout(atStart))
  const server1 = dataDir ? serverCpuMs(dataDir) : null
  const storage = await openStorage(url, {readonly: true})
  try {
    const rows = await storage.trials(study)
    const last = Math.max(...rows.map((r) => Date.parse(r.finishedAt ?? '')))
    if (rows.length !== trials || rows.some((r) => r.status !== 'ok'))
      throw new Error(
        `bench study ${study}: expected ${trials} finished trials, got ${rows.filter((r) => r.status === 'ok').length}`,
      )
    const timings: WorkerTiming[] = []
    for (let i = 0; i < processes; i++) {
      const file = join(statsDir, `${study}-${i}.json`)
      if (existsSync(file)) timings.push(JSON.parse(readFileSync(file, 'utf8')) as WorkerTiming)
    }
    const serverMs = server0 !== null && server1 !== null ? server1 - server0 : null
    return {
      seconds: (last - startAt) / 1000,
      takeovers: rows.filter((r) => (r.attempts ?? 1) > 1).length,
      mechanism: timings.length === processes ? mechanismOf(timings, trials, serverMs, last) : null,
    }
  } finally {
    await storage.close()
  }
}

function mechanismOf(
  timings: readonly WorkerTiming[],
  trials: number,
  serverMs: number | null,
  lastFinish: number,
): Mechanism {
  const sum = (f: (t: WorkerTiming) => number): number => timings.reduce((s, t) => s + f(t), 0)
  const wall = sum((t) => t.wallMs)
  const sections = Math.max(
    1,
    sum((t) => t.sections),
  )
  return {
    worker_cpu_ms_per_trial: sum((t) => t.cpuMs) / trials,
    optimizer_ms_per_trial: sum((t) => t.optimizerMs) / trials,
    server_cpu_ms_per_trial: serverMs === null ? null : serverMs / trials,
    round_trips_per_trial: sum((t) => t.coordination?.roundTrips ?? 0) / trials,
    section_ms: sum((t) => t.sectionMs) / sections,
    lock_wait_ms: sum((t) => t.coordination?.lockWaitMs ?? 0) / sections,
    lock_held_ms: sum((t) => t.coordination?.lockHeldMs ?? 0) / sections,
    durable_ms: sum((t) => t.coordination?.durableMs ?? 0) / sections,
    evaluating_share: sum((t) => t.evaluateMs) / wall,
    section_share: sum((t) => t.sectionMs) / wall,
    waiting_share: sum((t) => t.waitMs) / wall,
    latest_start_ms: Math.max(...timings.map((t) => t.lateMs ?? 0)),
    idle_at_end_ms: sum((t) => Math.max(0, lastFinish - (t.lastEvaluatedAt ?? lastFinish))) / timings.length,
  }
}

export async function benchWorkers(options: {
  storage?: string
  counts: readonly number[]
  trialMs: number
  trialsPerProcess: number
  noopTrials: number
  log: (line: string) => void
}): Promise<WorkersBench> {
  let server: PgServer | undefined
  let base: string | undefined
  let url = options.storage
  let serverName = 'given'
  let statsDir = ''
  // Ctrl-C or a timeout's SIGTERM must not leave the run's server behind (finally does not run on a signal)
  let signalled = false
  const onSignal = (signal: NodeJS.Signals): void => {
    signalled = true
    for (const child of children) child.kill('SIGKILL')
    const stopping = server ? server.stop('immediate').catch(() => undefined) : Promise.resolve()
    void stopping.then(() => {
      if (base) rmSync(base, {recursive: true, force: true})
      process.kill(process.pid, signal)
    })
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  try {
    if (!url) {
      base = mkdtempSync(join(tmpdir(), 'kt-bench-pg-'))
      // a durable server (fsync on), as `kt db start` runs it
      server = await startServer({dir: join(base, 'data'), port: await freePort()})
      await server.createDatabase('kt')
      url = server.url('kt')
      serverName = `${server.bin.source.split(' ')[0]}, started for this run, fsync on`
    }
    const tag = Date.now().toString(36)
    statsDir = mkdtempSync(join(tmpdir(), 'kt-bench-stats-'))
    const rows: WorkersRow[] = []
    for (const [round, n] of options.counts.entries()) {
      const trials = options.trialsPerProcess * n
      options.log(`  ${n} worker process${n > 1 ? 'es' : ''}: ${trials} trials of ${options.trialMs} ms ...`)
      // one study per row: a count given twice (--processes 8,8, to measure it again) must not find the first row's study finished
      const r = await measure(
        url,
        `bench-workers-${tag}-r${round}-p${n}`,
        n,
        trials,
        options.trialMs,
        statsDir,
        server?.dir,
      )
      const perS = trials / r.seconds
      const ideal = (1000 / options.trialMs) * n
      rows.push({
        processes: n,
        trials,
        seconds: r.seconds,
        trials_per_s: perS,
        ideal_per_s: ideal,
        share_of_ideal: perS / ideal,
        optuna_per_s: OPTUNA_ANCHOR.sleep50[n] ?? null,
        takeovers: r.takeovers,
        mechanism: r.mechanism,
      })
    }
    options.log(`  no-op trial, 1 worker process: ${options.noopTrials} trials ...`)
    const noop = await measure(url, `bench-workers-${tag}-noop`, 1, options.noopTrials, 0, statsDir, server?.dir)
    // the same study in this process on an in-memory SQLite store: the optimiser's and the runner's own share
    const t0 = performance.now()
    await runSearch({
      storage: ':memory:',
      study: 'noop',
      objective: {name: 'counting_ones'},
      optimizer: 'bohb',
      seed: WORKERS_WORKLOAD.seed,
      maxTrials: options.noopTrials,
    })
    const inProcess = (performance.now() - t0) / options.noopTrials
    const noopMs = (noop.seconds * 1000) / options.noopTrials
    return {
      storage: redactStorage(url),
      server: serverName,
      trial_ms: options.trialMs,
      optimizer: 'bohb',
      rows,
      noop: {trials: options.noopTrials, ms_per_trial: noopMs, in_process_ms_per_trial: inProcess},
      targets: {share_of_ideal: THROUGHPUT_TARGET, coordination_ms: COORDINATION_TARGET_MS},
      met: {
        throughput: rows.every((r) => r.share_of_ideal >= THROUGHPUT_TARGET),
        coordination: noopMs <= COORDINATION_TARGET_MS,
      },
      load_average: loadavg()[0],
    }
  } finally {
    // after a signal the run ends from onSignal (exit 130 / 143), not with the failure the killed workers caused
    if (signalled) await new Promise(() => undefined)
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    await server?.stop('fast').catch(() => server?.stop('immediate'))
    if (base) rmSync(base, {recursive: true, force: true})
    if (statsDir) rmSync(statsDir, {recursive: true, force: true})
  }
}

export function formatWorkersBench(r: WorkersBench): string[] {
  const pct = (x: number): string => `${(100 * x).toFixed(1)}%`
  const lines = [
    `kt workers on PostgreSQL (${r.storage}; ${r.server}), BOHB on counting_ones, trials sleeping ${r.trial_ms} ms; 1-minute load average ${r.load_average.toFixed(1)} on this machine`,
    '  processes  trials  seconds  trials/s  ideal  share of ideal (target >= 90%)  Optuna 3.1 + PostgreSQL (anchor)',
  ]
  for (const row of r.rows)
    lines.push(
      `  ${String(row.processes).padEnd(9)}  ${String(row.trials).padEnd(6)}  ${row.seconds.toFixed(2).padEnd(7)}  ${row.trials_per_s.toFixed(1).padEnd(8)}  ${String(row.ideal_per_s).padEnd(5)}  ${`${pct(row.share_of_ideal)} ${row.share_of_ideal >= THROUGHPUT_TARGET ? 'met' : 'missed'}`.padEnd(30)}  ${row.optuna_per_s === null ? '-' : `${row.optuna_per_s} trials/s`}`,
    )
  lines.push(
    "  where the time went, per trial (all processes): worker CPU / time in the optimiser copies / PostgreSQL CPU (ms); statements; mean section (until the trial's evaluation begins) / its lock wait (the first round trip) / lock held (from the grant to the end of the asynchronous commit, server clock) / COMMIT sent to durable (the barrier's acknowledgement, which overlaps the evaluation) (ms); wall time evaluating / in sections / waiting for work; the window (from the common start, every process warmed up, to the last finish): how late the last process began, and how long the processes sat idle at the end on average (the study's last trials, as in any run of a fixed number of trials)",
  )
  for (const row of r.rows) {
    const m = row.mechanism
    if (!m) continue
    lines.push(
      `  ${String(row.processes).padEnd(9)}  cpu ${m.worker_cpu_ms_per_trial.toFixed(2)} / ${m.optimizer_ms_per_trial.toFixed(2)} / ${m.server_cpu_ms_per_trial === null ? '-' : m.server_cpu_ms_per_trial.toFixed(2)} ms; ${m.round_trips_per_trial.toFixed(1)} statements; ` +
        `section ${m.section_ms.toFixed(2)} / ${m.lock_wait_ms.toFixed(2)} / ${m.lock_held_ms.toFixed(2)} / ${m.durable_ms.toFixed(2)} ms; evaluating ${pct(m.evaluating_share)}, sections ${pct(m.section_share)}, waiting ${pct(m.waiting_share)}; ` +
        `last process began ${m.latest_start_ms.toFixed(0)} ms after the start, idle at the end ${m.idle_at_end_ms.toFixed(0)} ms`,
    )
  }
  lines.push(
    `  (Optuna 3.1 anchor: 11 trials/s with 1 worker, 35 with 4 or 8, 13 with TPE and 4 workers; not re-measured in this run)`,
  )
  lines.push(
    `  coordination per trial, no-op trial, 1 worker process: ${r.noop.ms_per_trial.toFixed(2)} ms (target <= ${COORDINATION_TARGET_MS} ms: ${r.met.coordination ? 'met' : 'missed'}); ` +
      `${(1000 / r.noop.ms_per_trial).toFixed(0)} trials/s vs Optuna's ${OPTUNA_ANCHOR.noopLow}-${OPTUNA_ANCHOR.noopHigh}; the same study in one process on in-memory SQLite: ${r.noop.in_process_ms_per_trial.toFixed(2)} ms per trial`,
  )
  return lines
}
