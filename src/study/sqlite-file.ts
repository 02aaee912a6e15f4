/**
 * The SQLite study file behind storage-sqlite.ts: every trial of every study in one SQLite file (better-sqlite3 12), written the
 * moment the trial is asked (status running) and again the moment it finishes, each in its own
 * transaction. WAL journal with synchronous=NORMAL: a committed trial survives a crash, kill -9 or
 * Ctrl-C of the process (an operating-system crash may lose the last commits, which resume then
 * simply runs again).
 *
 * A study also records the order in which results were told to the optimiser (tell_seq, and how
 * many trials had been asked by then), so resume can replay the optimiser exactly.
 */
import {createRequire} from 'node:module'
import {existsSync, statSync} from 'node:fs'
import type BetterSqlite3 from 'better-sqlite3'
import {InputError} from '../util/errors.js'
import {ensureDir} from '../util/fs.js'
import {dirname} from 'node:path'
import {
  finishParams,
  hintJson,
  IMPORT_COLUMNS,
  importParams,
  parseJsonField,
  READABLE_FORMAT_VERSIONS,
  STUDY_FORMAT,
  STUDY_FORMAT_VERSION,
  studyFromRow,
  trialColumnsOf,
  trialFromRow,
  TRIAL_COLUMNS_NO_CHECKPOINT,
  type FinishedTrial,
  type StudyRecord,
  type TrialRow,
} from './model.js'
import {StorageUnavailableError} from './storage.js'

/** Wait this long for another process's write lock before failing (ms). */
const BUSY_TIMEOUT_MS = 5000

const SCHEMA = `
CREATE TABLE IF NOT EXISTS kt_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS studies (
  name TEXT PRIMARY KEY,
  objective TEXT NOT NULL,
  optimizer TEXT NOT NULL,
  options TEXT NOT NULL,
  seed INTEGER NOT NULL,
  space TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  state TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS trials (
  study TEXT NOT NULL REFERENCES studies(name) ON DELETE CASCADE,
  id INTEGER NOT NULL,
  config_id TEXT NOT NULL,
  config TEXT NOT NULL,
  budget REAL NOT NULL,
  continues INTEGER,
  info TEXT,
  status TEXT NOT NULL CHECK (status IN ('running', 'ok', 'failed')),
  loss REAL,
  objective_values TEXT,
  metrics TEXT,
  checkpoint TEXT,
  error TEXT,
  tell_seq INTEGER,
  asks_before INTEGER,
  started_at TEXT,
  finished_at TEXT,
  duration_ms REAL,
  worker INTEGER,
  owner TEXT,
  heartbeat_ms REAL,
  attempts INTEGER NOT NULL DEFAULT 1,
  ask_hint TEXT,
  PRIMARY KEY (study, id)
);
CREATE INDEX IF NOT EXISTS trials_tell ON trials (study, tell_seq);
CREATE INDEX IF NOT EXISTS trials_running ON trials (study) WHERE status = 'running';
`

/** Version 1 -> 2: the lease columns. */
const MIGRATE_1_TO_2 = `
ALTER TABLE trials ADD COLUMN owner TEXT;
ALTER TABLE trials ADD COLUMN heartbeat_ms REAL;
ALTER TABLE trials ADD COLUMN attempts INTEGER NOT NULL DEFAULT 1;
CREATE INDEX IF NOT EXISTS trials_tell ON trials (study, tell_seq);
CREATE INDEX IF NOT EXISTS trials_running ON trials (study) WHERE status = 'running';
`

/** Version 2 -> 3: the optimiser's replay hint of each trial (old rows keep NULL and replay by re-asking). */
const MIGRATE_2_TO_3 = `ALTER TABLE trials ADD COLUMN ask_hint TEXT;`

/** SQLite result codes that mean "this file is not a (healthy) database". */
const CORRUPT_CODES = new Set(['SQLITE_NOTADB', 'SQLITE_CORRUPT', 'SQLITE_CORRUPT_VTAB', 'SQLITE_CANTOPEN'])

