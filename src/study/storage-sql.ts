/**
 * The study store's SQL, shared by both backends (storage-sqlite.ts, storage-postgres.ts): the
 * schema, every read and write of the StudyStorage interface, and the locked section. A backend
 * supplies a connection that runs one parameterised statement per call (`?` placeholders), its
 * dialect (table prefix, column types, how a section takes the study's lock, the clock), and how
 * its waiting workers are woken.
 *
 * A locked section is one transaction holding the study's lock (SQLite: BEGIN IMMEDIATE, the
 * file's write lock; PostgreSQL: the study row FOR UPDATE), one round trip per statement: every
 * ask, claim and tell of a study is serialized in one order, and a killed worker's transaction is
 * rolled back and its lock released (by the operating system, or the server).
 */
import {InputError} from '../util/errors.js'
import {
  finishParams,
  hintJson,
  IMPORT_COLUMNS,
  importParams,
  parseJsonField,
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
import type {
  CoordinationStats,
  Lease,
  OpenOptions,
  SectionPrelude,
  SessionCheck,
  StudyStorage,
  StudySummary,
  StudyTx,
} from './storage.js'
import {checkStudyName} from './name.js'

type Row = Record<string, unknown>

/** One connection: runs one statement with `?` placeholders; `changes` counts the rows a write touched. */
export interface SqlConnection {
  query(sql: string, params?: readonly unknown[]): Promise<{rows: Row[]; changes: number}>
}

/** Where the two SQL dialects differ. */
export interface SqlDialect {
  /** Prefix of the studies and trials tables and their indexes ('' in a SQLite file, 'kt_' in a shared database). */
  readonly prefix: string
  readonly types: {readonly real: string; readonly int: string; readonly seed: string}
  /** Starts a transaction that writes (SQLite takes the file's write lock here). */
  readonly begin: string
  /** Appended to the select of the study row that takes a section's lock. */
  readonly forUpdate: string
  /** The clock in ms since the epoch, as an SQL expression (PostgreSQL: the server's, so machines agree). */
  readonly nowMs: string
  /** A subquery of the integers of one JSON array parameter. */
  readonly jsonIds: string
}

/** The two dialects: a SQLite file holds one user's studies; a shared PostgreSQL database prefixes kt's tables. */
export const DIALECTS: Record<'sqlite' | 'postgresql', SqlDialect> = {
  sqlite: {
    prefix: '',
    types: {real: 'REAL', int: 'INTEGER', seed: 'INTEGER'},
    begin: 'BEGIN IMMEDIATE',
    forUpdate: '',
    nowMs: "CAST(unixepoch('subsec') * 1000 AS INTEGER)",
    jsonIds: 'SELECT value FROM json_each(?)',
  },
  postgresql: {
    prefix: 'kt_',
    types: {real: 'double precision', int: 'integer', seed: 'bigint'},
    begin: 'BEGIN',
    forUpdate: ' FOR UPDATE',
    nowMs: 'extract(epoch from clock_timestamp()) * 1000',
    jsonIds: 'SELECT jsonb_array_elements_text(?::jsonb)::integer',
  },
}

/** kt's schema in a dialect: kt_meta (format, version), the studies and their trials. */
function schemaSql(d: SqlDialect): string {
  const {real, int, seed} = d.types
  const p = d.prefix
  return `
CREATE TABLE IF NOT EXISTS kt_meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS ${p}studies (
  name text PRIMARY KEY, objective text NOT NULL, optimizer text NOT NULL, options text NOT NULL, seed ${seed} NOT NULL,
  space text NOT NULL, created_at text NOT NULL, updated_at text NOT NULL, state text NOT NULL
);
CREATE TABLE IF NOT EXISTS ${p}trials (
  study text NOT NULL REFERENCES ${p}studies(name) ON DELETE CASCADE,
  id ${int} NOT NULL, config_id text NOT NULL, config text NOT NULL, budget ${real} NOT NULL, continues ${int}, info text,
  status text NOT NULL CHECK (status IN ('running', 'ok', 'failed')),
  loss ${real}, objective_values text, metrics text, checkpoint text, error text, tell_seq ${int}, asks_before ${int},
  started_at text, finished_at text, duration_ms ${real}, worker ${int},
  owner text, heartbeat_ms ${real}, attempts ${int} NOT NULL DEFAULT 1, ask_hint text,
  PRIMARY KEY (study, id)
);
CREATE INDEX IF NOT EXISTS ${p}trials_tell ON ${p}trials (study, tell_seq);
CREATE INDEX IF NOT EXISTS ${p}trials_running ON ${p}trials (study) WHERE status = 'running';
`
}

const STUDY_COLUMNS = 'name, objective, optimizer, options, seed, space, created_at, updated_at, state'

function studyParams(s: StudyRecord): unknown[] {
  const {objective, options, space} = s
  return [
    s.name,
    JSON.stringify(objective),
    s.optimizer,
    JSON.stringify(options),
    s.seed,
    JSON.stringify(space),
  ].concat([s.createdAt, s.updatedAt, s.state])
}

const numberOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v))

