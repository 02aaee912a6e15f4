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
 * - Replay (replica.ts) checks every replayed ask against the stored trial. Each trial is stored
 *   with its asker's replay hint (Optimizer.askHint), so the other processes' copies replay it
 *   cheaply and still end bit-identical (src/search/bohb-replay.ts).
 * - A running trial is leased to its worker (owner host/pid/token) and carries a heartbeat. A
 *   trial is taken over (claimed and evaluated again, once, under its own id) when its owner
 *   released it (Ctrl-C), when the owner's heartbeat is older than the study's grace period, or at
 *   once when the owner is a dead process on this host. A result is recorded only while its
 *   trial is still leased to the worker that evaluated it, so no trial is finished twice; a
 *   committed result is never lost.
 * - With one worker and one slot the order is ask 0, tell 0, ask 1, ...: a seed gives one study.
 * - On PostgreSQL a section commits asynchronously (the study lock is released before the WAL
 *   flush) and a durability barrier sent with its COMMIT makes it durable (src/study/storage-postgres-section.ts,
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
import {configKeys, type Config} from '../space/index.js'
import type {ObjectiveSpec} from './objectives.js'
import type {Objective, Trial} from '../search/types.js'
import {InputError, InterruptedError} from '../util/errors.js'
import {evaluateHere, type EvalJob, type Outcome} from './evaluate.js'
import {WorkerPool} from './pool.js'
import {
  StorageUnavailableError,
  type CoordinationStats,
  type Lease,
  type StudyStorage,
  type StudyTx,
} from './storage.js'
import {closeWorkerTiming, type RunOptions, type RunSummary, type WorkerTiming} from './optimize-options.js'
import {newOwner, ownerIsDeadHere} from './owner.js'
import {Replica, sameTrial} from './replica.js'
import {EventLoopTurns, Mutex, sleep} from './sync.js'

/** Default grace period of a lease (ms): a worker silent for this long is taken for dead (Optuna's grace_period). */
const DEFAULT_GRACE_MS = 60_000
/** Heartbeats per grace period: a live worker beats this many times before its lease could expire. */
const HEARTBEATS_PER_GRACE = 6
/** How long an idle worker waits at most before looking again, when no lease can expire sooner (ms). */
const IDLE_RECHECK_MS = 5_000
/**
 * A worker catches up outside the lock when at least this many other workers' results arrived
 * between its last two sections (and always when it joins): replay inside the lock holds every
 * worker up, so a larger backlog is replayed before taking it (figures: docs/measurements.md,
 * "First round: two round trips, catch-up outside the lock").
 */
const CATCH_UP_MIN_TELLS = 4
/** Longest run of trials without a turn of the event loop (ms): a signal (Ctrl-C, SIGTERM) is seen within this plus one trial. */
const EVENT_LOOP_TURN_MS = 20
/** Backoff of a worker that lost the database: first and largest wait (ms). */
const RETRY_START_MS = 100
const RETRY_MAX_MS = 5_000

function isoNow(): string {
  return new Date().toISOString()
}

type Step =
  | {kind: 'trial'; trial: Trial; takeover: boolean; recorded?: boolean; checkpoint?: Promise<unknown>}
  | {kind: 'wait'; wakeInMs: number; changeMark: number; recorded?: boolean}
  | {kind: 'complete'; stoppedBy: 'done' | 'trials' | 'budget'; recorded?: boolean}
  | {kind: 'stop'; recorded?: boolean}

/** A trial this slot evaluated, to be recorded by its next section. */
interface Done {
  readonly trial: Trial
  readonly outcome: Outcome
}

/** An evaluation a slot began while its section's COMMIT was on its way (see StudyRun.slot). */
interface Early {
  readonly step: Step & {kind: 'trial'}
  readonly outcome: Promise<Outcome>
  readonly at: number
}

/** Runs the study loop in this process until the study is complete, a limit holds, or the signal aborts. */
export async function optimizeStudy(options: RunOptions): Promise<RunSummary> {
  return new StudyRun(options).run()
}

/** One process's run of a study: its replica, its slots and their locked sections. */
class StudyRun {
  private readonly storage: StudyStorage
  private readonly study: string
  private readonly objective: Objective
  private readonly now: () => string
  private readonly where: string
  private readonly graceMs: number
  private readonly owner = newOwner()
  private readonly slots: number
  private readonly timing: WorkerTiming | undefined
  private replica: Replica | undefined
  private replayed: number | undefined
  private rerun = 0
  private evaluated = 0
  /** Trials this process is evaluating now. */
  private readonly mine = new Set<number>()
  private readonly checkpoints = new Map<number, unknown>()
  private readonly sections = new Mutex()
  /** Aborted by the caller (Ctrl-C) or by a slot that failed (the others stop too). */
  private readonly internal = new AbortController()
  private failure: unknown
  /** Other workers' tells this worker replayed between its last two sections (outside the lock and in it). */
  private othersTells = 0
  private readonly turns = new EventLoopTurns(EVENT_LOOP_TURN_MS)
  private outageSince: number | undefined
  private pool: WorkerPool | undefined

  constructor(private readonly options: RunOptions) {
    this.storage = options.storage
    this.study = options.study
    this.objective = options.objective
    this.now = options.now ?? isoNow
    this.where = `${this.storage.label}: study ${this.study}`
    this.graceMs = options.graceMs ?? DEFAULT_GRACE_MS
    this.slots = Math.max(1, options.workers ?? 1)
    this.timing = options.timing
    if (options.signal?.aborted) this.internal.abort()
    options.signal?.addEventListener('abort', () => this.internal.abort(), {once: true})
  }

  private get signal(): AbortSignal {
    return this.internal.signal
  }

  private aborted(): boolean {
    return this.internal.signal.aborted
  }

  /** The configuration as evaluated and stored: fixed parameters added, in the space's order. */
  private fullConfig(config: Config): Config {
    const merged: Config = {...this.options.fixed, ...config}
    const ordered: Config = {}
    for (const key of configKeys(this.objective.space)) if (key in merged) ordered[key] = merged[key]
    for (const key of Object.keys(merged)) if (!(key in ordered)) ordered[key] = merged[key]
    return ordered
  }

  private takeable(lease: Lease, nowMs: number): boolean {
    return (
      !this.mine.has(lease.id) &&
      (lease.owner === null ||
        lease.owner === this.owner ||
        (lease.heartbeatMs !== null && nowMs - lease.heartbeatMs > this.graceMs) ||
        ownerIsDeadHere(lease.owner))
    )
  }

  private optimizerTime<T>(fn: () => T): T {
    const timing = this.timing
    if (!timing) return fn()
    const t0 = performance.now()
    try {
      return fn()
    } finally {
      timing.optimizerMs += performance.now() - t0
    }
  }

  /** The checkpoint a continued trial starts from, when another process made it: read with the section's commit. */
  private checkpointFor(tx: StudyTx, trial: Trial): Promise<unknown> | undefined {
    return trial.continues && this.objective.continuation && !this.checkpoints.has(trial.continues.trialId)
      ? tx.checkpointAfterCommit(trial.continues.trialId)
      : undefined
  }

  private newReplica(): Replica {
    return new Replica(
      this.options.createOptimizer(),
      this.where,
      this.options.fixed,
      this.objective.continuation ?? false,
      this.objective.fidelity?.max ?? 1,
    )
  }

  // ---- the locked section: catch up, record, take the next piece of work ----
  private section(done: Done | undefined, committing: (step: Step) => void): Promise<Step> {
    return this.sections.run(() =>
      this.retrying(async () => {
        // Catch up outside the lock (a consistent snapshot of the store), so that the locked
        // section, which every worker waits for, replays only what changed meanwhile: on
        // joining, and while other workers are active.
        let caughtUp = 0
        if (!this.replica || this.othersTells >= CATCH_UP_MIN_TELLS) {
          const current = this.replica ?? this.newReplica()
          const rows = await this.storage.changes(this.study, current.askCount, current.tellSeq, current.session)
          const told = this.optimizerTime(() => current.apply(rows))
          if (!this.replica) {
            this.replica = current
            this.replayed ??= told
          } else caughtUp = told
        }
        const synced = this.replica
        const since = {askCount: synced.askCount, tellSeq: synced.tellSeq}
        const finish = done ? {trialId: done.trial.id, owner: this.owner, result: done.outcome} : undefined
        return this.storage.withStudyLock(
          this.study,
          (tx) => this.locked(tx, synced, since, caughtUp),
          {finish, since, session: synced.session},
          committing,
        )
      }),
    )
  }

  /** Inside the study's lock: replay what is unseen, then a takeover, a new ask, completion or a wait. */
  private async locked(
    tx: StudyTx,
    synced: Replica,
    since: {askCount: number; tellSeq: number},
    caughtUp: number,
  ): Promise<Step> {
    if (tx.state === 'missing')
      throw new InputError(this.where, 'an existing study', 'no such study (deleted while running?)')
    // the unseen trials, this worker's own tell (recorded in the prelude) among them
    const rows = await tx.changes(since.askCount, since.tellSeq)
    const told = this.optimizerTime(() => synced.apply(rows))
    const recorded = tx.recorded
    this.othersTells = caughtUp + told - (recorded ? 1 : 0)
    if (this.aborted()) return {kind: 'stop', recorded}
    const leases = await tx.leases()
    const markRunning = async (): Promise<void> => {
      if (tx.state !== 'running') await tx.setState('running', this.now())
    }
    const orphan = leases.find((l) => this.takeable(l, tx.nowMs))
    if (orphan) {
      const trial = synced.asked.get(orphan.id)
      if (!trial)
        throw new InputError(
          `${this.where} trial ${orphan.id}`,
          'a running trial the optimiser asked',
          'a trial unknown on replay',
        )
      await tx.claim(orphan.id, this.owner, this.now())
      await markRunning()
      const takeover = orphan.owner !== this.owner
      return {kind: 'trial', trial, takeover, recorded, checkpoint: this.checkpointFor(tx, trial)}
    }
    const limit = synced.limit(this.options)
    const next = limit ? 'done' : this.optimizerTime(() => synced.ask())
    if (typeof next !== 'string') {
      const askHint = synced.optimizer.askHint?.()
      await tx.insertTrial({...next, config: this.fullConfig(next.config), askHint}, this.owner, this.now())
      await markRunning()
      return {kind: 'trial', trial: next, takeover: false, recorded, checkpoint: this.checkpointFor(tx, next)}
    }
    if (leases.length === 0) {
      // nothing running anywhere and nothing to ask: the study is complete
      if (tx.state !== 'finished') {
        await tx.setState('finished', this.now())
        await tx.notify()
      }
      return {kind: 'complete', stoppedBy: limit ?? 'done', recorded}
    }
    // others' trials are running: wait for a tell, or until the first lease could expire
    let wakeInMs = IDLE_RECHECK_MS
    for (const l of leases)
      if (!this.mine.has(l.id) && l.heartbeatMs !== null)
        wakeInMs = Math.min(wakeInMs, l.heartbeatMs + this.graceMs - tx.nowMs + 1)
    return {kind: 'wait', wakeInMs: Math.max(1, wakeInMs), changeMark: tx.changeMark, recorded}
  }

  // ---- retry a section while the database is away ----
  private async retrying<T>(fn: () => Promise<T>): Promise<T> {
    let wait = RETRY_START_MS
    for (;;) {
      try {
        const out = await fn()
        if (this.outageSince !== undefined) {
          const away = ((Date.now() - this.outageSince) / 1000).toFixed(1)
          this.options.log?.(`kt: ${this.storage.label} is back after ${away} s; carrying on`)
          this.outageSince = undefined
        }
        return out
      } catch (error) {
        if (!(error instanceof StorageUnavailableError)) throw error
        // the section may or may not have committed: rebuild the replica from the store
        this.replica = undefined
        if (this.outageSince === undefined) {
          this.outageSince = Date.now()
          this.options.log?.(`kt: lost the database ${this.storage.label} (${error.reason}); retrying with backoff`)
        }
        if (this.aborted()) throw error
        await sleep(wait, this.signal)
        wait = Math.min(RETRY_MAX_MS, wait * 2)
      }
    }
  }

  // ---- evaluation ----
  private async evaluate(trial: Trial, read: Promise<unknown> | undefined): Promise<Outcome> {
    let checkpointState: unknown
    if (trial.continues && this.objective.continuation) {
      const id = trial.continues.trialId
      checkpointState = this.checkpoints.has(id)
        ? this.checkpoints.get(id)
        : read
          ? await read
          : await this.retrying(() => this.storage.trialCheckpoint(this.study, id))
    }
    const job: EvalJob = {
      trialId: trial.id,
      config: this.fullConfig(trial.config),
      budget: trial.budget,
      ctx: {
        trialId: trial.id,
        configId: trial.configId,
        seed: this.options.seed,
        ...(this.options.artifactsDir ? {artifactsDir: this.options.artifactsDir} : {}),
        checkpoint:
          checkpointState !== undefined ? {budget: trial.continues!.budget, state: checkpointState} : undefined,
      },
    }
    return this.pool ? this.pool.evaluate(job) : evaluateHere(this.objective, job, this.options.timeoutMs, this.now)
  }

  /** Records what the section said about this slot's finished trial (its checkpoint, onTrial). */
  private noteRecorded(done: Done, step: Step): void {
    this.mine.delete(done.trial.id)
    if (!step.recorded) return
    if (done.outcome.status === 'ok' && done.outcome.checkpoint !== undefined)
      this.checkpoints.set(done.trial.id, done.outcome.checkpoint)
    this.options.onTrial?.(done.trial, done.outcome, {
      asked: this.replica?.askCount ?? 0,
      budgetUsed: this.replica?.budgetUsed ?? 0,
    })
  }

  /**
   * The evaluation begun early that stands for the trial `step` hands out, if any. One begun in a
   * section attempt that may not have committed is waited for (never evaluate one trial twice at
   * once here) and kept only for the same trial, and not when it continued a checkpoint that
   * attempt read from the store: that may have been another worker's section not yet durable,
   * lost with it and since evaluated anew.
   */
  private async adoptEarly(early: Early, step: Step): Promise<{begun: Promise<Outcome>; at: number} | undefined> {
    if (early.step === step) return {begun: early.outcome, at: early.at}
    const settled = await early.outcome.then(
      (o) => o,
      () => undefined,
    )
    if (
      settled &&
      step.kind === 'trial' &&
      sameTrial(early.step.trial, step.trial) &&
      early.step.checkpoint === undefined
    )
      return {begun: Promise.resolve(settled), at: performance.now()}
    return undefined
  }

  /**
   * One slot: section, evaluate, section, ... The trial a section hands out is evaluated from the
   * moment its COMMIT is sent, while the server makes the section durable (the barrier's WAL
   * flush, after the lock is released). Nothing is recorded before the barrier is acknowledged. A
   * section that is retried (the connection was lost, so it may or may not have committed) may
   * hand out work again: see adoptEarly.
   */
  private async slot(): Promise<Step> {
    let done: Done | undefined
    for (;;) {
      await this.turns.take()
      const t0 = performance.now()
      let early: Early | undefined
      const step = await this.section(done, (s) => {
        if (s.kind !== 'trial' || early || this.aborted()) return
        early = {step: s, outcome: this.evaluate(s.trial, s.checkpoint), at: performance.now()}
        // a section that then fails leaves it unawaited: its failure is not an unhandled rejection
        early.outcome.catch(() => undefined)
      })
      if (this.timing) {
        this.timing.sections++
        this.timing.sectionMs += (early?.at ?? performance.now()) - t0
      }
      if (done) this.noteRecorded(done, step)
      done = undefined
      const adopted = early ? await this.adoptEarly(early, step) : undefined
      if (step.kind === 'stop' || step.kind === 'complete') return step
      if (step.kind === 'wait') {
        await this.timed(
          () => this.storage.waitForChange(this.study, step.wakeInMs, this.signal, step.changeMark),
          (ms) => (this.timing!.waitMs += ms),
        )
        continue
      }
      this.mine.add(step.trial.id)
      // stopped by onTrial (or Ctrl-C) during the section: the trial it handed out is released (its
      // evaluation, if begun, abandoned as on Ctrl-C during a trial)
      if (this.aborted()) return {kind: 'stop'}
      if (step.takeover) this.rerun++
      const outcome = await this.evaluateStep(step, adopted)
      if (this.aborted()) return {kind: 'stop'}
      done = {trial: step.trial, outcome}
    }
  }

  /** Evaluates the trial a section handed out (or waits for the evaluation begun early), timing it. */
  private async evaluateStep(
    step: Step & {kind: 'trial'},
    adopted: {begun: Promise<Outcome>; at: number} | undefined,
  ): Promise<Outcome> {
    const begunAt = adopted?.at ?? performance.now()
    const outcome = await (adopted?.begun ?? this.evaluate(step.trial, step.checkpoint))
    const evaluatedAt = performance.now()
    this.evaluated++
    if (this.timing) {
      this.timing.evaluateMs += evaluatedAt - begunAt
      this.timing.evaluated++
      this.timing.lastEvaluatedAt = Date.now()
    }
    return outcome
  }

  private async timed<T>(fn: () => Promise<T>, add: (ms: number) => void): Promise<T> {
    if (!this.timing) return fn()
    const t0 = performance.now()
    try {
      return await fn()
    } finally {
      add(performance.now() - t0)
    }
  }

  /** Ctrl-C while the database is away: nothing can be released or read; one line, exit 130, instead of the lost connection's error. */
  private stoppedWhileLost(error: unknown): unknown {
    return error instanceof StorageUnavailableError && this.options.signal?.aborted
      ? new InterruptedError(
          `stopped while the database ${this.storage.label} is unreachable (${error.reason}): this process's running trials are taken over by other workers after the grace period (${this.graceMs / 1000} s)`,
        )
      : error
  }

  /** After an abort: this process's trials go back at once, and a study nobody else works on is marked interrupted. */
  private async release(): Promise<void> {
    await this.retrying(() => this.storage.releaseLeases(this.study, this.owner)).catch(() => undefined)
    await this.storage
      .withStudyLock(this.study, async (tx) => {
        const others = (await tx.leases()).filter(
          (l) =>
            l.owner !== null &&
            l.owner !== this.owner &&
            tx.nowMs - (l.heartbeatMs ?? 0) <= this.graceMs &&
            !ownerIsDeadHere(l.owner),
        )
        if (others.length === 0 && tx.state === 'running') await tx.setState('interrupted', this.now())
      })
      .catch(() => undefined)
  }

  /** Runs every slot until the study completes or the run is aborted; how it stopped. */
  private async runSlots(): Promise<RunSummary['stoppedBy']> {
    const running = Array.from({length: this.slots}, () =>
      this.slot().catch((error): Step => {
        this.failure ??= error
        this.internal.abort()
        return {kind: 'stop'}
      }),
    )
    const signal = this.signal
    const stop = new Promise<'aborted'>((resolve) =>
      signal.aborted ? resolve('aborted') : signal.addEventListener('abort', () => resolve('aborted'), {once: true}),
    )
    const first = await Promise.race([Promise.all(running), stop])
    if (first === 'aborted' || this.aborted()) {
      // in-flight evaluations are abandoned; give their trials back so any worker takes them at once
      for (const r of running) r.catch(() => undefined)
      await this.release()
      return 'aborted'
    }
    const complete = first.find((s) => s.kind === 'complete') as {stoppedBy: RunSummary['stoppedBy']} | undefined
    return complete?.stoppedBy ?? 'aborted'
  }

  async run(): Promise<RunSummary> {
    const {options, storage, study, objective, timing} = this
    // objectives that wait on other processes (external engines) run every slot in this thread
    // a brief objective's single slot runs here too: a thread would only add a hop to every trial
    const useThreads = !objective.concurrent && (this.slots > 1 || ((options.threads ?? false) && !objective.brief))
    this.pool = useThreads
      ? new WorkerPool(requireSpec(options.objectiveSpec), this.slots, options.timeoutMs, this.now)
      : undefined
    // heartbeats of the trials this process runs
    const beat = setInterval(
      () => {
        if (this.mine.size > 0) storage.heartbeat(study, this.owner).catch(() => undefined)
      },
      Math.max(10, Math.floor(this.graceMs / HEARTBEATS_PER_GRACE)),
    )
    beat.unref()
    let stoppedBy: RunSummary['stoppedBy']
    let cpu0: NodeJS.CpuUsage | undefined
    let coordination0: CoordinationStats | undefined
    let wall0 = 0
    try {
      await this.retrying(async () => storage.warmUp?.(study))
      if (options.startAt !== undefined) {
        await sleep(options.startAt - Date.now(), this.signal)
        if (timing) timing.lateMs = Math.max(0, Date.now() - options.startAt)
      }
      cpu0 = process.cpuUsage()
      wall0 = performance.now()
      coordination0 = storage.coordinationStats?.()
      stoppedBy = await this.runSlots()
    } catch (error) {
      throw this.stoppedWhileLost(error)
    } finally {
      clearInterval(beat)
      if (timing && cpu0) closeWorkerTiming(timing, cpu0, wall0, coordination0, storage.coordinationStats?.())
      await this.pool?.close()
    }
    if (this.failure !== undefined) throw this.stoppedWhileLost(this.failure)
    const final = await this.retrying(() => storage.trials(study)).catch((error: unknown) => {
      throw this.stoppedWhileLost(error)
    })
    const ok = final.filter((r) => r.status === 'ok').length
    const failed = final.filter((r) => r.status === 'failed').length
    return {
      asked: final.length,
      finished: ok + failed,
      ok,
      failed,
      replayed: this.replayed ?? 0,
      rerun: this.rerun,
      evaluated: this.evaluated,
      budgetUsed: this.replica?.budgetUsed ?? 0,
      stoppedBy,
    }
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
