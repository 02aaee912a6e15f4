/**
 * The study loop, for any number of worker processes on one study (each with any number of
 * in-process slots). There is no master: every process keeps a replica of the optimiser and the
 * store's history is the single source of truth.
 *
 * - Every ask, claim and tell happens inside a locked section of the study (StudyStorage
 *   .withStudyLock: SQLite BEGIN IMMEDIATE, PostgreSQL SELECT ... FOR UPDATE), so the store holds
 *   one serial order of asks (trial ids) and tells (tell_seq, each with the number of asks before
 *   it). A section first brings the process's replica up to date by replaying what it has not
 *   seen in that order, then records this slot's finished trial, then takes the next piece of work:
 *   a trial whose worker is gone, or a new ask. The optimiser therefore proposes exactly what one
 *   optimiser told every result in that order would propose: BOHB's successive halving is
 *   synchronous across all workers (a rung waits for its last result; idle workers start the
 *   next bracket, as hpbandster does), and every KDE sees every finished result.
 * - Replay checks every replayed ask against the stored trial (same id, configuration and
 *   budget), so a changed optimiser or seed cannot silently mix histories. Each trial is stored
 *   with its asker's replay hint (Optimizer.askHint; BOHB: the Rng's state after the ask, with a
 *   check binding it to the ask, options, configuration and every result told before it, plus
 *   the winning candidate's index for older kt), so the other processes' copies replay it without
 *   drawing or scoring candidates and still end bit-identical (src/search/bohb.ts, "Replay
 *   hints"). A hint that fails its check, is of an unknown format or does not reproduce the stored
 *   configuration is ignored (the ask is re-scored); an older kt's hint (the index alone, or
 *   format 2, whose check did not cover the results) replays by drawing the candidates.
 * - A running trial is leased to its worker (owner host/pid/token) and carries a heartbeat. A
 *   trial is taken over (claimed and evaluated again, once, under its own id) when its owner
 *   released it (Ctrl-C), when the owner's heartbeat is older than the study's grace period, or at
 *   once when the owner is a dead process on this host. A result is recorded only while its
 *   trial is still leased to the worker that evaluated it, so no trial is finished twice; a
 *   committed result is never lost.
 * - With one worker and one slot the order is ask 0, tell 0, ask 1, ... exactly as before, so the
 *   same seed gives the same study.
 * - On PostgreSQL a section commits asynchronously (the study lock is released before the WAL
 *   flush) and a durability barrier sent with its COMMIT makes it durable (src/study/storage-postgres.ts,
 *   DURABILITY_BARRIER). A slot begins evaluating the trial a section handed out as soon as the
 *   COMMIT is sent; nothing is recorded, reported or handed on before the barrier is acknowledged
 *   (see the slot loop for a lost acknowledgement). Other workers may build on a section before
 *   it is durable: the WAL is one sequence, so a server crash loses a tail of the sections' order,
 *   never an earlier section without the later ones. The crash ends every connection: a worker's
 *   retried section rebuilds its replica from what survived (a reconnection noticed only by a
 *   heartbeat is caught by SessionCheck), records its finished trial again if that tell was lost
 *   (reported once, when the retry is durable), and keeps an evaluation begun early only for the
 *   same trial (see the slot loop).
 * - A worker with nothing to do (BOHB waiting for a rung, or the trial limit reached while other
 *   workers still run trials) waits for a notification (PostgreSQL LISTEN/NOTIFY; SQLite backoff)
 *   or for the next lease to expire. A lost database connection is retried with backoff, said
 *   once on the log.
 */
import {randomBytes} from 'node:crypto'
import {hostname} from 'node:os'
import {configKeys, type Config} from '../space/index.js'
import type {ObjectiveSpec} from './objectives.js'
import type {Objective, Optimizer, Trial, TrialResult} from '../search/types.js'
import {InputError, InterruptedError} from '../util/errors.js'
import {evaluateHere, type EvalJob, type Outcome} from './evaluate.js'
import {WorkerPool} from './pool.js'
import {
  StorageUnavailableError,
  type CoordinationStats,
  type Lease,
  type SessionCheck,
  type StudyStorage,
  type StudyTx,
} from './storage.js'
import type {TrialRow} from './model.js'
import {EventLoopTurns, Mutex, sleep} from './sync.js'

export interface RunLimits {
  /** Stop asking after this many trials (all trials, failed ones included). */
  readonly maxTrials?: number
  /** Stop asking once this much budget is consumed, in units of the maximum budget (continuation accounting). */
  readonly maxBudget?: number
}

