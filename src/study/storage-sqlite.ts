/**
 * The embedded default study store: every trial of every study in one SQLite file
 * (better-sqlite3), written the moment the trial is asked (status running) and again the moment
 * it finishes, each in its own transaction. WAL journal with synchronous=NORMAL: a committed trial
 * survives a crash, kill -9 or Ctrl-C of the process (an operating-system crash may lose the last
 * commits, which resume then simply runs again).
 *
 * Locked sections are BEGIN IMMEDIATE transactions (the file's write lock, held by one process at
 * a time, released by the operating system if the process dies), so two processes on one study
 * get the same claims and leases as two PostgreSQL workers. SQLite has no notifications: a worker
 * with nothing to do waits with exponential backoff, and is woken at once by a change made in its
 * own process.
 */
import {createRequire} from 'node:module'
import {existsSync, statSync} from 'node:fs'
import {dirname, resolve} from 'node:path'
import type BetterSqlite3 from 'better-sqlite3'
import {InputError} from '../util/errors.js'
import {ensureDir} from '../util/fs.js'
import {READABLE_FORMAT_VERSIONS} from './model.js'
import {StorageUnavailableError, type OpenOptions} from './storage.js'
import {DIALECTS, SqlStudyStorage, type SqlConnection} from './storage-sql.js'
import {LocalWake, Mutex} from './sync.js'

/** Wait this long for another process's write lock before failing (ms). */
const BUSY_TIMEOUT_MS = 5000
/** First and largest backoff step of a waiting worker (ms): short waits first, at most 5 polls a second. */
const BACKOFF_START_MS = 2
const BACKOFF_MAX_MS = 200

/** Schema upgrades by the version they start from: 1 -> 2 the lease columns, 2 -> 3 the optimiser's replay hints (old rows keep NULL). */
const MIGRATIONS: Record<string, string> = {
  '1': `ALTER TABLE trials ADD COLUMN owner TEXT; ALTER TABLE trials ADD COLUMN heartbeat_ms REAL;
    ALTER TABLE trials ADD COLUMN attempts INTEGER NOT NULL DEFAULT 1;
    CREATE INDEX IF NOT EXISTS trials_tell ON trials (study, tell_seq);
    CREATE INDEX IF NOT EXISTS trials_running ON trials (study) WHERE status = 'running'`,
  '2': 'ALTER TABLE trials ADD COLUMN ask_hint TEXT',
}

/** SQLite result codes that mean "this file is not a (healthy) database". */
const CORRUPT_CODES = /^SQLITE_(NOTADB|CORRUPT|CANTOPEN)/

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

/** One-line error for a file SQLite cannot use; a write lock held by another process for all of busy_timeout is retried. */
function storageError(path: string, error: unknown): Error {
  const e = error as {code?: string; message?: string}
  if (typeof e?.code !== 'string' || !e.code.startsWith('SQLITE_')) return error as Error
  if (e.code === 'SQLITE_BUSY')
    return new StorageUnavailableError(path, 'the study file stayed locked by another process')
  if (CORRUPT_CODES.test(e.code))
    return new InputError(path, 'a kt study file (SQLite)', (e.message ?? e.code).split('\n')[0])
  return new InputError(path, 'a usable kt study file', `${e.code}: ${(e.message ?? '').split('\n')[0]}`)
}

export class SqliteStorage extends SqlStudyStorage {
  readonly kind = 'sqlite' as const
  protected readonly dialect = DIALECTS.sqlite
  protected readonly schemaNoun = 'a kt study file'
  private readonly mutex: Mutex
  private readonly wake = new LocalWake()
  private backoff = BACKOFF_START_MS
  private readonly connection: SqlConnection

  private constructor(
    readonly label: string,
    private readonly db: BetterSqlite3.Database,
  ) {
    super()
    this.mutex = mutexFor(label)
    this.connection = {
      query: async (sql, params = []) => {
        try {
          const statement = db.prepare(sql)
          if (statement.reader) return {rows: statement.all(...params) as Array<Record<string, unknown>>, changes: 0}
          return {rows: [], changes: statement.run(...params).changes}
        } catch (error) {
          throw storageError(label, error)
        }
      },
    }
  }

  /**
   * Opens (or, unless `mustExist`, creates) a study file. A file that is not SQLite, is damaged,
   * or is some other program's SQLite database is a one-line InputError; nothing is written to it.
   */
  static async open(path: string, options: OpenOptions = {}): Promise<SqliteStorage> {
    const memory = path === ':memory:'
    const exists = !memory && existsSync(path)
    // SQLite would say only "disk I/O error" (or "unable to open database file")
    if (exists && statSync(path).isDirectory()) throw new InputError(path, 'a study file (SQLite)', 'a folder')
    if (!exists && !memory && (options.mustExist || options.readonly))
      throw new InputError(
        path,
        `an existing kt study file (run kt search --storage ${path} ... first: it creates one)`,
        'no such file',
      )
    if (!exists && !memory) ensureDir(dirname(path))
    const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3
    let db: BetterSqlite3.Database
    try {
      db = new Database(path, {readonly: options.readonly ?? false, fileMustExist: exists})
    } catch (error) {
      throw storageError(path, error)
    }
    const storage = new SqliteStorage(path, db)
    try {
      await storage.init(options)
    } catch (error) {
      db.close()
      throw storageError(path, error)
    }
    return storage
  }

  private async init(options: OpenOptions): Promise<void> {
    const c = this.connection
    const names = new Set(
      (await c.query("SELECT name FROM sqlite_master WHERE type = 'table'")).rows.map((r) => String(r.name)),
    )
    const hasMeta = names.has('kt_meta')
    if (names.size > 0 && !hasMeta)
      throw new InputError(
        this.label,
        'a kt study file',
        `a SQLite database of another program (tables: ${[...names].slice(0, 3).join(', ')})`,
      )
    if (!hasMeta && (options.mustExist || options.readonly))
      throw new InputError(this.label, 'a kt study file', 'an empty SQLite database')
    const missing = ['studies', 'trials'].filter((t) => hasMeta && !names.has(t))
    if (missing.length > 0)
      throw new InputError(
        this.label,
        'a kt study file with studies and trials tables',
        `no table ${missing.join(' and no table ')} (a damaged study file)`,
      )
    if (!options.readonly)
      for (const pragma of ['journal_mode = WAL', 'synchronous = NORMAL', `busy_timeout = ${BUSY_TIMEOUT_MS}`])
        this.db.pragma(pragma)
    this.db.pragma('foreign_keys = ON')
    await this.checkOrInit(c, {...options, hasMeta}, {readable: READABLE_FORMAT_VERSIONS, migrations: MIGRATIONS})
  }

  protected use<T>(fn: (c: SqlConnection) => Promise<T>): Promise<T> {
    return this.mutex.run(() => fn(this.connection))
  }

  protected notifySql(): Array<[string, unknown[]]> {
    return []
  }

  protected changed(): void {
    this.backoff = BACKOFF_START_MS
    this.wake.fire()
  }

  protected changeMark(): number {
    return this.wake.generation
  }

  /** SQLite's data_version: changes when another connection commits to the file (not on this connection's own writes). */
  async changeCounter(): Promise<number | undefined> {
    return Number(this.db.pragma('data_version', {simple: true}))
  }

  async waitForChange(_study: string, timeoutMs: number, signal?: AbortSignal, changeMark?: number): Promise<void> {
    const step = Math.min(timeoutMs, this.backoff)
    this.backoff = Math.min(BACKOFF_MAX_MS, this.backoff * 2)
    await this.wake.wait(step, signal, changeMark)
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close()
  }
}