const leaseOf = (r: Row): Lease => ({
  id: Number(r.id),
  owner: (r.owner as string | null) ?? null,
  heartbeatMs: numberOrNull(r.heartbeat_ms),
  attempts: Number(r.attempts ?? 1),
})

/** The StudyStorage of a SQL database; a backend adds its connection, dialect and wake-ups. */
export abstract class SqlStudyStorage implements StudyStorage {
  abstract readonly kind: StudyStorage['kind']
  abstract readonly label: string
  protected abstract readonly dialect: SqlDialect
  /** How a message names what holds kt's schema ("a kt study file", "kt's study schema"). */
  protected abstract readonly schemaNoun: string
  /** The trial columns read without the checkpoint, as the database's schema version has them. */
  protected columns = TRIAL_COLUMNS_NO_CHECKPOINT
  protected readonly counters = {roundTrips: 0, lockWaitMs: 0, lockHeldMs: 0, durableMs: 0}

  /** Runs fn on the connection, one caller of this process at a time (a lost connection becomes StorageUnavailableError). */
  protected abstract use<T>(fn: (c: SqlConnection) => Promise<T>, session?: SessionCheck): Promise<T>
  /** Statements that wake the study's waiting workers when the section commits (none where wake-ups are local only). */
  protected abstract notifySql(study: string): Array<[string, unknown[]]>
  /** Called after a commit that notified: wakes this process's own waiters. */
  protected abstract changed(study: string): void
  /** The mark a later waitForChange compares (see StudyTx.changeMark). */
  protected abstract changeMark(study: string): number
  abstract changeCounter(): Promise<number | undefined>
  abstract waitForChange(study: string, timeoutMs: number, signal?: AbortSignal, changeMark?: number): Promise<void>
  abstract close(): Promise<void>

  private get studies(): string {
    return `${this.dialect.prefix}studies`
  }

  private get trialsTable(): string {
    return `${this.dialect.prefix}trials`
  }

  private async rows(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    return this.use(async (c) => (await c.query(sql, params)).rows)
  }

  private trialRows(rows: Row[]): TrialRow[] {
    return rows.map((r) => trialFromRow(this.label, r))
  }

  /** Runs fn in one write transaction (rolled back on failure). */
  protected transaction<T>(c: SqlConnection, fn: () => Promise<T>): Promise<T> {
    return c.query(this.dialect.begin).then(async () => {
      try {
        const out = await fn()
        await c.query('COMMIT')
        return out
      } catch (error) {
        await c.query('ROLLBACK').catch(() => undefined)
        throw error
      }
    })
  }

  /**
   * Creates kt's schema in a database without kt_meta, or checks its format and version,
   * upgrading an older one unless read-only. `lock` runs first in each transaction that creates or
   * upgrades (two workers starting together then do it once); `migrations` by the version they
   * start from. Returns the version found.
   */
  protected async checkOrInit(
    c: SqlConnection,
    options: OpenOptions & {hasMeta: boolean},
    schema: {lock?: string; readable: readonly string[]; migrations: Record<string, string>},
  ): Promise<string> {
    const readMeta = async (): Promise<Map<string, string>> =>
      new Map((await c.query('SELECT key, value FROM kt_meta')).rows.map((r) => [String(r.key), String(r.value)]))
    if (!options.hasMeta) {
      // ON CONFLICT: two processes may create the same new schema at once
      const meta = `INSERT INTO kt_meta (key, value) VALUES ('format', '${STUDY_FORMAT}'), ('version', '${STUDY_FORMAT_VERSION}') ON CONFLICT (key) DO NOTHING`
      await this.transaction(c, async () => {
        for (const sql of [schema.lock ?? '', ...schemaSql(this.dialect).split(';'), meta])
          if (sql.trim()) await c.query(sql)
      })
    }
    const meta = await readMeta()
    if (meta.get('format') !== STUDY_FORMAT)
      throw new InputError(
        this.label,
        `${this.schemaNoun} (format ${STUDY_FORMAT})`,
        `format ${meta.get('format') ?? 'none'}`,
      )
    const version = meta.get('version') ?? 'none'
    if (!schema.readable.includes(version))
      throw new InputError(
        this.label,
        `study format version ${STUDY_FORMAT_VERSION} (this kt reads ${schema.readable.join(', ')})`,
        `version ${version} (another kt version's schema)`,
      )
    this.columns = trialColumnsOf(version)
    if (version === STUDY_FORMAT_VERSION || options.readonly) return version
    // from the version read under the lock: another worker may have upgraded it meanwhile
    await this.transaction(c, async () => {
      if (schema.lock) await c.query(schema.lock)
      let now = (await readMeta()).get('version')
      for (; now !== undefined && schema.migrations[now]; now = String(Number(now) + 1))
        for (const sql of schema.migrations[now].split(';')) if (sql.trim()) await c.query(sql)
      await c.query("UPDATE kt_meta SET value = ? WHERE key = 'version'", [STUDY_FORMAT_VERSION])
    })
    this.columns = TRIAL_COLUMNS_NO_CHECKPOINT
    return STUDY_FORMAT_VERSION
  }