export interface RunOptions extends RunLimits {
  readonly storage: StudyStorage
  readonly study: string
  readonly seed: number
  /** Builds a fresh optimiser (the process's replica; rebuilt from the store after a lost connection). */
  readonly createOptimizer: () => Optimizer
  /** The objective, built in this thread (used for its fidelity, and for evaluation when not on threads). */
  readonly objective: Objective
  /** How worker threads rebuild the objective (required when workers > 1 or threads is set). */
  readonly objectiveSpec?: ObjectiveSpec
  /** Values of parameters taken out of the search (--fix). */
  readonly fixed?: Config
  /** In-process concurrency: trials this process evaluates at once. */
  readonly workers?: number
  /** Evaluate on worker threads even with one slot (keeps heartbeats going during a CPU-bound trial). */
  readonly threads?: boolean
  /** Passed to every evaluation as ctx.artifactsDir (files a trial keeps beside the study). */
  readonly artifactsDir?: string
  readonly timeoutMs?: number
  /** A running trial whose heartbeat is older than this is taken over (ms). */
  readonly graceMs?: number
  /** Aborting stops asking and returns at once; this process's running trials are released for others. */
  readonly signal?: AbortSignal
  /** Called after each trial this process evaluated is stored. */
  /** Called as each trial is recorded; `progress` is the study's trials asked and budget used so far (all processes). */
  readonly onTrial?: (trial: Trial, outcome: Outcome, progress: StudyProgress) => void
  /** One-line notices (a lost database connection, its return). */
  readonly log?: (line: string) => void
  /** Start working at this time (ms since the epoch), once connected and warmed up: benchmarks start many processes together. */
  readonly startAt?: number
  readonly now?: () => string
  /** Filled as the run goes: where this process's time went (kt bench workers). */
  readonly timing?: WorkerTiming
}

/** Where one worker process's time went, summed over its slots (ms), from its start of work. */
export interface WorkerTiming {
  /** Wall time from the start of work to the end. */
  wallMs: number
  /** Process CPU (all threads) over that time. */
  cpuMs: number
  /**
   * Locked sections run, and the time slots spent in them (queueing, lock wait and work) until the
   * trial handed out could begin: on PostgreSQL the commit's fsync then overlaps the evaluation.
   */
  sections: number
  sectionMs: number
  /** Wall time in the optimiser copy (replay, tell, ask), in or out of sections; about its CPU on an idle machine. */
  optimizerMs: number
  /** Slots evaluating trials (checkpoint fetch included). */
  evaluateMs: number
  /** Slots waiting for a change (nothing to hand out). */
  waitMs: number
  /** Catch-ups made shortly before a trial's expected end (WARM-UP), outside any section. */
  warmUps?: number
  evaluated: number
  /** How late this process began work after options.startAt (warm-up not done in time), ms. */
  lateMs?: number
  /** When its last evaluation ended (ms since the epoch). */
  lastEvaluatedAt?: number
  /** The storage's counters (round trips, lock wait and hold), when it keeps them. */
  coordination?: CoordinationStats
}

export function newWorkerTiming(): WorkerTiming {
  return {wallMs: 0, cpuMs: 0, sections: 0, sectionMs: 0, optimizerMs: 0, evaluateMs: 0, waitMs: 0, evaluated: 0}
}

export interface RunSummary {
  readonly asked: number
  /** Trials finished in the store (before and during this run, by any worker). */
  readonly finished: number
  readonly ok: number
  readonly failed: number
  /** Finished trials taken from the store instead of evaluated when this process joined. */
  readonly replayed: number
  /** Trials of stopped workers (or interrupted runs) this process took over and evaluated again. */
  readonly rerun: number
  /** Trials evaluated by this process. */
  readonly evaluated: number
  /** Budget consumed, in units of the maximum budget (continuation accounting). */
  readonly budgetUsed: number
  readonly stoppedBy: 'done' | 'trials' | 'budget' | 'aborted'
}

/** Default grace period of a lease (ms): a worker silent for this long is taken for dead (Optuna's grace_period). */
export const DEFAULT_GRACE_MS = 60_000
/** Heartbeats per grace period: a live worker beats this many times before its lease could expire. */
const HEARTBEATS_PER_GRACE = 6
/** How long an idle worker waits at most before looking again, when no lease can expire sooner (ms). */
const IDLE_RECHECK_MS = 5_000
/**
 * A worker catches up outside the lock when at least this many other workers' results arrived
 * between its last two sections (and always when it joins). With replay hints a copy replays a
 * trial in about 0.05 ms of CPU (measured when hints held the pick alone; since they carry the
 * generator's state a replayed ask takes about 0.005 ms warm, and this threshold was not
 * re-measured), but work inside the lock costs more than its CPU on a busy
 * machine: a lock holder that is descheduled holds everyone up. Interleaved A/B of kt bench
 * workers at 8 processes (load 7-9, three rounds each): from 4 results, 60-70% of
 * ideal with the lock held 5.5-6.2 ms; from 16 (replay inside the lock), 46-58%, held 9-13 ms
 * (though 3.2 instead of 2.2 statements and 0.3-0.5 ms more worker CPU per trial); from 2, no
 * better than 4 at 4 and 8 processes (below 4 the extra statement costs more than it saves).
 */
