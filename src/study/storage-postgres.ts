/**
 * The study store on a PostgreSQL server (`--storage postgresql://user[:password]@host:port/db`,
 * the `pg` client), for studies whose workers run on many machines.
 *
 * - kt's tables are prefixed (kt_meta, kt_studies, kt_trials), so a shared database is fine; the
 *   schema is versioned in kt_meta (format kt-study, version STUDY_FORMAT_VERSION) and created on
 *   first write under an advisory lock, so two workers starting together create it once.
 * - A locked section is one transaction holding the study row FOR UPDATE: every ask, claim and
 *   tell of a study is serialized in one order, and a killed worker's transaction is rolled back
 *   and its lock released by the server.
 * - Time comes from the server's clock (heartbeats, lease expiry), so machines whose clocks
 *   disagree still agree about leases.
 * - Waiting workers LISTEN on one channel; a tell NOTIFYs the study's name at commit.
 * - Bad input at open (unreachable server, wrong password, no such database, a database without
 *   kt's schema, another kt version's schema) is a one-line InputError naming the URL without its
 *   password. A connection lost later is a StorageUnavailableError, which workers retry.
 */
import {createRequire} from 'node:module'
import type pg from 'pg'
import {InputError} from '../util/errors.js'
import {
  finishParams,
  hintJson,
  IMPORT_COLUMNS,
  importParams,
  studyFromRow,
  STUDY_FORMAT,
  STUDY_FORMAT_VERSION,
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
  NewTrial,
  OpenOptions,
  SectionPrelude,
  SessionCheck,
  StudyStorage,
  StudySummary,
  StudyTx,
} from './storage.js'
import {redactStorage, StorageUnavailableError} from './storage.js'

import {LocalWake, Mutex, sleep} from './sync.js'
import {checkStudyName} from './name.js'

/** Give up connecting after this long (ms): an unreachable server is reported, not waited for. */
const CONNECT_TIMEOUT_MS = 5000
/** NOTIFY channel of every kt study; the payload is the study name. */
const CHANNEL = 'kt_study'
/** Key of the advisory lock held while creating kt's schema (any constant unique to kt). */
const SCHEMA_LOCK_KEY = 0x6b74_0001
/** Longest wait of a worker whose notification connection is down (ms). */
const FALLBACK_POLL_MS = 500
/**
 * A process LISTENs only while one of its slots waits, and for this long after its last wait (ms):
 * a busy worker then receives no notification per trial of every other worker (at 8 processes,
 * 8 wake-ups of a client and a server backend per trial), while one that waits at a rung or at
 * the study's end is likely to wait again soon.
 */
const LISTEN_LINGER_MS = 1000
/** The changeMark of a section that began while this process was not listening: its wait looks again at once. */
const NOT_LISTENING = -1

/**
 * The trials a replica has not seen: asks from `$2` on, and the tells from `$3` on of trials asked
 * before. Two index range scans (the primary key, kt_trials_tell) whatever the values, so one
 * generic plan serves every section; the equivalent `id >= $2 OR tell_seq >= $3` has no good
 * generic plan (it reads the whole study), so the server planned it anew at every section.
 */
const CHANGES_SQL = `SELECT ${TRIAL_COLUMNS_NO_CHECKPOINT} FROM kt_trials WHERE study = $1 AND id >= $2
  UNION ALL SELECT ${TRIAL_COLUMNS_NO_CHECKPOINT} FROM kt_trials WHERE study = $1 AND tell_seq >= $3 AND id < $2 ORDER BY id`

/**
 * The statements of a locked section, prepared once per connection (SQL PREPARE, so that they
 * can share one simple-protocol message with BEGIN and COMMIT) and run with EXECUTE. Their plans
 * do not depend on the values (lookups and range scans by index), so the connection uses the
 * generic plans from the start instead of planning each execution with its values first (and,
 * where the value-specific plan looks cheaper, every time).
 */
const SECTION_STATEMENTS = `
SET plan_cache_mode = force_generic_plan;
PREPARE kt_lock(text) AS SELECT state FROM kt_studies WHERE name = $1 FOR UPDATE;
PREPARE kt_granted AS SELECT extract(epoch from clock_timestamp()) * 1000 AS now_ms;
PREPARE kt_changes(text, integer, integer) AS SELECT ${TRIAL_COLUMNS_NO_CHECKPOINT} FROM kt_trials
  WHERE study = $1 AND (id >= $2 OR tell_seq >= $3) ORDER BY id;
PREPARE kt_leases(text) AS SELECT id, owner, heartbeat_ms, attempts FROM kt_trials WHERE study = $1 AND status = 'running' ORDER BY id;
PREPARE kt_finish(text, integer, text, text, double precision, text, text, text, text, text, text, double precision, integer) AS
  WITH u AS (UPDATE kt_trials SET status = $4, loss = $5, objective_values = $6, metrics = $7, checkpoint = $8, error = $9,
      tell_seq = (SELECT COALESCE(MAX(tell_seq), -1) + 1 FROM kt_trials WHERE study = $1),
      asks_before = (SELECT COALESCE(MAX(id), -1) + 1 FROM kt_trials WHERE study = $1),
      started_at = $10, finished_at = $11, duration_ms = $12, worker = $13, heartbeat_ms = NULL
    WHERE study = $1 AND id = $2 AND status = 'running' AND owner = $3 RETURNING id)
  SELECT id, pg_notify('${CHANNEL}', $1) FROM u;
PREPARE kt_insert(text, integer, text, text, double precision, integer, text, text, text, double precision, text) AS
  INSERT INTO kt_trials (study, id, config_id, config, budget, continues, info, status, started_at, owner, heartbeat_ms, attempts, ask_hint)
  VALUES ($1, $2, $3, $4, $5, $6, $7, 'running', $8, $9, $10, 1, $11);
PREPARE kt_claim(text, integer, text, text, double precision) AS
  UPDATE kt_trials SET owner = $3, heartbeat_ms = $5, attempts = attempts + 1, started_at = $4 WHERE study = $1 AND id = $2 AND status = 'running';
PREPARE kt_barrier(text, integer) AS
  UPDATE kt_trials SET heartbeat_ms = heartbeat_ms WHERE study = $1 AND id = $2 RETURNING extract(epoch from clock_timestamp()) * 1000 AS now_ms;
`