type Db = BetterSqlite3.Database

export class SqliteStudyFile {
  private constructor(
    readonly path: string,
    private readonly db: Db,
  ) {}

  /**
   * Opens (or, unless `mustExist`, creates) a study file. A file that is not SQLite, is damaged,
   * or is some other program's SQLite database is a one-line InputError; nothing is written to it.
   */
  static open(path: string, options: {mustExist?: boolean; readonly?: boolean} = {}): SqliteStudyFile {
    const exists = path !== ':memory:' && existsSync(path)
    // SQLite would say only "disk I/O error" (or "unable to open database file")
    if (exists && statSync(path).isDirectory()) throw new InputError(path, 'a study file (SQLite)', 'a folder')
    if (!exists && (options.mustExist || options.readonly) && path !== ':memory:')
      throw new InputError(
        path,
        `an existing kt study file (run kt search --storage ${path} ... first: it creates one)`,
        'no such file',
      )
    if (!exists && path !== ':memory:') ensureDir(dirname(path))
    const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3
    let db: Db
    try {
      db = new Database(path, {readonly: options.readonly ?? false, fileMustExist: exists})
    } catch (error) {
      throw storageError(path, error)
    }
    const store = new SqliteStudyFile(path, db)
    try {
      store.checkOrInit(options.readonly ?? false)
    } catch (error) {
      db.close()
      throw error instanceof InputError ? error : storageError(path, error)
    }
    return store
  }