const CATCH_UP_MIN_TELLS = 4
/**
 * WARM-UP. On a shared virtual machine a process that slept through a trial wakes with cold
 * caches, and so does the server backend it talks to: on this project's 2-core machine a loopback
 * `SELECT 1` took 0.2 ms back to back but 3.8-5.8 ms after the client slept 50 ms (about in
 * proportion to the idle time; a trivial Node echo server 3.4 ms, Python 0.8 ms), and 0.4-0.6 ms
 * when another query went 2-5 ms before it. So a worker catches its replica up (the read outside
 * the lock that the section would otherwise make, useful work) shortly before a trial is expected
 * to end, and the section that follows runs warm. Expected end: the shortest of this process's
 * last WARM_UP_HISTORY evaluations at the trial's budget (the earliest plausible end; one that
 * ends sooner only misses its warm-up). Lead: the warm-ups' own round trip (they run cold),
 * smoothed, plus WARM_UP_MARGIN_MS, so the read is back just before the trial ends.
 */
const WARM_UP_HISTORY = 8
/** Evaluations shorter than this are not warmed up: the extra round trip would cost more than the cold start it saves. */
export const WARM_UP_MIN_TRIAL_MS = 10
/** Evaluations at a budget seen before its trials are warmed up (one could be a cold start's outlier). */
const WARM_UP_MIN_SAMPLES = 2
/** Slack between the warm-up's expected return and the trial's expected end (ms). */
const WARM_UP_MARGIN_MS = 1
/** Lead before the first warm-up's round trip is known (ms): a cold round trip measured above. */
const WARM_UP_FIRST_LEAD_MS = 6
/** Weight of the newest warm-up round trip in the smoothed lead (exponential moving average). */
const WARM_UP_LEAD_WEIGHT = 0.25

/**
 * How long from now to wait before the warm-up read of an evaluation begun `sinceBeginMs` ago,
 * given this process's recent evaluation times at its budget (`past`, ms) and the warm-up's lead
 * (its own round trip, ms); undefined when it gets none (WARM-UP).
 */
export function warmUpDelay(
  past: readonly number[] | undefined,
  leadMs: number,
  sinceBeginMs: number,
): number | undefined {
  if (!past || past.length < WARM_UP_MIN_SAMPLES) return undefined
  const expected = Math.min(...past)
  if (expected < WARM_UP_MIN_TRIAL_MS) return undefined
  return Math.max(0, expected - leadMs - WARM_UP_MARGIN_MS - sinceBeginMs)
}

/** Longest run of trials without a turn of the event loop (ms): a signal (Ctrl-C, SIGTERM) is seen within this plus one trial. */
const EVENT_LOOP_TURN_MS = 20
/** Backoff of a worker that lost the database: first and largest wait (ms). */
const RETRY_START_MS = 100
const RETRY_MAX_MS = 5_000

function isoNow(): string {
  return new Date().toISOString()
}

/** Whether a replayed ask's configuration is the stored one without its fixed parameters (key order aside). */
function sameSearchedValues(config: Config, stored: Record<string, unknown>, fixed: Config | undefined): boolean {
  let searched = 0
  for (const k in stored) {
    if (fixed && k in fixed) continue
    searched++
    if (config[k] !== stored[k]) return false
  }
  return searched === Object.keys(config).length
}

export function resultOf(row: TrialRow): TrialResult {
  return row.status === 'ok'
    ? {status: 'ok', loss: row.loss ?? undefined, values: row.values ?? undefined}
    : {status: 'failed'}
}

/** This worker's lease name: host/pid/token (KT_WORKER_HOST overrides the host name). */
export function newOwner(): string {
  return `${workerHost()}/${process.pid}/${randomBytes(4).toString('hex')}`
}