/*
 * DURABILITY_BARRIER (kt_barrier). A section that wrote commits with synchronous_commit = off for
 * its transaction only, so the server releases the study lock as soon as the commit record is in
 * the WAL buffer: the WAL flush (an fsync, about as long as the rest of the section) leaves the
 * serialized path that every worker queues on. kt_barrier follows in the same message, after the
 * COMMIT: a transaction of its own (so at the session's synchronous_commit level: a flush, or a
 * synchronous standby) whose commit waits for the WAL up to its own commit record, which lies
 * after the section's; concurrent barriers share one flush (group commit). It must change a row:
 * PostgreSQL commits a transaction that wrote no WAL but its commit record asynchronously (a bare
 * `SELECT txid_current()` is no barrier: tried, and lost in a crash). The row is one no other
 * worker writes (the trial the section handed out, else the one it finished), so barriers never
 * wait for each other's locks; a section with neither commits synchronously instead.
 *
 * Why nothing is weakened: the message's result, and so anything a worker records, reports or
 * hands on, arrives only after the barrier. Others may read a section before it is durable (a
 * woken waiter, the next lock holder, the dashboard), but the WAL is one sequence: a section that
 * read ours committed after ours, so whatever makes it durable makes ours durable first, and a
 * server crash leaves a prefix of the sections' order, never a later section without an earlier
 * one. A crash also ends every connection, so a worker whose replica read sections that were
 * lost finds out (a failed statement, or a new connection: SessionCheck) and rebuilds it.
 */

