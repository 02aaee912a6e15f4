/**
 * The study storage interface (the shape of Optuna's BaseStorage, async): one API over the
 * embedded SQLite file (storage-sqlite.ts, the default) and a PostgreSQL server
 * (storage-postgres.ts, `--storage postgresql://user@host:port/db`), their SQL shared
 * (storage-sql.ts), so that `kt search`, `kt worker`, `kt study ...` and the dashboard work on
 * either. Reads never take a lock or write. Coordination (src/study/optimize.ts, many worker
 * processes on one study): locked sections serialize asks, claims and tells in one order every
 * worker can replay; a running trial carries its owner's heartbeat and is taken over (claimed,
 * evaluated again once) when its owner stopped beating for longer than the study's grace period;
 * a worker with nothing to do waits for a change (PostgreSQL LISTEN/NOTIFY; SQLite backoff).
 */
import type {FinishedTrial, StudyRecord, TrialRow} from './model.js'
import {redactPasswords} from '../util/redact.js'

/** A study with its trial counts, as listStudies returns it. */
export interface StudySummary extends StudyRecord {
  readonly trials: number
  readonly ok: number
  readonly failed: number
  readonly running: number
  /** Smallest loss of any successful trial (any budget); the incumbent needs trials(). */
  readonly bestLoss: number | null
}

/** A trial being evaluated: who holds it and when they last said so. */
export interface Lease {
  readonly id: number
  /** `host/pid/token` of the worker holding it; null when released (Ctrl-C, copy). */
  readonly owner: string | null
  /** Storage clock (ms since the epoch) of the owner's last heartbeat. */
  readonly heartbeatMs: number | null
  /** How many times the trial has been started (1 = never taken over). */
  readonly attempts: number
}

/** A trial the optimiser just asked, as it is inserted (status running, leased to its owner). */
export interface NewTrial {
  readonly id: number
  readonly configId: string
  readonly config: Record<string, unknown>
  readonly budget: number
  readonly continues?: {readonly trialId: number}
  readonly info?: Record<string, unknown>
  /** The optimiser's replay hint of this ask (Optimizer.askHint), stored as JSON in ask_hint. */
  readonly askHint?: unknown
}

/**
 * What one locked section of a study sees and may do (see withStudyLock). insertTrial, claim,
 * setState and notify take effect when the section commits (PostgreSQL sends them with COMMIT):
 * reads later in the same section do not see them. finish takes effect at once (its result is
 * read).
 */
export interface StudyTx {
  /** The storage's clock in ms since the epoch (PostgreSQL: the server's, so machines agree). */
  readonly nowMs: number
  /** The study's state as read under the lock. */
  readonly state: string
  /** Pass to waitForChange: a change notified after this section began then ends the wait at once. */
  readonly changeMark: number
  /** Trials with id >= askCount or tell_seq >= tellSeq (what a replica has not seen yet), by id, without checkpoints. */
  changes(askCount: number, tellSeq: number): Promise<TrialRow[]>
  /** The running trials and their leases. */
  leases(): Promise<Lease[]>
  insertTrial(trial: NewTrial, owner: string, startedAt: string): Promise<void>
  /** Takes over a running trial: new owner, fresh heartbeat, one more attempt. */
  claim(trialId: number, owner: string, startedAt: string): Promise<void>
  /**
   * Records a finished trial if it is still running and leased to `owner`; false otherwise (it
   * was taken over, or is finished already), so no trial is ever finished twice.
   */
  finish(trialId: number, owner: string, result: FinishedTrial): Promise<boolean>
  setState(state: string, now: string): Promise<void>
  /** Wakes the workers waiting on this study once the transaction commits. */
  notify(): Promise<void>
  /**
   * The checkpoint of a finished trial, read with the section's last round trip: the promise
   * settles after the section commits (never await it inside the section).
   */
  checkpointAfterCommit(trialId: number): Promise<unknown>
  /** Whether the prelude's finished trial was recorded (undefined without one): see SectionPrelude. */
  readonly recorded?: boolean
}