function workerHost(): string {
  return (process.env.KT_WORKER_HOST || hostname()).replace(/\//g, '_')
}

/** True when `owner` names a process on this host that no longer exists (taken over without waiting). */
export function ownerIsDeadHere(owner: string): boolean {
  const [host, pidText] = owner.split('/')
  const pid = Number(pidText)
  if (host !== workerHost() || !Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false
  try {
    process.kill(pid, 0)
    return false
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH'
  }
}

/** How far a study has got: trials asked and budget used (units of the maximum budget). */
export interface StudyProgress {
  readonly asked: number
  readonly budgetUsed: number
}

/** The process's copy of the optimiser, kept equal to one optimiser told the store's history in order. */
class Replica {
  readonly asked = new Map<number, Trial>()
  askCount = 0
  tellSeq = 0
  budgetUsed = 0
  /** The connection everything replayed here was read on (a new one means a rebuild: SessionCheck). */
  readonly session: SessionCheck = {}
  private readonly maxReached = new Map<string, number>()

  constructor(
    readonly optimizer: Optimizer,
    private readonly where: string,
    private readonly fixed: Config | undefined,
    private readonly continuation: boolean,
    private readonly fidelityMax: number,
  ) {}

  private costOf(trial: Trial): number {
    const reached = this.maxReached.get(trial.configId) ?? 0
    const paid = this.continuation ? Math.max(0, trial.budget - reached) : trial.budget
    this.maxReached.set(trial.configId, Math.max(reached, trial.budget))
    return paid / this.fidelityMax
  }

  private noteAsk(trial: Trial): void {
    this.asked.set(trial.id, trial)
    this.askCount++
    this.budgetUsed += this.costOf(trial)
  }

  /** Replays rows the replica has not seen (new asks by id; new tells in tell order, each after its asks). */
  apply(rows: readonly TrialRow[]): number {
    const newAsks = rows.filter((r) => r.id >= this.askCount)
    newAsks.forEach((r, i) => {
      if (r.id !== this.askCount + i)
        throw new InputError(
          this.where,
          'trial ids 0, 1, 2, ... without gaps',
          `trial ${r.id} at position ${this.askCount + i}`,
        )
    })
    const end = this.askCount + newAsks.length
    const base = this.askCount
    const replayAsk = (): void => {
      const stored = newAsks[this.askCount - base]
      // the asker's hint lets this copy skip the ask's expensive part (BOHB: the KDE scoring); rows without one replay in full
      const trial =
        stored.askHint !== null && stored.askHint !== undefined && this.optimizer.replayAsk
          ? this.optimizer.replayAsk(stored.askHint, stored.config)
          : this.optimizer.ask()
      if (
        typeof trial === 'string' ||
        trial.id !== stored.id ||
        trial.budget !== stored.budget ||
        !sameSearchedValues(trial.config, stored.config, this.fixed)
      ) {
        const got = typeof trial === 'string' ? `'${trial}'` : `trial ${trial.id} at budget ${trial.budget}`
        throw new InputError(
          `${this.where} trial ${stored.id}`,
          'the trial this optimiser proposes on replay (same version, seed and options)',
          got,
        )
      }
      this.noteAsk(trial)
    }
    const tells = rows
      .filter((r) => r.status !== 'running' && r.tellSeq !== null && r.tellSeq >= this.tellSeq)
      .sort((a, b) => a.tellSeq! - b.tellSeq!)
    for (const row of tells) {
      const before = row.asksBefore ?? row.id + 1
      if (before > end || before <= row.id)
        throw new InputError(`${this.where} trial ${row.id}`, 'a consistent ask/tell history', `asks_before ${before}`)
      while (this.askCount < before) replayAsk()
      this.optimizer.tell(row.id, resultOf(row))
      this.tellSeq = row.tellSeq! + 1
    }
    while (this.askCount < end) replayAsk()
    return tells.length
  }

  /** The stopping rule that holds now, if any. */
  limit(limits: RunLimits): 'trials' | 'budget' | undefined {
    if (limits.maxTrials !== undefined && this.askCount >= limits.maxTrials) return 'trials'
    if (limits.maxBudget !== undefined && this.budgetUsed >= limits.maxBudget - 1e-12) return 'budget'
    return undefined
  }

  ask(): Trial | 'wait' | 'done' {
    const trial = this.optimizer.ask()
    if (typeof trial !== 'string') this.noteAsk(trial)
    return trial
  }
}

type Step =
  | {kind: 'trial'; trial: Trial; takeover: boolean; recorded?: boolean; checkpoint?: Promise<unknown>}
  | {kind: 'wait'; wakeInMs: number; changeMark: number; recorded?: boolean}
  | {kind: 'complete'; stoppedBy: 'done' | 'trials' | 'budget'; recorded?: boolean}
  | {kind: 'stop'; recorded?: boolean}

export async function optimizeStudy(options: RunOptions): Promise<RunSummary> {
  const {storage, study, objective} = options
  const now = options.now ?? isoNow
  const where = `${storage.label}: study ${study}`
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS
  const owner = newOwner()
  const slots = Math.max(1, options.workers ?? 1)
  const fullConfig = (config: Config): Config => {
    const merged: Config = {...options.fixed, ...config}
    const ordered: Config = {}
    for (const key of configKeys(objective.space)) if (key in merged) ordered[key] = merged[key]
    for (const key of Object.keys(merged)) if (!(key in ordered)) ordered[key] = merged[key]
    return ordered
  }

  let replica: Replica | undefined
  let replayed: number | undefined
  let rerun = 0
  let evaluated = 0
  /** Trials this process is evaluating now. */
  const mine = new Set<number>()
  const checkpoints = new Map<number, unknown>()
  const sections = new Mutex()
  // aborted by the caller (Ctrl-C) or by a slot that failed (the others stop too)
  const internal = new AbortController()
  if (options.signal?.aborted) internal.abort()
  options.signal?.addEventListener('abort', () => internal.abort(), {once: true})
  const signal = internal.signal
  const aborted = (): boolean => signal.aborted
  let failure: unknown

  // ---- the locked section: catch up, record, take the next piece of work ----
  const takeable = (lease: Lease, nowMs: number): boolean =>
    !mine.has(lease.id) &&
    (lease.owner === null ||
      lease.owner === owner ||
      (lease.heartbeatMs !== null && nowMs - lease.heartbeatMs > graceMs) ||
      ownerIsDeadHere(lease.owner))

  const timing = options.timing
  const timed = async <T>(fn: () => Promise<T>, add: (ms: number) => void): Promise<T> => {
    if (!timing) return fn()
    const t0 = performance.now()
    try {
      return await fn()
    } finally {
      add(performance.now() - t0)
    }
  }
  const optimizerTime = <T>(fn: () => T): T => {
    if (!timing) return fn()
    const t0 = performance.now()
    try {
      return fn()
    } finally {
      timing.optimizerMs += performance.now() - t0
    }
  }

  /** The checkpoint a continued trial starts from, when another process made it: read with the section's commit. */
  const checkpointFor = (tx: StudyTx, trial: Trial): Promise<unknown> | undefined =>
    trial.continues && objective.continuation && !checkpoints.has(trial.continues.trialId)
      ? tx.checkpointAfterCommit(trial.continues.trialId)
      : undefined
  const newReplica = (): Replica =>
    new Replica(
      options.createOptimizer(),
      where,
      options.fixed,
      objective.continuation ?? false,
      objective.fidelity?.max ?? 1,
    )
  /** Other workers' tells this worker replayed between its last two sections (outside the lock and in it). */
  let othersTells = 0

  // ---- warm-up before a trial's expected end (WARM-UP) ----
  /** This process's recent evaluation times by budget (ms), newest last. */
  const durations = new Map<number, number[]>()
  let warmUpLeadMs = WARM_UP_FIRST_LEAD_MS
  let warmUpPending = false
  const noteDuration = (budget: number, ms: number): void => {
    const list = durations.get(budget) ?? []
    list.push(ms)
    if (list.length > WARM_UP_HISTORY) list.shift()
    durations.set(budget, list)
  }
  /** Catches the replica up outside the lock; any failure is left for the next section to meet. */
  const warmUp = (): Promise<void> =>
    sections.run(async () => {
      const current = replica
      if (!current || aborted()) return
      const t0 = performance.now()
      let rows: TrialRow[]
      try {
        rows = await storage.changes(study, current.askCount, current.tellSeq, current.session)
      } catch {
        return
      }
      warmUpLeadMs += WARM_UP_LEAD_WEIGHT * (performance.now() - t0 - warmUpLeadMs)
      try {
        optimizerTime(() => current.apply(rows))
        othersTells = 0
        if (timing) timing.warmUps = (timing.warmUps ?? 0) + 1
      } catch {
        // a half-applied replica is rebuilt by the next section, which reports what is wrong
        if (replica === current) replica = undefined
      }
    })
  /** Schedules a warm-up before the expected end of an evaluation begun at `begunAt`; returns its cancel. */
  const warmUpBefore = (budget: number, begunAt: number): (() => void) => {
    const delay = warmUpDelay(durations.get(budget), warmUpLeadMs, performance.now() - begunAt)
    if (delay === undefined) return () => undefined
    const timer = setTimeout(() => {
      if (warmUpPending) return
      warmUpPending = true
      void warmUp().finally(() => (warmUpPending = false))
    }, delay)
    return () => clearTimeout(timer)
  }

  const section = (
    done: {trial: Trial; outcome: Outcome} | undefined,
    committing: (step: Step) => void,
  ): Promise<Step> =>
    sections.run(() =>
      retrying(async () => {
        // Catch up outside the lock (a consistent snapshot of the store), so that the locked
        // section, which every worker waits for, replays only what changed meanwhile: on
        // joining, and while other workers are active.
        let caughtUp = 0
        if (!replica || othersTells >= CATCH_UP_MIN_TELLS) {
          const current = replica ?? newReplica()
          const rows = await storage.changes(study, current.askCount, current.tellSeq, current.session)
          const told = optimizerTime(() => current.apply(rows))
          if (!replica) {
            replica = current
            replayed ??= told
          } else caughtUp = told
        }
        const synced = replica
        const since = {askCount: synced.askCount, tellSeq: synced.tellSeq}
        const finish = done ? {trialId: done.trial.id, owner, result: done.outcome} : undefined
        const session = synced.session
        return storage.withStudyLock(
          study,
          async (tx): Promise<Step> => {
            if (tx.state === 'missing')
              throw new InputError(where, 'an existing study', 'no such study (deleted while running?)')
            // the unseen trials, this worker's own tell (recorded in the prelude) among them
            const rows = await tx.changes(since.askCount, since.tellSeq)
            const told = optimizerTime(() => synced.apply(rows))
            const recorded = tx.recorded
            othersTells = caughtUp + told - (recorded ? 1 : 0)
            if (aborted()) return {kind: 'stop', recorded}
            const leases = await tx.leases()
            const markRunning = async (): Promise<void> => {
              if (tx.state !== 'running') await tx.setState('running', now())
            }
            const orphan = leases.find((l) => takeable(l, tx.nowMs))
            if (orphan) {
              const trial = synced.asked.get(orphan.id)
              if (!trial)
                throw new InputError(
                  `${where} trial ${orphan.id}`,
                  'a running trial the optimiser asked',
                  'a trial unknown on replay',
                )
              await tx.claim(orphan.id, owner, now())
              await markRunning()
              return {
                kind: 'trial',
                trial,
                takeover: orphan.owner !== owner,
                recorded,
                checkpoint: checkpointFor(tx, trial),
              }
            }
            const limit = synced.limit(options)
            const next = limit ? 'done' : optimizerTime(() => synced.ask())
            if (typeof next !== 'string') {
              await tx.insertTrial(
                {...next, config: fullConfig(next.config), askHint: synced.optimizer.askHint?.()},
                owner,
                now(),
              )
              await markRunning()
              return {kind: 'trial', trial: next, takeover: false, recorded, checkpoint: checkpointFor(tx, next)}
            }
            if (leases.length === 0) {
              // nothing running anywhere and nothing to ask: the study is complete
              if (tx.state !== 'finished') {
                await tx.setState('finished', now())
                await tx.notify()
              }
              return {kind: 'complete', stoppedBy: limit ?? 'done', recorded}
            }
            // others' trials are running: wait for a tell, or until the first lease could expire
            let wakeInMs = IDLE_RECHECK_MS
            for (const l of leases)
              if (!mine.has(l.id) && l.heartbeatMs !== null)
                wakeInMs = Math.min(wakeInMs, l.heartbeatMs + graceMs - tx.nowMs + 1)
            return {kind: 'wait', wakeInMs: Math.max(1, wakeInMs), changeMark: tx.changeMark, recorded}
          },
          {finish, since, session},
          committing,
        )
      }),
    )

  // ---- retry a section while the database is away ----
  let outageSince: number | undefined
  const retrying = async <T>(fn: () => Promise<T>): Promise<T> => {
    let wait = RETRY_START_MS
    for (;;) {
      try {
        const out = await fn()
        if (outageSince !== undefined) {
          options.log?.(
            `kt: ${storage.label} is back after ${((Date.now() - outageSince) / 1000).toFixed(1)} s; carrying on`,
          )
          outageSince = undefined
        }
        return out
      } catch (error) {
        if (!(error instanceof StorageUnavailableError)) throw error
        // the section may or may not have committed: rebuild the replica from the store
        replica = undefined
        if (outageSince === undefined) {
          outageSince = Date.now()
          options.log?.(`kt: lost the database ${storage.label} (${error.reason}); retrying with backoff`)
        }
        if (aborted()) throw error
        await sleep(wait, signal)
        wait = Math.min(RETRY_MAX_MS, wait * 2)
      }
    }
  }

  // ---- evaluation ----
  // objectives that wait on other processes (external engines) run every slot in this thread
  // a brief objective's single slot runs here too: a thread would only add a hop to every trial
  const useThreads = !objective.concurrent && (slots > 1 || ((options.threads ?? false) && !objective.brief))
  const pool = useThreads
    ? new WorkerPool(requireSpec(options.objectiveSpec), slots, options.timeoutMs, now)
    : undefined
  const evaluate = async (trial: Trial, read: Promise<unknown> | undefined): Promise<Outcome> => {
    let checkpointState: unknown
    if (trial.continues && objective.continuation) {
      const id = trial.continues.trialId
      checkpointState = checkpoints.has(id)
        ? checkpoints.get(id)
        : read
          ? await read
          : await retrying(() => storage.trialCheckpoint(study, id))
    }
    const job: EvalJob = {
      trialId: trial.id,
      config: fullConfig(trial.config),
      budget: trial.budget,
      ctx: {
        trialId: trial.id,
        configId: trial.configId,
        seed: options.seed,
        ...(options.artifactsDir ? {artifactsDir: options.artifactsDir} : {}),
        checkpoint:
          checkpointState !== undefined ? {budget: trial.continues!.budget, state: checkpointState} : undefined,
      },
    }
    return pool ? pool.evaluate(job) : evaluateHere(objective, job, options.timeoutMs, now)
  }

  // ---- heartbeats of the trials this process runs ----
  const beat = setInterval(
    () => {
      if (mine.size > 0) storage.heartbeat(study, owner).catch(() => undefined)
    },
    Math.max(10, Math.floor(graceMs / HEARTBEATS_PER_GRACE)),
  )
  beat.unref()

  /** Same trial, same work: an evaluation begun for `a` stands for one of `b`. */
  const sameTrial = (a: Trial, b: Trial): boolean =>
    a.id === b.id &&
    a.budget === b.budget &&
    a.configId === b.configId &&
    a.continues?.trialId === b.continues?.trialId &&
    sameSearchedValues(a.config, b.config, undefined)

  const turns = new EventLoopTurns(EVENT_LOOP_TURN_MS)
  const slot = async (): Promise<Step> => {
    let done: {trial: Trial; outcome: Outcome} | undefined
    for (;;) {
      await turns.take()
      const t0 = performance.now()
      // The trial a section hands out is evaluated from the moment its COMMIT is sent, while the
      // server makes the section durable (the barrier's WAL flush, after the lock is released).
      // Nothing is recorded before the barrier is acknowledged. A section that is retried (the
      // connection was lost, so it may or may not have committed) may hand out work again: the
      // evaluation already begun is then waited for, and stands for the new trial only if it is
      // the same one (the commit had happened and the lease is this worker's; or the replayed
      // optimiser asked the same again); otherwise it is dropped, its result never recorded.
      let early: {step: Step & {kind: 'trial'}; outcome: Promise<Outcome>; at: number} | undefined
      const step = await section(done, (s) => {
        if (s.kind !== 'trial' || early || aborted()) return
        early = {step: s, outcome: evaluate(s.trial, s.checkpoint), at: performance.now()}
        // a section that then fails leaves it unawaited: its failure is not an unhandled rejection
        early.outcome.catch(() => undefined)
      })
      if (timing) {
        timing.sections++
        timing.sectionMs += (early?.at ?? performance.now()) - t0
      }
      if (done) {
        mine.delete(done.trial.id)
        if (step.recorded) {
          if (done.outcome.status === 'ok' && done.outcome.checkpoint !== undefined)
            checkpoints.set(done.trial.id, done.outcome.checkpoint)
          options.onTrial?.(done.trial, done.outcome, {
            asked: replica?.askCount ?? 0,
            budgetUsed: replica?.budgetUsed ?? 0,
          })
        }
        done = undefined
      }
      let begun: Promise<Outcome> | undefined
      let begunAt = performance.now()
      if (early) {
        if (early.step === step) {
          begun = early.outcome
          begunAt = early.at
        } else {
          // begun in an attempt that may not have committed: never evaluate one trial twice at once here
          const settled = await early.outcome.then(
            (o) => o,
            () => undefined,
          )
          // ... and not when it continued a checkpoint that attempt read from the store: that may have
          // been another worker's section not yet durable, lost with it and since evaluated anew
          if (
            settled &&
            step.kind === 'trial' &&
            sameTrial(early.step.trial, step.trial) &&
            early.step.checkpoint === undefined
          )
            begun = Promise.resolve(settled)
        }
      }
      if (step.kind === 'stop' || step.kind === 'complete') return step
      if (step.kind === 'wait') {
        await timed(
          () => storage.waitForChange(study, step.wakeInMs, signal, step.changeMark),
          (ms) => (timing!.waitMs += ms),
        )
        continue
      }
      mine.add(step.trial.id)
      // stopped by onTrial (or Ctrl-C) during the section: the trial it handed out is released (its
      // evaluation, if begun, abandoned as on Ctrl-C during a trial)
      if (aborted()) return {kind: 'stop'}
      if (step.takeover) rerun++
      const evaluation = begun ?? evaluate(step.trial, step.checkpoint)
      const cancelWarmUp = warmUpBefore(step.trial.budget, begunAt)
      const outcome = await evaluation.finally(cancelWarmUp)
      const evaluatedAt = performance.now()
      noteDuration(step.trial.budget, evaluatedAt - begunAt)
      if (timing) timing.evaluateMs += evaluatedAt - begunAt
      evaluated++
      if (timing) {
        timing.evaluated++
        timing.lastEvaluatedAt = Date.now()
      }
      if (aborted()) return {kind: 'stop'}
      done = {trial: step.trial, outcome}
    }
  }

  /** Ctrl-C while the database is away: nothing can be released or read; one line, exit 130, instead of the lost connection's error. */
  const stoppedWhileLost = (error: unknown): unknown =>
    error instanceof StorageUnavailableError && options.signal?.aborted
      ? new InterruptedError(
          `stopped while the database ${storage.label} is unreachable (${error.reason}): this process's running trials are taken over by other workers after the grace period (${graceMs / 1000} s)`,
        )
      : error
  let stoppedBy: RunSummary['stoppedBy']
  let cpu0: NodeJS.CpuUsage | undefined
  let coordination0: CoordinationStats | undefined
  let wall0 = 0
  try {
    await retrying(async () => storage.warmUp?.(study))
    if (options.startAt !== undefined) {
      await sleep(options.startAt - Date.now(), signal)
      if (timing) timing.lateMs = Math.max(0, Date.now() - options.startAt)
    }
    cpu0 = process.cpuUsage()
    wall0 = performance.now()
    coordination0 = storage.coordinationStats?.()
    const running = Array.from({length: slots}, () =>
      slot().catch((error): Step => {
        failure ??= error
        internal.abort()
        return {kind: 'stop'}
      }),
    )
    const stop = new Promise<'aborted'>((resolve) =>
      signal.aborted ? resolve('aborted') : signal.addEventListener('abort', () => resolve('aborted'), {once: true}),
    )
    const first = await Promise.race([Promise.all(running), stop])
    if (first === 'aborted' || aborted()) {
      stoppedBy = 'aborted'
      // in-flight evaluations are abandoned; give their trials back so any worker takes them at once
      for (const r of running) r.catch(() => undefined)
      await retrying(() => storage.releaseLeases(study, owner)).catch(() => undefined)
      await storage
        .withStudyLock(study, async (tx) => {
          const others = (await tx.leases()).filter(
            (l) =>
              l.owner !== null &&
              l.owner !== owner &&
              tx.nowMs - (l.heartbeatMs ?? 0) <= graceMs &&
              !ownerIsDeadHere(l.owner),
          )
          if (others.length === 0 && tx.state === 'running') await tx.setState('interrupted', now())
        })
        .catch(() => undefined)
    } else {
      const complete = first.find((s) => s.kind === 'complete') as {stoppedBy: RunSummary['stoppedBy']} | undefined
      stoppedBy = complete?.stoppedBy ?? 'aborted'
    }
  } catch (error) {
    throw stoppedWhileLost(error)
  } finally {
    clearInterval(beat)
    if (timing && cpu0) {
      // from the start of work (not the connection's set-up)
      const c1 = storage.coordinationStats?.()
      const c0 = coordination0 ?? {roundTrips: 0, lockWaitMs: 0, lockHeldMs: 0, durableMs: 0}
      timing.coordination = c1 && {
        roundTrips: c1.roundTrips - c0.roundTrips,
        lockWaitMs: c1.lockWaitMs - c0.lockWaitMs,
        lockHeldMs: c1.lockHeldMs - c0.lockHeldMs,
        durableMs: (c1.durableMs ?? 0) - (c0.durableMs ?? 0),
      }
      const cpu = process.cpuUsage(cpu0)
      timing.cpuMs = (cpu.user + cpu.system) / 1000
      timing.wallMs = performance.now() - wall0
    }
    await pool?.close()
  }
  if (failure !== undefined) throw stoppedWhileLost(failure)
  const final = await retrying(() => storage.trials(study)).catch((error: unknown) => {
    throw stoppedWhileLost(error)
  })
  const ok = final.filter((r) => r.status === 'ok').length
  const failed = final.filter((r) => r.status === 'failed').length
  return {
    asked: final.length,
    finished: ok + failed,
    ok,
    failed,
    replayed: replayed ?? 0,
    rerun,
    evaluated,
    budgetUsed: replica?.budgetUsed ?? 0,
    stoppedBy,
  }
}

function requireSpec(spec: ObjectiveSpec | undefined): ObjectiveSpec {
  if (!spec)
    throw new InputError(
      '--workers',
      'an objective that worker threads can rebuild (a benchmark name or a module)',
      'an in-process objective',
    )
  return spec
}