/** A number as an SQL literal that reads back as the same double (non-finite ones as float8 strings). */
function numberLiteral(v: number): string {
  if (Number.isFinite(v)) return String(v)
  return Number.isNaN(v) ? "'NaN'" : v > 0 ? "'Infinity'" : "'-Infinity'"
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS kt_meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS kt_studies (
  name text PRIMARY KEY,
  objective text NOT NULL,
  optimizer text NOT NULL,
  options text NOT NULL,
  seed bigint NOT NULL,
  space text NOT NULL,
  created_at text NOT NULL,
  updated_at text NOT NULL,
  state text NOT NULL
);
CREATE TABLE IF NOT EXISTS kt_trials (
  study text NOT NULL REFERENCES kt_studies(name) ON DELETE CASCADE,
  id integer NOT NULL,
  config_id text NOT NULL,
  config text NOT NULL,
  budget double precision NOT NULL,
  continues integer,
  info text,
  status text NOT NULL CHECK (status IN ('running', 'ok', 'failed')),
  loss double precision,
  objective_values text,
  metrics text,
  checkpoint text,
  error text,
  tell_seq integer,
  asks_before integer,
  started_at text,
  finished_at text,
  duration_ms double precision,
  worker integer,
  owner text,
  heartbeat_ms double precision,
  attempts integer NOT NULL DEFAULT 1,
  ask_hint text,
  PRIMARY KEY (study, id)
);
CREATE INDEX IF NOT EXISTS kt_trials_tell ON kt_trials (study, tell_seq);
CREATE INDEX IF NOT EXISTS kt_trials_running ON kt_trials (study) WHERE status = 'running';
`

/** Schema upgrades by the version they start from (each under SCHEMA_LOCK_KEY, in one transaction). */
const MIGRATIONS: Record<string, string> = {
  // 2 -> 3: the optimiser's replay hint of each trial; older rows keep NULL and replay by re-asking
  '2': 'ALTER TABLE kt_trials ADD COLUMN IF NOT EXISTS ask_hint text',
}
/** Versions this kt reads (and upgrades when it writes): the schema has been created by kt since version 2. */
const READABLE_VERSIONS = ['2', STUDY_FORMAT_VERSION]

type PgModule = typeof pg
let pgModule: PgModule | undefined
function loadPg(): PgModule {
  pgModule ??= createRequire(import.meta.url)('pg') as PgModule
  return pgModule
}

const CONNECTION_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTCONN',
  '57P01',
  '57P02',
  '57P03',
])

/** True for an error that means the connection (not the statement) failed. */
function isConnectionLoss(error: unknown): boolean {
  const e = error as {code?: unknown; message?: unknown}
  if (!e) return false
  if (typeof e.code === 'string' && (CONNECTION_CODES.has(e.code) || e.code.startsWith('08'))) return true
  return (
    typeof e.message === 'string' &&
    /Connection terminated|not queryable|Client was closed|Connection ended|timeout exceeded when trying to connect|the database system is (shutting down|starting up|in recovery)/i.test(
      e.message,
    )
  )
}

function firstLine(error: unknown): string {
  return String((error as Error)?.message ?? error).split('\n')[0]
}

/** One-line InputError for a connection that could not be made. */
function connectError(label: string, url: URL, error: unknown): InputError {
  const e = error as {code?: string; message?: string}
  const user = decodeURIComponent(url.username || process.env.PGUSER || 'the default user')
  const db = decodeURIComponent(url.pathname.replace(/^\//, '')) || user
  const where = `${label}`
  switch (e?.code) {
    case '28P01':
      return new InputError(where, `the right password for user ${user}`, 'password authentication failed')
    case '28000':
      return new InputError(where, `a user the server lets in (${user})`, firstLine(error))
    case '3D000':
      return new InputError(
        where,
        `an existing database ${db} (create it first, e.g. createdb ${db})`,
        `no database ${db}`,
      )
    case 'ECONNREFUSED':
      return new InputError(
        where,
        `a PostgreSQL server listening at ${url.hostname || 'localhost'}:${url.port || 5432}`,
        'connection refused',
      )
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new InputError(where, 'a host name that resolves', `unknown host ${url.hostname}`)
  }
  // the server asked for a password and none was given (pg says "SASL: ...: client password must be a string")
  if (/password must be a string/i.test(e?.message ?? ''))
    return new InputError(
      where,
      `a password for user ${user} (PGPASSWORD=..., or postgresql://${url.username || 'user'}:PASSWORD@${url.host}${url.pathname}): the server asks for one`,
      'none',
    )
  if (/timeout/i.test(e?.message ?? ''))
    return new InputError(
      where,
      `a PostgreSQL server answering at ${url.hostname}:${url.port || 5432}`,
      `no answer within ${CONNECT_TIMEOUT_MS / 1000} s`,
    )
  return new InputError(where, 'a reachable PostgreSQL server', firstLine(error))
}

export class PostgresStorage implements StudyStorage {
  readonly kind = 'postgresql' as const
  readonly label: string
  private client: pg.Client | undefined
  private listener: pg.Client | undefined
  private listenerFailedAt = 0
  /** LISTEN is in effect on the listener connection (set once it has been acknowledged). */
  private listening = false
  private startingToListen: Promise<void> | undefined
  /** Slots of this process waiting for a change, and when one last waited. */
  private waiters = 0
  private lastWaitMs = 0
  private readonly mutex = new Mutex()
  private readonly wakes = new Map<string, LocalWake>()
  private closed = false
  private readonly counters = {roundTrips: 0, lockWaitMs: 0, lockHeldMs: 0, durableMs: 0}
  /** Which connection the main client is (1, 2, ...: one more at each reconnection): see SessionCheck. */
  private session = 0
  /** Connections whose section statements are prepared (SECTION_STATEMENTS). */
  private readonly prepared = new WeakSet<pg.Client>()

  private constructor(
    private readonly url: string,
    private readonly parsed: URL,
  ) {
    this.label = redactStorage(url)
  }

  static async open(spec: string, options: OpenOptions = {}): Promise<PostgresStorage> {
    let parsed: URL
    try {
      parsed = new URL(spec)
    } catch {
      throw new InputError(
        redactStorage(spec),
        'a URL postgresql://user[:password]@host:port/database',
        'an unparseable URL',
      )
    }
    const storage = new PostgresStorage(spec, parsed)
    try {
      storage.client = await storage.connect()
      storage.session++
    } catch (error) {
      throw connectError(storage.label, parsed, error)
    }
    try {
      await storage.checkOrInit(options)
    } catch (error) {
      await storage.close()
      if (error instanceof InputError) throw error
      // connected, then lost (a server crash or restart while kt looked at the schema): not a bad database
      if (isConnectionLoss(error))
        throw new InputError(
          storage.label,
          'a server that stays up while kt opens the study (start again once it is back)',
          `the server went away (${firstLine(error)})`,
        )
      throw new InputError(storage.label, 'a usable kt study database', firstLine(error))
    }
    return storage
  }

  private async connect(): Promise<pg.Client> {
    const {Client} = loadPg()
    const client = new Client({
      connectionString: this.url,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      application_name: 'kt',
    })
    // every statement sent is one round trip (kt bench workers reports them per trial)
    const send = client.query.bind(client) as (...args: unknown[]) => unknown
    client.query = ((...args: unknown[]) => {
      this.counters.roundTrips++
      return send(...args)
    }) as typeof client.query
    // An idle client whose server goes away emits 'error'; without a listener that would crash the process.
    client.on('error', () => {
      if (this.client === client) this.client = undefined
    })
    try {
      await client.connect()
    } catch (error) {
      await client.end().catch(() => undefined)
      throw error
    }
    return client
  }

