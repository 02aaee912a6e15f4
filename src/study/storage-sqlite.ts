/**
 * The embedded default behind the StudyStorage interface: the SQLite study file of sqlite-file.ts.
 * Locked sections are BEGIN IMMEDIATE transactions (the file's write lock, held by one process at
 * a time, released by the operating system if the process dies), so two processes on one study
 * get the same claims and leases as two PostgreSQL workers. SQLite has no notifications: a worker
 * with nothing to do waits with exponential backoff (2 ms doubling to 200 ms), and is woken at once
 * by a change made in its own process.
 */
import {resolve} from 'node:path'
import {SqliteStudyFile} from './sqlite-file.js'
import type {FinishedTrial, StudyRecord, TrialRow} from './model.js'
import type {Lease, NewTrial, OpenOptions, SectionPrelude, StudyStorage, StudySummary, StudyTx} from './storage.js'
import {LocalWake, Mutex} from './sync.js'
import {checkStudyName} from './name.js'

/** First and largest backoff step of a waiting worker (ms): short waits first, at most 5 polls a second. */
const BACKOFF_START_MS = 2
const BACKOFF_MAX_MS = 200

/**
 * One mutex per file in this process: two connections to one file in one thread must not
 * interleave their transactions (the second BEGIN IMMEDIATE would block the thread in
 * busy_timeout while the first waits for that thread).
 */
const fileMutexes = new Map<string, Mutex>()

function mutexFor(path: string): Mutex {
  if (path === ':memory:') return new Mutex()
  const key = resolve(path)
  let m = fileMutexes.get(key)
  if (!m) fileMutexes.set(key, (m = new Mutex()))
  return m
}

export class SqliteStorage implements StudyStorage {
  readonly kind = 'sqlite' as const
  private readonly mutex: Mutex
  private readonly wake = new LocalWake()
  private backoff = BACKOFF_START_MS

  private constructor(readonly store: SqliteStudyFile) {
    this.mutex = mutexFor(store.path)
  }

  static async open(path: string, options: OpenOptions = {}): Promise<SqliteStorage> {
    return new SqliteStorage(SqliteStudyFile.open(path, options))
  }

  get label(): string {
    return this.store.path
  }

  async listStudies(): Promise<StudySummary[]> {
    return this.store.listStudies()
  }

  async getStudy(name: string): Promise<StudyRecord | undefined> {
    return this.store.getStudy(checkStudyName(name, `${this.label}: study`))
  }

  async trials(study: string): Promise<TrialRow[]> {
    return this.store.trials(study)
  }

  async trialPage(study: string, afterId: number, limit: number): Promise<TrialRow[]> {
    return this.store.trialPage(study, afterId, limit)
  }

  async trialsSince(
    study: string,
    askCount: number,
    tellSeq: number,
    ids: readonly number[],
  ): Promise<{trials: TrialRow[]; total: number}> {
    return this.store.trialsSince(study, askCount, tellSeq, ids)
  }

  async changeCounter(): Promise<number | undefined> {
    return this.store.dataVersion()
  }

  async trialCheckpoint(study: string, trialId: number): Promise<unknown> {
    return this.store.trialCheckpoint(study, trialId)
  }

  async createStudy(record: Omit<StudyRecord, 'createdAt' | 'updatedAt' | 'state'>, now: string): Promise<StudyRecord> {
    checkStudyName(record.name, `${this.label}: study`)
    return this.mutex.run(async () => this.store.createStudy(record, now))
  }

  async setStudyState(name: string, state: string, now: string): Promise<void> {
    await this.mutex.run(async () => this.store.setStudyState(name, state, now))
  }

  async setStudyOptions(name: string, options: Record<string, unknown>, now: string): Promise<void> {
    await this.mutex.run(async () => this.store.setStudyOptions(name, options, now))
  }

  async importStudy(study: StudyRecord, trials: readonly TrialRow[]): Promise<void> {
    checkStudyName(study.name, `${this.label}: study`)
    await this.mutex.run(async () => this.store.importStudy(study, trials))
  }

  async changes(study: string, askCount: number, tellSeq: number): Promise<TrialRow[]> {
    return this.mutex.run(async () => this.store.changes(study, askCount, tellSeq))
  }

  /** The commit is synchronous here: there is nothing to overlap, so `committing` is never called. */
  async withStudyLock<T>(study: string, fn: (tx: StudyTx) => Promise<T>, prelude?: SectionPrelude): Promise<T> {
    return this.mutex.run(async () => {
      const store = this.store
      const changeMark = this.wake.generation
      store.begin()
      let notify = false
      try {
        const record = store.getStudy(study)
        const nowMs = Date.now()
        let recorded: boolean | undefined
        if (prelude?.finish) {
          const {trialId, owner, result} = prelude.finish
          recorded = store.finish(study, trialId, owner, {...result, ...store.nextTellPosition(study)})
          notify ||= recorded
        }
        const tx: StudyTx = {
          recorded,
          nowMs,
          changeMark,
          state: record?.state ?? 'missing',
          changes: async (askCount, tellSeq) => store.changes(study, askCount, tellSeq),
          leases: async (): Promise<Lease[]> => store.leases(study),
          insertTrial: async (trial: NewTrial, owner, startedAt) =>
            store.insertTrial(study, trial, owner, startedAt, nowMs),
          claim: async (trialId, owner, startedAt) => store.claim(study, trialId, owner, startedAt, nowMs),
          finish: async (trialId, owner, result: FinishedTrial) => store.finish(study, trialId, owner, result),
          setState: async (state, now) => store.setStudyState(study, state, now),
          checkpointAfterCommit: async (trialId) => store.trialCheckpoint(study, trialId),
          notify: async () => {
            notify = true
          },
        }
        const out = await fn(tx)
        store.commit()
        if (notify) {
          this.backoff = BACKOFF_START_MS
          this.wake.fire()
        }
        return out
      } catch (error) {
        store.rollback()
        throw error
      }
    })
  }

  async heartbeat(study: string, owner: string): Promise<void> {
    await this.mutex.run(async () => this.store.heartbeat(study, owner, Date.now()))
  }

  async releaseLeases(study: string, owner: string): Promise<void> {
    await this.mutex.run(async () => this.store.releaseLeases(study, owner))
    this.wake.fire()
  }

  async waitForChange(_study: string, timeoutMs: number, signal?: AbortSignal, changeMark?: number): Promise<void> {
    const step = Math.min(timeoutMs, this.backoff)
    this.backoff = Math.min(BACKOFF_MAX_MS, this.backoff * 2)
    await this.wake.wait(step, signal, changeMark)
  }

  async close(): Promise<void> {
    this.store.close()
  }
}