  // ---- read API ----

  async listStudies(): Promise<StudySummary[]> {
    const rows = await this.rows(
      `SELECT s.*, COUNT(t.id) AS trials,
         SUM(CASE WHEN t.status = 'ok' THEN 1 ELSE 0 END) AS ok,
         SUM(CASE WHEN t.status = 'failed' THEN 1 ELSE 0 END) AS failed,
         SUM(CASE WHEN t.status = 'running' THEN 1 ELSE 0 END) AS running,
         MIN(CASE WHEN t.status = 'ok' THEN t.loss END) AS best_loss
       FROM ${this.studies} s LEFT JOIN ${this.trialsTable} t ON t.study = s.name GROUP BY s.name ORDER BY s.created_at, s.name`,
    )
    return rows.map((r) => ({
      ...studyFromRow(this.label, r),
      trials: Number(r.trials ?? 0),
      ok: Number(r.ok ?? 0),
      failed: Number(r.failed ?? 0),
      running: Number(r.running ?? 0),
      bestLoss: numberOrNull(r.best_loss),
    }))
  }

  async getStudy(name: string): Promise<StudyRecord | undefined> {
    checkStudyName(name, `${this.label}: study`)
    const [row] = await this.rows(`SELECT * FROM ${this.studies} WHERE name = ?`, [name])
    return row ? studyFromRow(this.label, row) : undefined
  }

  async trials(study: string): Promise<TrialRow[]> {
    return this.trialRows(await this.rows(`SELECT * FROM ${this.trialsTable} WHERE study = ? ORDER BY id`, [study]))
  }

  async trialPage(study: string, afterId: number, limit: number): Promise<TrialRow[]> {
    const sql = `SELECT ${this.columns} FROM ${this.trialsTable} WHERE study = ? AND id > ? ORDER BY id LIMIT ?`
    return this.trialRows(await this.rows(sql, [study, afterId, limit]))
  }

  /**
   * Index lookups, the count first (a trial committed between the reads then shows as a mismatch,
   * a full reload, never as a miss): one OR over the three conditions scans every row of the study.
   */
  async trialsSince(
    study: string,
    askCount: number,
    tellSeq: number,
    ids: readonly number[],
  ): Promise<{trials: TrialRow[]; total: number}> {
    return this.use(async (c) => {
      const from = `SELECT ${this.columns} FROM ${this.trialsTable} WHERE study = ? AND`
      const total = Number(
        (await c.query(`SELECT COUNT(*) AS n FROM ${this.trialsTable} WHERE study = ?`, [study])).rows[0].n,
      )
      const byId = new Map<number, Row>()
      for (const [where, value] of [
        ['id >= ?', askCount],
        ['tell_seq >= ?', tellSeq],
        [`id IN (${this.dialect.jsonIds})`, JSON.stringify(ids)],
      ] as const)
        for (const r of (await c.query(`${from} ${where}`, [study, value])).rows) byId.set(Number(r.id), r)
      return {trials: this.trialRows([...byId.values()].sort((a, b) => Number(a.id) - Number(b.id))), total}
    })
  }

  async trialCheckpoint(study: string, trialId: number): Promise<unknown> {
    return this.use((c) => this.checkpointOf(c, study, trialId))
  }