  private checkOrInit(readonly: boolean): void {
    const tables = this.guard(
      () => this.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {name: string}[],
    )
    const names = new Set(tables.map((t) => t.name))
    if (names.size > 0 && !names.has('kt_meta'))
      throw new InputError(
        this.path,
        'a kt study file',
        `a SQLite database of another program (tables: ${[...names].slice(0, 3).join(', ')})`,
      )
    if (names.has('kt_meta')) {
      const meta = new Map(
        (
          this.guard(() => this.db.prepare('SELECT key, value FROM kt_meta').all()) as {key: string; value: string}[]
        ).map((r) => [r.key, r.value]),
      )
      if (meta.get('format') !== STUDY_FORMAT)
        throw new InputError(
          this.path,
          `a kt study file (format ${STUDY_FORMAT})`,
          `format ${meta.get('format') ?? 'none'}`,
        )
      const version = meta.get('version') ?? 'none'
      if (!READABLE_FORMAT_VERSIONS.includes(version))
        throw new InputError(
          this.path,
          `study format version ${STUDY_FORMAT_VERSION} (this kt reads ${READABLE_FORMAT_VERSIONS.join(', ')})`,
          `version ${version} (another kt version's schema)`,
        )
      const missing = ['studies', 'trials'].filter((t) => !names.has(t))
      if (missing.length > 0)
        throw new InputError(
          this.path,
          'a kt study file with studies and trials tables',
          `no table ${missing.join(' and no table ')} (a damaged study file)`,
        )
      this.version = version
    }
    this.columns = trialColumnsOf(this.version)
    if (readonly) return
    this.guard(() => {
      this.db.pragma('journal_mode = WAL')
      this.db.pragma('synchronous = NORMAL')
      this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`)
      this.db.pragma('foreign_keys = ON')
      if (names.size === 0) {
        this.db
          .transaction(() => {
            this.db.exec(SCHEMA)
            // OR IGNORE: two processes may create the same new file at once
            const put = this.db.prepare('INSERT OR IGNORE INTO kt_meta (key, value) VALUES (?, ?)')
            put.run('format', STUDY_FORMAT)
            put.run('version', STUDY_FORMAT_VERSION)
          })
          .immediate()
        this.version = STUDY_FORMAT_VERSION
      } else if (this.version !== STUDY_FORMAT_VERSION) {
        this.db
          .transaction(() => {
            // re-read under the write lock: another process may have upgraded it meanwhile
            const now = (
              this.db.prepare("SELECT value FROM kt_meta WHERE key = 'version'").get() as {value: string} | undefined
            )?.value
            if (now === '1') this.db.exec(MIGRATE_1_TO_2)
            if (now === '1' || now === '2') this.db.exec(MIGRATE_2_TO_3)
            this.db.prepare("UPDATE kt_meta SET value = ? WHERE key = 'version'").run(STUDY_FORMAT_VERSION)
          })
          .immediate()
        this.version = STUDY_FORMAT_VERSION
      }
    })
    this.columns = trialColumnsOf(this.version)
  }

  /** The trial columns read without the checkpoint, as the open file's version has them. */
  private columns = TRIAL_COLUMNS_NO_CHECKPOINT

  /** The schema version of the open file. */
  version = STUDY_FORMAT_VERSION

  /** Runs a database call, turning "not a database" and corruption into one-line InputErrors. */
  private guard<T>(fn: () => T): T {
    try {
      return fn()
    } catch (error) {
      throw storageError(this.path, error)
    }
  }

  close(): void {
    if (this.db.open) this.db.close()
  }

  createStudy(record: Omit<StudyRecord, 'createdAt' | 'updatedAt' | 'state'>, now: string): StudyRecord {
    if (this.getStudy(record.name))
      throw new InputError(
        `${this.path}: study ${record.name}`,
        'a new study name (use --resume to continue it)',
        'an existing study',
      )
    const full: StudyRecord = {...record, createdAt: now, updatedAt: now, state: 'running'}
    this.guard(() =>
      this.db
        .prepare(
          'INSERT INTO studies (name, objective, optimizer, options, seed, space, created_at, updated_at, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
        )
        .run(
          full.name,
          JSON.stringify(full.objective),
          full.optimizer,
          JSON.stringify(full.options),
          full.seed,
          JSON.stringify(full.space),
          now,
          now,
          full.state,
        ),
    )
    return full
  }

  getStudy(name: string): StudyRecord | undefined {
    const row = this.guard(() => this.db.prepare('SELECT * FROM studies WHERE name = ?').get(name)) as
      Record<string, unknown> | undefined
    return row ? studyFromRow(this.path, row) : undefined
  }

  listStudies(): Array<
    StudyRecord & {trials: number; ok: number; failed: number; running: number; bestLoss: number | null}
  > {
    const rows = this.guard(() =>
      this.db
        .prepare(
          `SELECT s.*, COUNT(t.id) AS trials,
             SUM(t.status = 'ok') AS ok, SUM(t.status = 'failed') AS failed, SUM(t.status = 'running') AS running,
             MIN(CASE WHEN t.status = 'ok' THEN t.loss END) AS best_loss
           FROM studies s LEFT JOIN trials t ON t.study = s.name GROUP BY s.name ORDER BY s.created_at, s.name`,
        )
        .all(),
    ) as Record<string, unknown>[]
    return rows.map((r) => ({
      ...studyFromRow(this.path, r),
      trials: Number(r.trials ?? 0),
      ok: Number(r.ok ?? 0),
      failed: Number(r.failed ?? 0),
      running: Number(r.running ?? 0),
      bestLoss: r.best_loss === null || r.best_loss === undefined ? null : Number(r.best_loss),
    }))
  }

  setStudyState(name: string, state: string, now: string): void {
    this.guard(() =>
      this.db.prepare('UPDATE studies SET state = ?, updated_at = ? WHERE name = ?').run(state, now, name),
    )
  }

  /** Updates the options a study continues with (e.g. a larger trial limit on resume). */
  setStudyOptions(name: string, options: Record<string, unknown>, now: string): void {
    this.guard(() =>
      this.db
        .prepare('UPDATE studies SET options = ?, updated_at = ? WHERE name = ?')
        .run(JSON.stringify(options), now, name),
    )
  }

  /** Records an asked trial (status running) — or leaves an existing row of a resumed study alone. */
  recordAsk(
    study: string,
    trial: {
      id: number
      configId: string
      config: Record<string, unknown>
      budget: number
      continues?: {trialId: number}
      info?: Record<string, unknown>
    },
    startedAt: string,
  ): void {
    this.guard(() =>
      this.db
        .prepare(
          `INSERT INTO trials (study, id, config_id, config, budget, continues, info, status, started_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?)
           ON CONFLICT (study, id) DO UPDATE SET started_at = excluded.started_at WHERE trials.status = 'running'`,
        )
        .run(
          study,
          trial.id,
          trial.configId,
          JSON.stringify(trial.config),
          trial.budget,
          trial.continues?.trialId ?? null,
          trial.info ? JSON.stringify(trial.info) : null,
          startedAt,
        ),
    )
  }

  /**
   * Records a finished trial. Only a running trial can finish, so a trial is never finished twice;
   * returns false if it was already finished.
   */
  recordResult(study: string, trialId: number, r: FinishedTrial): boolean {
    const info = this.guard(() =>
      this.db
        .prepare(
          `UPDATE trials SET status = ?, loss = ?, objective_values = ?, metrics = ?, checkpoint = ?, error = ?,
             tell_seq = ?, asks_before = ?, started_at = ?, finished_at = ?, duration_ms = ?, worker = ?
           WHERE study = ? AND id = ? AND status = 'running'`,
        )
        .run(...finishParams(r), study, trialId),
    )
    return info.changes === 1
  }

  // ---- coordination (sync; SqliteStorage wraps them) ----

  /** Runs fn inside BEGIN IMMEDIATE: the write lock of the whole file, so one study's asks, claims and tells are serialized. */
  begin(): void {
    try {
      this.db.exec('BEGIN IMMEDIATE')
    } catch (error) {
      // another process held the write lock for all of busy_timeout: the worker retries with backoff
      if ((error as {code?: string}).code === 'SQLITE_BUSY')
        throw new StorageUnavailableError(this.path, 'the study file stayed locked by another process')
      throw storageError(this.path, error)
    }
  }

  commit(): void {
    this.guard(() => this.db.exec('COMMIT'))
  }

  rollback(): void {
    if (this.db.inTransaction) this.db.exec('ROLLBACK')
  }

  /** Trials a replica has not seen: id >= askCount or tell_seq >= tellSeq, by id, without checkpoints. */
  changes(study: string, askCount: number, tellSeq: number): TrialRow[] {
    const rows = this.guard(() =>
      this.db
        .prepare(`SELECT ${this.columns} FROM trials WHERE study = ? AND (id >= ? OR tell_seq >= ?) ORDER BY id`)
        .all(study, askCount, tellSeq),
    ) as Record<string, unknown>[]
    return rows.map((r) => trialFromRow(this.path, r))
  }

  /** The next tell's place in the order: one past the last tell_seq, and every trial asked so far (ids are 0, 1, 2, ...). */
  nextTellPosition(study: string): {tellSeq: number; asksBefore: number} {
    const row = this.guard(() =>
      this.db.prepare('SELECT MAX(tell_seq) AS seq, MAX(id) AS id FROM trials WHERE study = ?').get(study),
    ) as {seq: number | null; id: number | null}
    return {tellSeq: row.seq === null ? 0 : Number(row.seq) + 1, asksBefore: row.id === null ? 0 : Number(row.id) + 1}
  }

  leases(study: string): Array<{id: number; owner: string | null; heartbeatMs: number | null; attempts: number}> {
    const rows = this.guard(() =>
      this.db
        .prepare(
          "SELECT id, owner, heartbeat_ms, attempts FROM trials WHERE study = ? AND status = 'running' ORDER BY id",
        )
        .all(study),
    ) as Record<string, unknown>[]
    return rows.map((r) => ({
      id: Number(r.id),
      owner: r.owner === null ? null : String(r.owner),
      heartbeatMs: r.heartbeat_ms === null ? null : Number(r.heartbeat_ms),
      attempts: Number(r.attempts ?? 1),
    }))
  }

  insertTrial(
    study: string,
    trial: {
      id: number
      configId: string
      config: Record<string, unknown>
      budget: number
      continues?: {trialId: number}
      info?: Record<string, unknown>
      askHint?: unknown
    },
    owner: string,
    startedAt: string,
    nowMs: number,
  ): void {
    this.guard(() =>
      this.db
        .prepare(
          `INSERT INTO trials (study, id, config_id, config, budget, continues, info, status, started_at, owner, heartbeat_ms, attempts, ask_hint)
           VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, 1, ?)`,
        )
        .run(
          study,
          trial.id,
          trial.configId,
          JSON.stringify(trial.config),
          trial.budget,
          trial.continues?.trialId ?? null,
          trial.info ? JSON.stringify(trial.info) : null,
          startedAt,
          owner,
          nowMs,
          hintJson(trial.askHint),
        ),
    )
  }

  claim(study: string, trialId: number, owner: string, startedAt: string, nowMs: number): void {
    this.guard(() =>
      this.db
        .prepare(
          "UPDATE trials SET owner = ?, heartbeat_ms = ?, attempts = attempts + 1, started_at = ? WHERE study = ? AND id = ? AND status = 'running'",
        )
        .run(owner, nowMs, startedAt, study, trialId),
    )
  }

  /** Finishes a running trial leased to owner (one statement); false if it is not (taken over, finished). */
  finish(study: string, trialId: number, owner: string, r: FinishedTrial): boolean {
    const info = this.guard(() =>
      this.db
        .prepare(
          `UPDATE trials SET status = ?, loss = ?, objective_values = ?, metrics = ?, checkpoint = ?, error = ?,
             tell_seq = ?, asks_before = ?, started_at = ?, finished_at = ?, duration_ms = ?, worker = ?, heartbeat_ms = NULL
           WHERE study = ? AND id = ? AND status = 'running' AND owner = ?`,
        )
        .run(...finishParams(r), study, trialId, owner),
    )
    return info.changes === 1
  }

  heartbeat(study: string, owner: string, nowMs: number): void {
    this.guard(() =>
      this.db
        .prepare("UPDATE trials SET heartbeat_ms = ? WHERE study = ? AND owner = ? AND status = 'running'")
        .run(nowMs, study, owner),
    )
  }

  releaseLeases(study: string, owner: string): void {
    this.guard(() =>
      this.db
        .prepare(
          "UPDATE trials SET owner = NULL, heartbeat_ms = NULL WHERE study = ? AND owner = ? AND status = 'running'",
        )
        .run(study, owner),
    )
  }

  /** Writes a whole study and its trials in one transaction (kt study copy); running trials arrive released. */
  importStudy(study: StudyRecord, trials: readonly TrialRow[]): void {
    if (this.getStudy(study.name))
      throw new InputError(
        `${this.path}: study ${study.name}`,
        'a study name not yet in the target storage',
        'an existing study',
      )
    this.guard(() =>
      this.db
        .transaction(() => {
          this.db
            .prepare(
              'INSERT INTO studies (name, objective, optimizer, options, seed, space, created_at, updated_at, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
            )
            .run(
              study.name,
              JSON.stringify(study.objective),
              study.optimizer,
              JSON.stringify(study.options),
              study.seed,
              JSON.stringify(study.space),
              study.createdAt,
              study.updatedAt,
              study.state,
            )
          const put = this.db.prepare(
            `INSERT INTO trials (${IMPORT_COLUMNS.join(', ')}) VALUES (${IMPORT_COLUMNS.map(() => '?').join(', ')})`,
          )
          for (const t of trials) put.run(...importParams(study.name, t))
        })
        .immediate(),
    )
  }

  /** Up to `limit` trials with id > afterId, by id, without checkpoints (StudyStorage.trialPage). */
  trialPage(study: string, afterId: number, limit: number): TrialRow[] {
    const rows = this.guard(() =>
      this.db
        .prepare(`SELECT ${this.columns} FROM trials WHERE study = ? AND id > ? ORDER BY id LIMIT ?`)
        .all(study, afterId, limit),
    ) as Record<string, unknown>[]
    return rows.map((r) => trialFromRow(this.path, r))
  }

  trials(study: string): TrialRow[] {
    const rows = this.guard(() =>
      this.db.prepare('SELECT * FROM trials WHERE study = ? ORDER BY id').all(study),
    ) as Record<string, unknown>[]
    return rows.map((r) => trialFromRow(this.path, r))
  }

  /**
   * Trials asked since askCount, finished since tellSeq, or among `ids` (the ones the caller saw
   * running), by id, without checkpoints, and the study's trial count (see StudyStorage.trialsSince).
   * Index lookups in one read transaction: one OR over the three scans every row of the study (its JSON too).
   */
  trialsSince(
    study: string,
    askCount: number,
    tellSeq: number,
    ids: readonly number[],
  ): {trials: TrialRow[]; total: number} {
    let total = 0
    const rows = this.guard(() =>
      this.db.transaction(() => {
        total = Number(
          (this.db.prepare('SELECT COUNT(*) AS n FROM trials WHERE study = ?').get(study) as {n: number}).n,
        )
        const byId = new Map<number, Record<string, unknown>>()
        const add = (list: unknown[]) => {
          for (const r of list as Record<string, unknown>[]) byId.set(Number(r.id), r)
        }
        add(this.db.prepare(`SELECT ${this.columns} FROM trials WHERE study = ? AND id >= ?`).all(study, askCount))
        add(this.db.prepare(`SELECT ${this.columns} FROM trials WHERE study = ? AND tell_seq >= ?`).all(study, tellSeq))
        if (ids.length > 0)
          add(
            this.db
              .prepare(`SELECT ${this.columns} FROM trials WHERE study = ? AND id IN (SELECT value FROM json_each(?))`)
              .all(study, JSON.stringify(ids)),
          )
        return [...byId.values()].sort((a, b) => Number(a.id) - Number(b.id))
      })(),
    )
    return {trials: rows.map((r) => trialFromRow(this.path, r)), total}
  }

  /** SQLite's data_version: changes when another connection commits to the file (not on this connection's own writes). */
  dataVersion(): number {
    return Number(this.guard(() => this.db.pragma('data_version', {simple: true})))
  }

  trialCheckpoint(study: string, trialId: number): unknown {
    const row = this.guard(() =>
      this.db.prepare("SELECT checkpoint FROM trials WHERE study = ? AND id = ? AND status = 'ok'").get(study, trialId),
    ) as {checkpoint: string | null} | undefined
    return row?.checkpoint ? parseJsonField(this.path, row.checkpoint, `trial ${trialId} checkpoint`) : undefined
  }
}

/** One-line error for a file SQLite cannot use. */
function storageError(path: string, error: unknown): Error {
  const e = error as {code?: string; message?: string}
  if (
    e &&
    typeof e.code === 'string' &&
    (CORRUPT_CODES.has(e.code) || e.code.startsWith('SQLITE_CORRUPT') || e.code.startsWith('SQLITE_NOTADB'))
  )
    return new InputError(path, 'a kt study file (SQLite)', (e.message ?? e.code).split('\n')[0])
  if (e && typeof e.code === 'string' && e.code.startsWith('SQLITE_'))
    return new InputError(path, 'a usable kt study file', `${e.code}: ${(e.message ?? '').split('\n')[0]}`)
  return error as Error
}
