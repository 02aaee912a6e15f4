/**
 * The read side of a study store, as the dashboard needs it: list the studies, get one study with
 * its trials, and a cheap "what changed" signature to poll. Asynchronous so that a server-backed
 * store (PostgreSQL) fits the same shape; the SQLite implementation below reads through StudyStore
 * (same validation, same one-line errors) plus a second read-only connection for the signature.
 */
import {createRequire} from 'node:module'
import {existsSync} from 'node:fs'
import type BetterSqlite3 from 'better-sqlite3'
import {InputError} from '../util/errors.js'
import {StudyStore, type StudyRecord, type TrialRow} from './store.js'

export interface StudySummary {
  readonly name: string
  readonly objective: unknown
  readonly optimizer: string
  readonly seed: number
  readonly state: string
  readonly trials: number
  readonly ok: number
  readonly failed: number
  readonly running: number
  readonly createdAt: string
  /** The latest of the study's update time and its trials' start and finish times. */
  readonly lastActivity: string
}

export interface StudyReader {
  /** Where the studies are (a file path or a URL without its password). */
  readonly location: string
  listStudies(): Promise<StudySummary[]>
  getStudy(name: string): Promise<{study: StudyRecord; trials: TrialRow[]} | undefined>
  /**
   * Per study, a string that changes whenever the study or any of its trials does (a trial asked,
   * finished, a state change). Cheap: one aggregate query, and none at all while nothing was
   * committed since the last call.
   */
  versions(): Promise<Record<string, string>>
  close(): Promise<void>
}

type Db = BetterSqlite3.Database

export class SqliteStudyReader implements StudyReader {
  private cached: Record<string, string> | undefined
  private dataVersion = -1

  private constructor(
    readonly location: string,
    private readonly store: StudyStore,
    private readonly db: Db,
  ) {}

  /** Opens an existing study file read-only; a missing or foreign file is a one-line InputError. */
  static open(path: string): SqliteStudyReader {
    if (!existsSync(path)) throw new InputError(path, 'an existing kt study file', 'no such file')
    const store = StudyStore.open(path, {readonly: true})
    const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3
    const db = new Database(path, {readonly: true, fileMustExist: true})
    return new SqliteStudyReader(path, store, db)
  }

  async listStudies(): Promise<StudySummary[]> {
    const activity = this.activity()
    return this.store.listStudies().map((s) => ({
      name: s.name, objective: s.objective, optimizer: s.optimizer, seed: s.seed, state: s.state,
      trials: s.trials, ok: s.ok, failed: s.failed, running: s.running, createdAt: s.createdAt,
      lastActivity: maxIso(s.updatedAt, activity.get(s.name)?.last ?? null),
    }))
  }

  async getStudy(name: string): Promise<{study: StudyRecord; trials: TrialRow[]} | undefined> {
    const study = this.store.getStudy(name)
    return study ? {study, trials: this.store.trials(name)} : undefined
  }

  async versions(): Promise<Record<string, string>> {
    // PRAGMA data_version changes when another connection commits: skip the query otherwise
    const dv = Number(this.db.pragma('data_version', {simple: true}))
    if (this.cached && dv === this.dataVersion) return this.cached
    const studies = this.db.prepare('SELECT name, updated_at, state FROM studies').all() as Array<{name: string; updated_at: string; state: string}>
    const activity = this.activity()
    this.cached = Object.fromEntries(studies.map((s) => {
      const a = activity.get(s.name)
      return [s.name, `${s.state}|${s.updated_at}|${a?.trials ?? 0}|${a?.finished ?? 0}|${a?.last ?? ''}`]
    }))
    this.dataVersion = dv
    return this.cached
  }

  private activity(): Map<string, {trials: number; finished: number; last: string | null}> {
    const rows = this.db
      .prepare(`SELECT study, COUNT(*) AS trials, SUM(status != 'running') AS finished,
                  MAX(MAX(COALESCE(finished_at, ''), COALESCE(started_at, ''))) AS last
                FROM trials GROUP BY study`)
      .all() as Array<{study: string; trials: number; finished: number; last: string | null}>
    return new Map(rows.map((r) => [r.study, {trials: Number(r.trials), finished: Number(r.finished ?? 0), last: r.last || null}]))
  }

  async close(): Promise<void> {
    this.store.close()
    if (this.db.open) this.db.close()
  }
}

function maxIso(a: string, b: string | null): string {
  return b !== null && b > a ? b : a
}

/** The reader over a PostgreSQL study database (src/study/postgres.ts), read-only. */
export class PostgresStudyReader implements StudyReader {
  private constructor(private readonly storage: import('./postgres.js').PostgresStorage) {}

  static async open(url: string): Promise<PostgresStudyReader> {
    const {PostgresStorage} = await import('./postgres.js')
    return new PostgresStudyReader(await PostgresStorage.open(url, {readonly: true}))
  }

  get location(): string {
    return this.storage.label
  }

  async listStudies(): Promise<StudySummary[]> {
    const activity = new Map((await this.storage.activity()).map((a) => [a.name, a]))
    return (await this.storage.listStudies()).map((s) => ({
      name: s.name, objective: s.objective, optimizer: s.optimizer, seed: s.seed, state: s.state,
      trials: s.trials, ok: s.ok, failed: s.failed, running: s.running, createdAt: s.createdAt,
      lastActivity: maxIso(s.updatedAt, activity.get(s.name)?.last ?? null),
    }))
  }

  async getStudy(name: string): Promise<{study: StudyRecord; trials: TrialRow[]} | undefined> {
    const study = await this.storage.getStudy(name)
    return study ? {study, trials: await this.storage.trials(name)} : undefined
  }

  async versions(): Promise<Record<string, string>> {
    return Object.fromEntries((await this.storage.activity()).map((a) => [a.name, `${a.state}|${a.updatedAt}|${a.trials}|${a.finished}|${a.last ?? ''}`]))
  }

  async close(): Promise<void> {
    await this.storage.close()
  }
}

/** Opens the reader for a --storage value: a SQLite file path or a postgresql:// URL. */
export async function openStudyReader(storage: string): Promise<StudyReader> {
  if (/^postgres(ql)?:\/\//i.test(storage)) return PostgresStudyReader.open(storage)
  return SqliteStudyReader.open(storage)
}