/** A finished evaluation before its place in the tell order is known. */
type FinishedOutcome = Omit<FinishedTrial, 'tellSeq' | 'asksBefore'>

/**
 * What a locked section starts with, sent with the lock request itself so that a worker's
 * section is two round trips on PostgreSQL (lock + tell + unseen trials; its writes + COMMIT):
 *   - finish: the trial this worker evaluated, recorded first (as StudyTx.finish: only while it
 *     is running and leased to `owner`) as the study's next tell, its tell_seq and asks_before
 *     assigned by the storage under the lock (the next tell number; every trial asked so far);
 *     StudyTx.recorded says whether it was;
 *   - since: tx.changes with these values (the replica's position) is answered from the same
 *     round trip, and the leases with it; it includes the prelude's finished trial.
 */
export interface SectionPrelude {
  readonly finish?: {readonly trialId: number; readonly owner: string; readonly result: FinishedOutcome}
  readonly since?: {readonly askCount: number; readonly tellSeq: number}
  /** The connection the caller's earlier reads were made on: see SessionCheck. */
  readonly session?: SessionCheck
}

/**
 * Ties a caller's reads and its section to one database connection (PostgreSQL). Another
 * worker's section may be read before it is durable (src/study/storage-postgres-section.ts, DURABILITY_BARRIER),
 * and a server crash may then lose it; the crash also ends the connection. Pass the same object
 * to every read that feeds one replica and to its sections: the first call fills `value` with
 * the connection it used, and a later one on another connection (the client reconnected, e.g.
 * after a heartbeat met the crash) throws StorageUnavailableError instead of running, so the
 * caller rebuilds its replica from the store. Storages whose reads are always durable ignore it.
 */
export interface SessionCheck {
  value?: number
}

type StorageKind = 'sqlite' | 'postgresql'

export interface OpenOptions {
  /** Fail unless the storage already holds kt's schema (resume, worker, show, export, copy --from). */
  readonly mustExist?: boolean
  /** Never write (list, show, export): no schema is created or migrated. */
  readonly readonly?: boolean
}

export interface StudyStorage {
  readonly kind: StorageKind
  /** How to name this storage to a user: the file path, or the URL without its password. */
  readonly label: string

  // ---- read API ----
  /** Every study with its trial counts and best loss. */
  listStudies(): Promise<StudySummary[]>
  /** One study's fixed description and state. */
  getStudy(name: string): Promise<StudyRecord | undefined>
  /** Every trial of a study in id order, checkpoints included. */
  trials(study: string): Promise<TrialRow[]>
  /**
   * Up to `limit` trials with id > afterId, by id, without checkpoints: a study read in pages
   * (trialPages in src/study/pages.ts) in memory that does not grow with its trial count.
   */
  trialPage(study: string, afterId: number, limit: number): Promise<TrialRow[]>
  /**
   * Trials with id >= askCount (asked since), tell_seq >= tellSeq (finished since) or in `ids`
   * (the trials the caller saw running: they can finish or be taken over), by id, without
   * checkpoints; and how many trials the study has (a caller whose count disagrees reads all).
   */
  trialsSince(
    study: string,
    askCount: number,
    tellSeq: number,
    ids: readonly number[],
  ): Promise<{trials: TrialRow[]; total: number}>
  /**
   * A value that differs whenever another connection has committed to the storage since the last
   * call (SQLite's `PRAGMA data_version`), or undefined where the backend has no such counter
   * (PostgreSQL): callers then read.
   */
  changeCounter(): Promise<number | undefined>
  trialCheckpoint(study: string, trialId: number): Promise<unknown>
  /**
   * Trials with id >= askCount or tell_seq >= tellSeq, read without the lock (one consistent
   * snapshot: a prefix of the serial history), by id, without checkpoints: a worker catches its
   * replica up here, so that its locked section replays only what changed meanwhile.
   */
  changes(study: string, askCount: number, tellSeq: number, session?: SessionCheck): Promise<TrialRow[]>

