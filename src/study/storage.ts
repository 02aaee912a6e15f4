/**
 * The study storage interface (the shape of Optuna's BaseStorage, async): one API over the
 * embedded SQLite file (storage-sqlite.ts, the default) and a PostgreSQL server
 * (storage-postgres.ts, `--storage postgresql://user@host:port/db`), so that `kt search`,
 * `kt worker`, `kt study ...` and the dashboard work on either.
 *
 * Read API (what a viewer needs; never takes a lock or writes):
 *   - listStudies(): every study with its trial counts and best loss;
 *   - getStudy(name): one study's fixed description and state;
 *   - trials(name): every trial of a study in id order (checkpoints included);
 *   - trialsSince(name, askCount, tellSeq, ids): what a reader that saw the study up to then has
 *     not seen (the dashboard's incremental refresh);
 *   - changeCounter(): a cheap "did anything change" signal where the backend has one.
 *
 * Write API: createStudy, setStudyState, setStudyOptions, importStudy (kt study copy).
 *
 * Coordination API (src/study/optimize.ts; many worker processes on one study):
 *   - withStudyLock(name, fn): runs fn inside one transaction holding the study's lock (SQLite:
 *     BEGIN IMMEDIATE; PostgreSQL: SELECT ... FOR UPDATE on the study row), so asks, claims and
 *     tells are serialized in one order that every worker can replay;
 *   - heartbeat / releaseLeases: a running trial carries its owner and the time of the owner's
 *     last heartbeat; a trial whose owner stopped beating for longer than the study's grace
 *     period is taken over (claim) and evaluated again once;
 *   - waitForChange: how a worker with nothing to do waits (PostgreSQL LISTEN/NOTIFY; SQLite
 *     backoff) instead of spinning on the database.
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

/** What one locked section of a study sees and may do (see withStudyLock): its writes commit with it. */
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
  /** The checkpoint of a finished trial, read in the section. */
  checkpoint(trialId: number): Promise<unknown>
  /** Whether the prelude's finished trial was recorded (undefined without one): see SectionPrelude. */
  readonly recorded?: boolean
}

/** A finished evaluation before its place in the tell order is known. */
type FinishedOutcome = Omit<FinishedTrial, 'tellSeq' | 'asksBefore'>

/**
 * What a locked section starts with: the trial this worker evaluated, recorded first (as
 * StudyTx.finish: only while it is running and leased to `owner`) as the study's next tell, its
 * tell_seq and asks_before assigned by the storage under the lock (the next tell number; every
 * trial asked so far); StudyTx.recorded says whether it was.
 */
export interface SectionPrelude {
  readonly finish?: {readonly trialId: number; readonly owner: string; readonly result: FinishedOutcome}
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
  listStudies(): Promise<StudySummary[]>
  getStudy(name: string): Promise<StudyRecord | undefined>
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
  changes(study: string, askCount: number, tellSeq: number): Promise<TrialRow[]>

  // ---- write API ----
  createStudy(record: Omit<StudyRecord, 'createdAt' | 'updatedAt' | 'state'>, now: string): Promise<StudyRecord>
  setStudyState(name: string, state: string, now: string): Promise<void>
  setStudyOptions(name: string, options: Record<string, unknown>, now: string): Promise<void>
  /** Writes a whole study (kt study copy) in one transaction; running trials arrive released. */
  importStudy(study: StudyRecord, trials: readonly TrialRow[]): Promise<void>

  // ---- coordination API ----
  withStudyLock<T>(study: string, fn: (tx: StudyTx) => Promise<T>, prelude?: SectionPrelude): Promise<T>
  /** Refreshes the heartbeat of every running trial `owner` holds in the study. */
  heartbeat(study: string, owner: string): Promise<void>
  /** Gives up `owner`'s running trials at once (clean stop), so another worker takes them without waiting. */
  releaseLeases(study: string, owner: string): Promise<void>
  /** Resolves when the study may have changed (a tell, a state change) since `changeMark` (from a StudyTx), or after timeoutMs. */
  waitForChange(study: string, timeoutMs: number, signal?: AbortSignal, changeMark?: number): Promise<void>

  /** Gets ready to coordinate on a study (PostgreSQL: the notification connection), so that a worker's first wait does not pay for it. */
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
  /** Time the study's lock was held by this process (ms): from its grant to the end of the commit. */
  readonly lockHeldMs: number
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