  private async checkpointOf(c: SqlConnection, study: string, trialId: number): Promise<unknown> {
    const sql = `SELECT checkpoint FROM ${this.trialsTable} WHERE study = ? AND id = ? AND status = 'ok'`
    const text = (await c.query(sql, [study, trialId])).rows[0]?.checkpoint
    return text ? parseJsonField(this.label, String(text), `trial ${trialId} checkpoint`) : undefined
  }

  /**
   * The trials a replica has not seen: asks from askCount on, and the tells from tellSeq on of
   * trials asked before. Two index range scans whatever the values; the equivalent OR has no
   * good generic plan (PostgreSQL reads the whole study).
   */
  private async changesOn(c: SqlConnection, study: string, askCount: number, tellSeq: number): Promise<TrialRow[]> {
    const from = `SELECT ${this.columns} FROM ${this.trialsTable} WHERE study = ?`
    const sql = `${from} AND id >= ? UNION ALL ${from} AND tell_seq >= ? AND id < ? ORDER BY id`
    return this.trialRows((await c.query(sql, [study, askCount, study, tellSeq, askCount])).rows)
  }

  async changes(study: string, askCount: number, tellSeq: number, session?: SessionCheck): Promise<TrialRow[]> {
    return this.use((c) => this.changesOn(c, study, askCount, tellSeq), session)
  }

  // ---- write API ----

  /** Inserts a study row; false when the name is taken. */
  private async insertStudy(c: SqlConnection, study: StudyRecord): Promise<boolean> {
    const sql = `INSERT INTO ${this.studies} (${STUDY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`
    return (await c.query(sql, studyParams(study))).changes === 1
  }

  async createStudy(record: Omit<StudyRecord, 'createdAt' | 'updatedAt' | 'state'>, now: string): Promise<StudyRecord> {
    checkStudyName(record.name, `${this.label}: study`)
    const full: StudyRecord = {...record, createdAt: now, updatedAt: now, state: 'running'}
    if (!(await this.use((c) => this.insertStudy(c, full))))
      throw new InputError(
        `${this.label}: study ${record.name}`,
        'a new study name (use --resume to continue it)',
        'an existing study',
      )
    return full
  }

  async setStudyState(name: string, state: string, now: string): Promise<void> {
    await this.rows(`UPDATE ${this.studies} SET state = ?, updated_at = ? WHERE name = ?`, [state, now, name])
  }

  async setStudyOptions(name: string, options: Record<string, unknown>, now: string): Promise<void> {
    const sql = `UPDATE ${this.studies} SET options = ?, updated_at = ? WHERE name = ?`
    await this.rows(sql, [JSON.stringify(options), now, name])
  }

  async importStudy(study: StudyRecord, trials: readonly TrialRow[]): Promise<void> {
    checkStudyName(study.name, `${this.label}: study`)
    const put = `INSERT INTO ${this.trialsTable} (${IMPORT_COLUMNS.join(', ')}) VALUES (${IMPORT_COLUMNS.map(() => '?').join(', ')})`
    await this.use((c) =>
      this.transaction(c, async () => {
        if (!(await this.insertStudy(c, study)))
          throw new InputError(
            `${this.label}: study ${study.name}`,
            'a study name not yet in the target storage',
            'an existing study',
          )
        for (const t of trials) await c.query(put, importParams(study.name, t))
      }),
    )
  }

  // ---- coordination API ----

  /** Finishes a running trial leased to owner; false if it is not (taken over, finished). */
  private async finishOn(
    c: SqlConnection,
    study: string,
    id: number,
    owner: string,
    r: FinishedTrial,
  ): Promise<boolean> {
    const sql = `UPDATE ${this.trialsTable} SET status = ?, loss = ?, objective_values = ?, metrics = ?, checkpoint = ?, error = ?,
        tell_seq = ?, asks_before = ?, started_at = ?, finished_at = ?, duration_ms = ?, worker = ?, heartbeat_ms = NULL
      WHERE study = ? AND id = ? AND status = 'running' AND owner = ?`
    return (await c.query(sql, [...finishParams(r), study, id, owner])).changes === 1
  }

  /** The next tell's place in the order: one past the last tell_seq, and every trial asked so far (ids 0, 1, 2, ...). */
  private async nextTellPosition(c: SqlConnection, study: string): Promise<{tellSeq: number; asksBefore: number}> {
    const sql = `SELECT MAX(tell_seq) AS seq, MAX(id) AS id FROM ${this.trialsTable} WHERE study = ?`
    const {seq, id} = (await c.query(sql, [study])).rows[0]
    return {tellSeq: seq === null ? 0 : Number(seq) + 1, asksBefore: id === null ? 0 : Number(id) + 1}
  }