  // ---- write API ----
  createStudy(record: Omit<StudyRecord, 'createdAt' | 'updatedAt' | 'state'>, now: string): Promise<StudyRecord>
  setStudyState(name: string, state: string, now: string): Promise<void>
  setStudyOptions(name: string, options: Record<string, unknown>, now: string): Promise<void>
  /** Writes a whole study (kt study copy) in one transaction; running trials arrive released. */
  importStudy(study: StudyRecord, trials: readonly TrialRow[]): Promise<void>

  // ---- coordination API ----
  /**
   * `committing`, when given, may be called with fn's value as soon as the section's COMMIT is on
   * its way (PostgreSQL: sent, the durability barrier after it; SQLite, whose commit is
   * synchronous: never), before the returned promise settles: a worker may start evaluating the
   * trial it was handed while the server makes the section durable. The returned promise still
   * settles only once the section is durable (a rejection means it may not be: whatever was
   * started early must be taken back).
   */
  withStudyLock<T>(
    study: string,
    fn: (tx: StudyTx) => Promise<T>,
    prelude?: SectionPrelude,
    committing?: (value: T) => void,
  ): Promise<T>
  /** Refreshes the heartbeat of every running trial `owner` holds in the study. */
  heartbeat(study: string, owner: string): Promise<void>
  /** Gives up `owner`'s running trials at once (clean stop), so another worker takes them without waiting. */
  releaseLeases(study: string, owner: string): Promise<void>
  /** Resolves when the study may have changed (a tell, a state change) since `changeMark` (from a StudyTx), or after timeoutMs. */
  waitForChange(study: string, timeoutMs: number, signal?: AbortSignal, changeMark?: number): Promise<void>

  /**
   * Gets ready to coordinate on a study (PostgreSQL: the notification connection and the
   * section's prepared statements), so that a worker's first trial does not pay for it.
   */
  warmUp?(study: string): Promise<void>
  /** Counters of the coordination work done so far (kt bench workers prints them per trial). */
  coordinationStats?(): CoordinationStats

  close(): Promise<void>
}

/** What a storage counts while workers run on it (one process's share). */
export interface CoordinationStats {
  /** Statements sent to the database (a multi-statement message counts once). */
  readonly roundTrips: number
  /** Time waiting for the study's lock (ms). */
  readonly lockWaitMs: number
  /** Time the study's lock was held by this process (ms): from its grant to the end of the commit (PostgreSQL: on the server's clock). */
  readonly lockHeldMs: number
  /** Time from sending a section's COMMIT to knowing it durable (PostgreSQL: the barrier's acknowledgement; overlaps the evaluation), ms. */
  readonly durableMs?: number
}

/** The database went away after it was opened (server restart, network): workers retry. */
export class StorageUnavailableError extends Error {
  constructor(
    readonly storage: string,
    readonly reason: string,
  ) {
    super(`${storage}: lost the database (${reason})`)
    this.name = 'StorageUnavailableError'
  }
}

/** True for a `--storage` value naming a PostgreSQL database. */
export function isPostgresUrl(spec: string): boolean {
  return /^postgres(ql)?:\/\//i.test(spec)
}

/** A storage spec safe to print: the password of a URL replaced by *** (redactPasswords, the one rule). */
export function redactStorage(spec: string): string {
  return isPostgresUrl(spec) ? redactPasswords(spec) : spec
}

/**
 * Opens a storage by its `--storage` value: `postgresql://...` (or `postgres://`) is a PostgreSQL
 * database; anything else is a SQLite file path (`:memory:` for a throwaway one).
 */
export async function openStorage(spec: string, options: OpenOptions = {}): Promise<StudyStorage> {
  if (isPostgresUrl(spec)) {
    const {PostgresStorage} = await import('./storage-postgres.js')
    return PostgresStorage.open(spec, options)
  }
  const {SqliteStorage} = await import('./storage-sqlite.js')
  return SqliteStorage.open(spec.replace(/^sqlite:(\/\/)?/i, ''), options)
}