  private async checkOrInit(options: OpenOptions): Promise<void> {
    const client = this.client!
    const found = await client.query<{meta: string | null; studies: string | null; trials: string | null}>(
      "SELECT to_regclass('kt_meta')::text AS meta, to_regclass('kt_studies')::text AS studies, to_regclass('kt_trials')::text AS trials",
    )
    const hasMeta = found.rows[0].meta !== null
    // kt_meta there but a table of it gone (dropped by hand, a partial restore): say which, before any query needs it
    const missing = hasMeta
      ? (['studies', 'trials'] as const).filter((t) => found.rows[0][t] === null).map((t) => `kt_${t}`)
      : []
    if (missing.length > 0)
      throw new InputError(
        this.label,
        "kt's study schema (kt_meta, kt_studies and kt_trials)",
        `no table ${missing.join(' and no table ')} (a damaged schema: restore it, or use another database)`,
      )
    if (!hasMeta) {
      if (found.rows[0].studies !== null)
        throw new InputError(
          this.label,
          "kt's study schema (kt_meta with kt_studies)",
          'kt_studies without kt_meta (a damaged or foreign schema)',
        )
      if (options.mustExist || options.readonly)
        throw new InputError(
          this.label,
          `a database with kt's study schema (kt_meta, format ${STUDY_FORMAT} version ${STUDY_FORMAT_VERSION}; kt search creates it)`,
          'a database without it',
        )
      await client.query('BEGIN')
      try {
        await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK_KEY])
        await client.query(SCHEMA)
        await client.query('INSERT INTO kt_meta (key, value) VALUES ($1, $2), ($3, $4) ON CONFLICT (key) DO NOTHING', [
          'format',
          STUDY_FORMAT,
          'version',
          STUDY_FORMAT_VERSION,
        ])
        await client.query('COMMIT')
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined)
        throw error
      }
    }
    const meta = new Map(
      (await client.query<{key: string; value: string}>('SELECT key, value FROM kt_meta')).rows.map((r) => [
        r.key,
        r.value,
      ]),
    )
    if (meta.get('format') !== STUDY_FORMAT)
      throw new InputError(
        this.label,
        `kt's study schema (format ${STUDY_FORMAT})`,
        `format ${meta.get('format') ?? 'none'}`,
      )
    const version = meta.get('version') ?? 'none'
    if (!READABLE_VERSIONS.includes(version))
      throw new InputError(
        this.label,
        `kt's study schema version ${STUDY_FORMAT_VERSION}`,
        `version ${version} (another kt version's schema)`,
      )
    this.columns = trialColumnsOf(version)
    if (version === STUDY_FORMAT_VERSION || options.readonly) return
    await client.query('BEGIN')
    try {
      await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK_KEY])
      // re-read under the lock: another worker may have upgraded it meanwhile
      let now = (await client.query<{value: string}>("SELECT value FROM kt_meta WHERE key = 'version'")).rows[0]?.value
      while (now !== undefined && MIGRATIONS[now]) {
        await client.query(MIGRATIONS[now])
        now = String(Number(now) + 1)
      }
      await client.query("UPDATE kt_meta SET value = $1 WHERE key = 'version'", [STUDY_FORMAT_VERSION])
      await client.query('COMMIT')
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined)
      throw error
    }
    this.columns = TRIAL_COLUMNS_NO_CHECKPOINT
  }

  /** The trial columns read without the checkpoint, as the database's schema version has them. */
  private columns = TRIAL_COLUMNS_NO_CHECKPOINT

  /**
   * Runs queries on the (re)connected client, one caller at a time. A lost connection becomes a
   * StorageUnavailableError and the client is dropped, so the next call reconnects.
   */
  private async use<T>(fn: (client: pg.Client) => Promise<T>, session?: SessionCheck): Promise<T> {
    return this.mutex.run(async () => {
      if (this.closed) throw new StorageUnavailableError(this.label, 'closed')
      if (!this.client) {
        try {
          this.client = await this.connect()
          this.session++
        } catch (error) {
          throw new StorageUnavailableError(this.label, firstLine(error))
        }
      }
      if (session) {
        session.value ??= this.session
        // what the caller read on another connection may have been lost in a server crash since
        if (session.value !== this.session)
          throw new StorageUnavailableError(this.label, 'reconnected since the last read')
      }
      const client = this.client
      try {
        return await fn(client)
      } catch (error) {
        if (isConnectionLoss(error)) {
          if (this.client === client) this.client = undefined
          void client.end().catch(() => undefined)
          throw new StorageUnavailableError(this.label, firstLine(error))
        }
        throw error
      }
    })
  }

  async listStudies(): Promise<StudySummary[]> {
    const rows = await this.use(
      async (c) =>
        (
          await c.query(
            `SELECT s.*, COUNT(t.id) AS trials,
             SUM(CASE WHEN t.status = 'ok' THEN 1 ELSE 0 END) AS ok,
             SUM(CASE WHEN t.status = 'failed' THEN 1 ELSE 0 END) AS failed,
             SUM(CASE WHEN t.status = 'running' THEN 1 ELSE 0 END) AS running,
             MIN(CASE WHEN t.status = 'ok' THEN t.loss END) AS best_loss
           FROM kt_studies s LEFT JOIN kt_trials t ON t.study = s.name GROUP BY s.name ORDER BY s.created_at, s.name`,
          )
        ).rows,
    )
    return rows.map((r) => ({
      ...studyFromRow(this.label, r),
      trials: Number(r.trials ?? 0),
      ok: Number(r.ok ?? 0),
      failed: Number(r.failed ?? 0),
      running: Number(r.running ?? 0),
      bestLoss: r.best_loss === null || r.best_loss === undefined ? null : Number(r.best_loss),
    }))
  }

  /** Per study: state, update time, trial counts and the latest trial start/finish (the dashboard's change signature). */
  async activity(): Promise<
    Array<{name: string; state: string; updatedAt: string; trials: number; finished: number; last: string | null}>
  > {
    const rows = await this.use(
      async (c) =>
        (
          await c.query(
            `SELECT s.name, s.state, s.updated_at, COUNT(t.id) AS trials, SUM(CASE WHEN t.status <> 'running' THEN 1 ELSE 0 END) AS finished,
             MAX(GREATEST(COALESCE(t.finished_at, ''), COALESCE(t.started_at, ''))) AS last
           FROM kt_studies s LEFT JOIN kt_trials t ON t.study = s.name GROUP BY s.name`,
          )
        ).rows,
    )
    return rows.map((r) => ({
      name: r.name,
      state: r.state,
      updatedAt: r.updated_at,
      trials: Number(r.trials ?? 0),
      finished: Number(r.finished ?? 0),
      last: r.last || null,
    }))
  }

  async getStudy(name: string): Promise<StudyRecord | undefined> {
    checkStudyName(name, `${this.label}: study`)
    const rows = await this.use(async (c) => (await c.query('SELECT * FROM kt_studies WHERE name = $1', [name])).rows)
    return rows[0] ? studyFromRow(this.label, rows[0]) : undefined
  }

  async trials(study: string): Promise<TrialRow[]> {
    const rows = await this.use(
      async (c) => (await c.query('SELECT * FROM kt_trials WHERE study = $1 ORDER BY id', [study])).rows,
    )
    return rows.map((r) => trialFromRow(this.label, r))
  }

  async trialPage(study: string, afterId: number, limit: number): Promise<TrialRow[]> {
    const rows = await this.use(
      async (c) =>
        (
          await c.query(`SELECT ${this.columns} FROM kt_trials WHERE study = $1 AND id > $2 ORDER BY id LIMIT $3`, [
            study,
            afterId,
            limit,
          ])
        ).rows,
    )
    return rows.map((r) => trialFromRow(this.label, r))
  }

  async trialsSince(
    study: string,
    askCount: number,
    tellSeq: number,
    ids: readonly number[],
  ): Promise<{trials: TrialRow[]; total: number}> {
    return this.use(async (c) => {
      // the count first: a trial committed between the two reads then shows as a mismatch (a full reload), never as a miss
      const total = Number((await c.query('SELECT COUNT(*) AS n FROM kt_trials WHERE study = $1', [study])).rows[0].n)
      const rows = (
        await c.query(
          `SELECT ${this.columns} FROM kt_trials WHERE study = $1 AND (id >= $2 OR tell_seq >= $3 OR id = ANY($4::integer[])) ORDER BY id`,
          [study, askCount, tellSeq, [...ids]],
        )
      ).rows
      return {trials: rows.map((r) => trialFromRow(this.label, r)), total}
    })
  }

  /** PostgreSQL has no cheap per-database commit counter a client can read: callers read. */
  async changeCounter(): Promise<number | undefined> {
    return undefined
  }

  async trialCheckpoint(study: string, trialId: number): Promise<unknown> {
    const rows = await this.use(
      async (c) =>
        (
          await c.query("SELECT checkpoint FROM kt_trials WHERE study = $1 AND id = $2 AND status = 'ok'", [
            study,
            trialId,
          ])
        ).rows,
    )
    const text = rows[0]?.checkpoint as string | null | undefined
    return text ? JSON.parse(text) : undefined
  }

  async createStudy(record: Omit<StudyRecord, 'createdAt' | 'updatedAt' | 'state'>, now: string): Promise<StudyRecord> {
    checkStudyName(record.name, `${this.label}: study`)
    const full: StudyRecord = {...record, createdAt: now, updatedAt: now, state: 'running'}
    const inserted = await this.use(
      async (c) =>
        (
          await c.query(
            `INSERT INTO kt_studies (name, objective, optimizer, options, seed, space, created_at, updated_at, state) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
           ON CONFLICT (name) DO NOTHING`,
            [
              full.name,
              JSON.stringify(full.objective),
              full.optimizer,
              JSON.stringify(full.options),
              full.seed,
              JSON.stringify(full.space),
              now,
              now,
              full.state,
            ],
          )
        ).rowCount,
    )
    if (inserted !== 1)
      throw new InputError(
        `${this.label}: study ${record.name}`,
        'a new study name (use --resume to continue it)',
        'an existing study',
      )
    return full
  }

  async setStudyState(name: string, state: string, now: string): Promise<void> {
    await this.use((c) =>
      c.query('UPDATE kt_studies SET state = $1, updated_at = $2 WHERE name = $3', [state, now, name]),
    )
  }

  async setStudyOptions(name: string, options: Record<string, unknown>, now: string): Promise<void> {
    await this.use((c) =>
      c.query('UPDATE kt_studies SET options = $1, updated_at = $2 WHERE name = $3', [
        JSON.stringify(options),
        now,
        name,
      ]),
    )
  }

  async importStudy(study: StudyRecord, trials: readonly TrialRow[]): Promise<void> {
    checkStudyName(study.name, `${this.label}: study`)
    await this.use(async (c) => {
      await c.query('BEGIN')
      try {
        const inserted = await c.query(
          `INSERT INTO kt_studies (name, objective, optimizer, options, seed, space, created_at, updated_at, state) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
           ON CONFLICT (name) DO NOTHING`,
          [
            study.name,
            JSON.stringify(study.objective),
            study.optimizer,
            JSON.stringify(study.options),
            study.seed,
            JSON.stringify(study.space),
            study.createdAt,
            study.updatedAt,
            study.state,
          ],
        )
        if (inserted.rowCount !== 1)
          throw new InputError(
            `${this.label}: study ${study.name}`,
            'a study name not yet in the target storage',
            'an existing study',
          )
        const sql = `INSERT INTO kt_trials (${IMPORT_COLUMNS.join(', ')}) VALUES (${IMPORT_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`
        for (const t of trials) await c.query(sql, importParams(study.name, t))
        await c.query('COMMIT')
      } catch (error) {
        await c.query('ROLLBACK').catch(() => undefined)
        throw error
      }
    })
  }

  async warmUp(): Promise<void> {
    await this.listen()
    await this.use(async (c) => {
      if (!this.prepared.has(c)) {
        await c.query(SECTION_STATEMENTS)
        this.prepared.add(c)
      }
    })
  }

  async changes(study: string, askCount: number, tellSeq: number, session?: SessionCheck): Promise<TrialRow[]> {
    const rows = await this.use(
      async (c) => (await c.query({name: 'kt_catch_up', text: CHANGES_SQL, values: [study, askCount, tellSeq]})).rows,
      session,
    )
    return rows.map((r) => trialFromRow(this.label, r))
  }

  /**
   * One locked section in two round trips: BEGIN with the study row's lock, the prelude's finish
   * (its tell_seq and asks_before computed under the lock, its NOTIFY in the same statement) and
   * the unseen trials with the running ones (the leases), in one message; then the section's
   * writes, buffered, sent with COMMIT. Without a prelude, tx.changes and tx.finish are a round
   * trip each. Statements are SQL with escaped literals (client.escapeLiteral), since one message
   * cannot carry several parameterised statements.
   */
  async withStudyLock<T>(
    study: string,
    fn: (tx: StudyTx) => Promise<T>,
    prelude?: SectionPrelude,
    committing?: (value: T) => void,
  ): Promise<T> {
    let notify = false
    // A wait after this section must not miss a tell committed after it: it relies on LISTEN being
    // in effect from the section's start; if it is not, the wait looks again at once (and listens).
    const changeMark = this.listening ? this.wakeFor(study).generation : NOT_LISTENING
    if (this.listening && this.waiters === 0 && Date.now() - this.lastWaitMs > LISTEN_LINGER_MS) this.stopListening()
    const out = await this.use(async (c) => {
      const lit = (v: unknown): string =>
        v === null || v === undefined ? 'NULL' : typeof v === 'number' ? numberLiteral(v) : c.escapeLiteral(String(v))
      const studyLit = lit(study)
      if (!this.prepared.has(c)) {
        await c.query(SECTION_STATEMENTS)
        this.prepared.add(c)
      }
      const changesSql = (askCount: number, tellSeq: number): string =>
        `EXECUTE kt_changes(${studyLit}, ${lit(askCount)}, ${lit(tellSeq)})`
      if (prelude?.session) {
        prelude.session.value ??= this.session
        if (prelude.session.value !== this.session)
          throw new StorageUnavailableError(this.label, 'reconnected since the last read')
      }
      const statements = [`BEGIN; EXECUTE kt_lock(${studyLit}); EXECUTE kt_granted`]
      const finish = prelude?.finish
      if (finish) {
        // the next tell in the study's order, and every trial asked so far (ids 0, 1, 2, ... under the lock)
        const [status, loss, values, metrics, checkpoint, error, , , startedAt, finishedAt, durationMs, worker] =
          finishParams({...finish.result, tellSeq: -1, asksBefore: -1})
        statements.push(
          `EXECUTE kt_finish(${[study, finish.trialId, finish.owner, status, loss, values, metrics, checkpoint, error, startedAt, finishedAt, durationMs, worker].map(lit).join(', ')})`,
        )
      }
      if (prelude?.since)
        statements.push(changesSql(prelude.since.askCount, prelude.since.tellSeq), `EXECUTE kt_leases(${studyLit})`)
      const t0 = performance.now()
      const results = (await c.query(statements.join('; '))) as unknown as Array<{
        rows: Array<Record<string, unknown>>
        rowCount: number | null
      }>
      const t1 = performance.now()
      this.counters.lockWaitMs += t1 - t0
      const pending: string[] = []
      const readAfter: Array<{index: number; resolve: (v: unknown) => void; reject: (e: unknown) => void}> = []
      try {
        const locked = results[1].rows[0] as {state: string} | undefined
        // the server's clock once the lock is granted (a FOR UPDATE row's columns may be computed before its wait)
        const nowMs = Number(results[2].rows[0].now_ms)
        const finished = new Set<number>()
        let recorded: boolean | undefined
        /** Whether the section changed anything, and the row its durability barrier may stamp (see DURABILITY_BARRIER). */
        let wrote = false
        let stamp: number | undefined
        if (finish) {
          recorded = results[3].rowCount === 1
          wrote = recorded
          if (recorded) stamp = finish.trialId
          if (recorded) {
            notify = true
            finished.add(finish.trialId)
          }
        }
        const prefetched = prelude?.since ? results[results.length - 2].rows : undefined
        const leaseOf = (r: Record<string, unknown>): Lease => ({
          id: Number(r.id),
          owner: (r.owner as string | null) ?? null,
          heartbeatMs: r.heartbeat_ms === null || r.heartbeat_ms === undefined ? null : Number(r.heartbeat_ms),
          attempts: Number(r.attempts ?? 1),
        })
        let running: Lease[] | undefined = prelude?.since ? results[results.length - 1].rows.map(leaseOf) : undefined
        const tx: StudyTx = {
          nowMs,
          changeMark,
          recorded,
          state: locked?.state ?? 'missing',
          changes: async (askCount, tellSeq) => {
            const since = prelude?.since
            const rows =
              since && since.askCount === askCount && since.tellSeq === tellSeq
                ? prefetched!
                : (await c.query(changesSql(askCount, tellSeq))).rows
            return rows.map((r) => trialFromRow(this.label, r))
          },
          leases: async (): Promise<Lease[]> => {
            running ??= (await c.query(`EXECUTE kt_leases(${studyLit})`)).rows.map(leaseOf)
            return running.filter((l) => !finished.has(l.id))
          },
          insertTrial: async (trial: NewTrial, owner, startedAt) => {
            const args = [
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
            ]
            pending.push(`EXECUTE kt_insert(${args.map(lit).join(', ')})`)
            wrote = true
            stamp = trial.id
          },
          claim: async (trialId, owner, startedAt) => {
            pending.push(`EXECUTE kt_claim(${[study, trialId, owner, startedAt, nowMs].map(lit).join(', ')})`)
            wrote = true
            stamp = trialId
          },
          finish: async (trialId, owner, r: FinishedTrial) => {
            // the tell and its notification in one statement (NOTIFY is delivered at COMMIT)
            const res = await c.query(
              `WITH u AS (UPDATE kt_trials SET status = $1, loss = $2, objective_values = $3, metrics = $4, checkpoint = $5, error = $6,
                 tell_seq = $7, asks_before = $8, started_at = $9, finished_at = $10, duration_ms = $11, worker = $12, heartbeat_ms = NULL
               WHERE study = $13 AND id = $14 AND status = 'running' AND owner = $15 RETURNING id)
               SELECT id, pg_notify($16, $13) FROM u`,
              [...finishParams(r), study, trialId, owner, CHANNEL],
            )
            if (res.rowCount === 1) {
              notify = true
              wrote = true
              stamp ??= trialId
              finished.add(trialId)
            }
            return res.rowCount === 1
          },
          checkpointAfterCommit: (trialId) => {
            const read = new Promise<unknown>((resolve, reject) => {
              readAfter.push({index: pending.length, resolve, reject})
              pending.push(
                `SELECT checkpoint FROM kt_trials WHERE study = ${studyLit} AND id = ${lit(trialId)} AND status = 'ok'`,
              )
            })
            // a section that fails rejects it; the caller then never sees it
            read.catch(() => undefined)
            return read
          },
          setState: async (state, now) => {
            pending.push(
              `UPDATE kt_studies SET state = ${lit(state)}, updated_at = ${lit(now)} WHERE name = ${studyLit}`,
            )
            wrote = true
          },
          notify: async () => {
            if (notify) return
            notify = true
            pending.push(`SELECT pg_notify(${lit(CHANNEL)}, ${studyLit})`)
            wrote = true
          },
        }
        let result: T
        try {
          result = await fn(tx)
          // A section that wrote commits asynchronously (the lock is released before the WAL flush,
          // which is then out of the path every worker queues on) and is made durable by the
          // barrier that follows in the same message: see DURABILITY_BARRIER. Any other reads the
          // clock after its (synchronous) commit: the end of its hold.
          const barrier = wrote && stamp !== undefined
          const tail = barrier
            ? ['SET LOCAL synchronous_commit = off', 'COMMIT', `EXECUTE kt_barrier(${studyLit}, ${lit(stamp)})`]
            : ['COMMIT', 'EXECUTE kt_granted']
          const sent = performance.now()
          const commit = c.query([...pending, ...tail].join('; '))
          // the caller may go on (start the trial it was handed) while the server makes this durable
          committing?.(result)
          const done = await commit
          // one result per statement when several were sent
          const parts = (Array.isArray(done) ? done : [done]) as Array<{
            rows: Array<{checkpoint?: string | null; now_ms?: number}>
          }>
          // a barrier that changed no row wrote no WAL: the section would not be known durable
          if (parts[parts.length - 1].rows.length !== 1)
            throw new Error(
              `${this.label}: study ${study}: trial ${stamp} vanished before its section was made durable`,
            )
          this.counters.durableMs += performance.now() - sent
          // held from the grant to the commit's end, both on the server's clock
          this.counters.lockHeldMs += Math.max(0, Number(parts[parts.length - 1].rows[0].now_ms) - nowMs)
          for (const r of readAfter) {
            const text = parts[r.index]?.rows[0]?.checkpoint
            r.resolve(text ? JSON.parse(text) : undefined)
          }
        } catch (error) {
          for (const r of readAfter) r.reject(error)
          throw error
        }
        return result
      } catch (error) {
        if (!isConnectionLoss(error)) await c.query('ROLLBACK').catch(() => undefined)
        throw error
      }
    })
    if (notify) this.wakeFor(study).fire()
    return out
  }

  async heartbeat(study: string, owner: string): Promise<void> {
    await this.use((c) =>
      c.query(
        "UPDATE kt_trials SET heartbeat_ms = extract(epoch from clock_timestamp()) * 1000 WHERE study = $1 AND owner = $2 AND status = 'running'",
        [study, owner],
      ),
    )
  }

  async releaseLeases(study: string, owner: string): Promise<void> {
    await this.use(async (c) => {
      const res = await c.query(
        "UPDATE kt_trials SET owner = NULL, heartbeat_ms = NULL WHERE study = $1 AND owner = $2 AND status = 'running'",
        [study, owner],
      )
      if ((res.rowCount ?? 0) > 0) await c.query('SELECT pg_notify($1, $2)', [CHANNEL, study])
    })
  }

  private wakeFor(study: string): LocalWake {
    let wake = this.wakes.get(study)
    if (!wake) this.wakes.set(study, (wake = new LocalWake()))
    return wake
  }

  /** The notification connection, (re)made on demand (not yet listening); undefined while the server is unreachable. */
  private async listen(): Promise<pg.Client | undefined> {
    if (this.listener) return this.listener
    if (Date.now() - this.listenerFailedAt < FALLBACK_POLL_MS) return undefined
    try {
      const client = await this.connect()
      client.on('notification', (msg) => {
        if (msg.channel === CHANNEL && msg.payload) this.wakes.get(msg.payload)?.fire()
      })
      const lost = (): void => {
        if (this.listener !== client) return
        this.listener = undefined
        this.listening = false
        // waiters look again (and listen on a new connection) instead of sleeping out their timeout
        for (const wake of this.wakes.values()) wake.fire()
      }
      client.on('error', () => {
        this.listenerFailedAt = Date.now()
        lost()
      })
      client.on('end', lost)
      this.listener = client
      return client
    } catch {
      this.listenerFailedAt = Date.now()
      return undefined
    }
  }

  private startListening(client: pg.Client): Promise<void> {
    this.startingToListen ??= client
      .query(`LISTEN ${CHANNEL}`)
      .then(() => {
        if (this.listener === client) this.listening = true
      })
      .catch(() => undefined)
      .finally(() => (this.startingToListen = undefined))
    return this.startingToListen
  }

  private stopListening(): void {
    const client = this.listener
    this.listening = false
    // queued behind nothing that matters: a later LISTEN on this client is sent after it
    void client?.query(`UNLISTEN ${CHANNEL}`).catch(() => undefined)
  }

  async waitForChange(study: string, timeoutMs: number, signal?: AbortSignal, changeMark?: number): Promise<void> {
    const wake = this.wakeFor(study)
    const listener = await this.listen()
    if (!listener) {
      await sleep(Math.min(timeoutMs, FALLBACK_POLL_MS), signal)
      return
    }
    this.lastWaitMs = Date.now()
    if (!this.listening) {
      // from now on every tell is notified: look again at once, then wait
      await this.startListening(listener)
      if (!this.listening) await sleep(Math.min(timeoutMs, FALLBACK_POLL_MS), signal)
      return
    }
    if (changeMark === NOT_LISTENING) return
    this.waiters++
    try {
      await wake.wait(timeoutMs, signal, changeMark)
    } finally {
      this.waiters--
      this.lastWaitMs = Date.now()
    }
  }

  coordinationStats(): CoordinationStats {
    return {...this.counters}
  }

  async close(): Promise<void> {
    this.closed = true
    const clients = [this.client, this.listener]
    this.client = undefined
    this.listener = undefined
    for (const wake of this.wakes.values()) wake.fire()
    await Promise.all(clients.map((c) => c?.end().catch(() => undefined)))
  }
}