  /** A transaction holding the study's lock; its statements one round trip each (see the file's comment); its commit is synchronous, so `committing` is never called. */
  async withStudyLock<T>(study: string, fn: (tx: StudyTx) => Promise<T>, prelude?: SectionPrelude): Promise<T> {
    const changeMark = this.changeMark(study)
    let notified = false
    let granted = 0
    const out = await this.use((c) =>
      this.transaction(c, async () => {
        const t0 = performance.now()
        const [locked] = (
          await c.query(`SELECT state FROM ${this.studies} WHERE name = ?${this.dialect.forUpdate}`, [study])
        ).rows
        granted = performance.now()
        this.counters.lockWaitMs += granted - t0
        // the clock once the lock is granted (a FOR UPDATE row's columns may be computed before its wait)
        const nowMs = Number((await c.query(`SELECT ${this.dialect.nowMs} AS now_ms`)).rows[0].now_ms)
        const notify = async (): Promise<void> => {
          if (notified) return
          notified = true
          for (const [sql, params] of this.notifySql(study)) await c.query(sql, params)
        }
        const finish = async (trialId: number, owner: string, r: FinishedTrial): Promise<boolean> => {
          const done = await this.finishOn(c, study, trialId, owner, r)
          if (done) await notify()
          return done
        }
        const p = prelude?.finish
        const recorded = p
          ? await finish(p.trialId, p.owner, {...p.result, ...(await this.nextTellPosition(c, study))})
          : undefined
        const trials = this.trialsTable
        const tx: StudyTx = {
          nowMs,
          changeMark,
          recorded,
          state: locked ? String(locked.state) : 'missing',
          changes: (askCount, tellSeq) => this.changesOn(c, study, askCount, tellSeq),
          leases: async () => {
            const sql = `SELECT id, owner, heartbeat_ms, attempts FROM ${trials} WHERE study = ? AND status = 'running' ORDER BY id`
            return (await c.query(sql, [study])).rows.map(leaseOf)
          },
          insertTrial: async (trial, owner, startedAt) => {
            const sql = `INSERT INTO ${trials} (study, id, config_id, config, budget, continues, info, status, started_at, owner, heartbeat_ms, attempts, ask_hint)
              VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, 1, ?)`
            const info = trial.info ? JSON.stringify(trial.info) : null
            const head = [study, trial.id, trial.configId, JSON.stringify(trial.config), trial.budget]
            await c.query(sql, [
              ...head,
              trial.continues?.trialId ?? null,
              info,
              startedAt,
              owner,
              nowMs,
              hintJson(trial.askHint),
            ])
          },
          claim: async (trialId, owner, startedAt) => {
            const sql = `UPDATE ${trials} SET owner = ?, heartbeat_ms = ?, attempts = attempts + 1, started_at = ? WHERE study = ? AND id = ? AND status = 'running'`
            await c.query(sql, [owner, nowMs, startedAt, study, trialId])
          },
          finish,
          setState: async (state, now) => {
            await c.query(`UPDATE ${this.studies} SET state = ?, updated_at = ? WHERE name = ?`, [state, now, study])
          },
          checkpointAfterCommit: (trialId) => this.checkpointOf(c, study, trialId),
          notify,
        }
        return fn(tx)
      }),
    )
    // held from the grant to the commit's end
    this.counters.lockHeldMs += performance.now() - granted
    if (notified) this.changed(study)
    return out
  }

  async heartbeat(study: string, owner: string): Promise<void> {
    const sql = `UPDATE ${this.trialsTable} SET heartbeat_ms = ${this.dialect.nowMs} WHERE study = ? AND owner = ? AND status = 'running'`
    await this.rows(sql, [study, owner])
  }

  async releaseLeases(study: string, owner: string): Promise<void> {
    const sql = `UPDATE ${this.trialsTable} SET owner = NULL, heartbeat_ms = NULL WHERE study = ? AND owner = ? AND status = 'running'`
    const released = await this.use(async (c) => {
      const {changes} = await c.query(sql, [study, owner])
      if (changes > 0) for (const [notify, params] of this.notifySql(study)) await c.query(notify, params)
      return changes > 0
    })
    if (released) this.changed(study)
  }

  coordinationStats(): CoordinationStats {
    return {...this.counters}
  }
}
