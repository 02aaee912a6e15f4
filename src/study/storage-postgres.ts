/**
 * The study store on a PostgreSQL server (`--storage postgresql://user[:password]@host:port/db`,
 * the `pg` client), for studies whose workers run on many machines. Its SQL is storage-sql.ts's.
 *
 * - kt's tables are prefixed (kt_meta, kt_studies, kt_trials), so a shared database is fine; the
 *   schema is versioned in kt_meta and created on first write under an advisory lock, so two
 *   workers starting together create it once.
 * - A locked section is one transaction holding the study row FOR UPDATE, in two round trips
 *   (storage-postgres-section.ts): every ask, claim and tell of a study is serialized in one order,
 *   and a killed worker's transaction is rolled back and its lock released by the server.
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
import {STUDY_FORMAT, STUDY_FORMAT_VERSION} from './model.js'
import {
  redactStorage,
  StorageUnavailableError,
  type OpenOptions,
  type SectionPrelude,
  type SessionCheck,
  type StudyTx,
} from './storage.js'
import {DIALECTS, SqlStudyStorage, type SqlConnection} from './storage-sql.js'
import {CHANNEL, PostgresSection, SECTION_STATEMENTS} from './storage-postgres-section.js'
import {LocalWake, Mutex, sleep} from './sync.js'

/** Give up connecting after this long (ms): an unreachable server is reported, not waited for. */
const CONNECT_TIMEOUT_MS = 5000
/** Key of the advisory lock held while creating or upgrading kt's schema (any constant unique to kt). */
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

/** Schema upgrades by the version they start from: 2 -> 3 the optimiser's replay hints (older rows keep NULL). */
const MIGRATIONS: Record<string, string> = {'2': 'ALTER TABLE kt_trials ADD COLUMN IF NOT EXISTS ask_hint text'}
/** Versions this kt reads (and upgrades when it writes): the schema has been created by kt since version 2. */
const READABLE_VERSIONS = ['2', STUDY_FORMAT_VERSION]

type PgModule = typeof pg
let pgModule: PgModule | undefined
function loadPg(): PgModule {
  pgModule ??= createRequire(import.meta.url)('pg') as PgModule
  return pgModule
}

/** `?` placeholders as PostgreSQL's `$1, $2, ...` (kt's SQL has no `?` in its literals). */
function numbered(sql: string): string {
  let n = 0
  return sql.replace(/\?/g, () => `$${++n}`)
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

export class PostgresStorage extends SqlStudyStorage {
  readonly kind = 'postgresql' as const
  readonly label: string
  protected readonly dialect = DIALECTS.postgresql
  protected readonly schemaNoun = "kt's study schema"
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
  /** Which connection the main client is (1, 2, ...: one more at each reconnection): see SessionCheck. */
  private session = 0
  /** Connections whose section statements are prepared (SECTION_STATEMENTS). */
  private readonly prepared = new WeakSet<pg.Client>()

  private constructor(private readonly url: string) {
    super()
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
    const storage = new PostgresStorage(spec)
    try {
      storage.client = await storage.connect()
      storage.session++
    } catch (error) {
      throw connectError(storage.label, parsed, error)
    }
    try {
      await storage.use((c) => storage.init(c, options))
    } catch (error) {
      await storage.close()
      if (error instanceof InputError) throw error
      // connected, then lost (a server crash or restart while kt looked at the schema): not a bad database
      if (error instanceof StorageUnavailableError)
        throw new InputError(
          storage.label,
          'a server that stays up while kt opens the study (start again once it is back)',
          `the server went away (${error.reason})`,
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
    // every message sent is one round trip (kt bench workers reports them per trial)
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

  private async init(c: SqlConnection, options: OpenOptions): Promise<void> {
    const [found] = (
      await c.query(
        "SELECT to_regclass('kt_meta')::text AS meta, to_regclass('kt_studies')::text AS studies, to_regclass('kt_trials')::text AS trials",
      )
    ).rows
    const hasMeta = found.meta !== null
    // kt_meta there but a table of it gone (dropped by hand, a partial restore): say which, before any query needs it
    const missing = (['studies', 'trials'] as const).filter((t) => hasMeta && found[t] === null).map((t) => `kt_${t}`)
    if (missing.length > 0)
      throw new InputError(
        this.label,
        "kt's study schema (kt_meta, kt_studies and kt_trials)",
        `no table ${missing.join(' and no table ')} (a damaged schema: restore it, or use another database)`,
      )
    if (!hasMeta && found.studies !== null)
      throw new InputError(
        this.label,
        "kt's study schema (kt_meta with kt_studies)",
        'kt_studies without kt_meta (a damaged or foreign schema)',
      )
    if (!hasMeta && (options.mustExist || options.readonly))
      throw new InputError(
        this.label,
        `a database with kt's study schema (kt_meta, format ${STUDY_FORMAT} version ${STUDY_FORMAT_VERSION}; kt search creates it)`,
        'a database without it',
      )
    const lock = `SELECT pg_advisory_xact_lock(${SCHEMA_LOCK_KEY})`
    await this.checkOrInit(c, {...options, hasMeta}, {lock, readable: READABLE_VERSIONS, migrations: MIGRATIONS})
  }

  /**
   * Runs queries on the (re)connected client, one caller at a time. A lost connection becomes a
   * StorageUnavailableError and the client is dropped, so the next call reconnects.
   */
  private async useClient<T>(fn: (client: pg.Client) => Promise<T>, session?: SessionCheck): Promise<T> {
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

  protected use<T>(fn: (c: SqlConnection) => Promise<T>, session?: SessionCheck): Promise<T> {
    return this.useClient(
      (client) =>
        fn({
          query: async (sql, params = []) => {
            const r = await client.query(numbered(sql), params as unknown[])
            return {rows: r.rows, changes: r.rowCount ?? 0}
          },
        }),
      session,
    )
  }

  private async prepare(c: pg.Client): Promise<void> {
    if (this.prepared.has(c)) return
    await c.query(SECTION_STATEMENTS)
    this.prepared.add(c)
  }

  /** See storage-postgres-section.ts: two round trips, the commit made durable by a barrier after the lock is released. */
  override async withStudyLock<T>(
    study: string,
    fn: (tx: StudyTx) => Promise<T>,
    prelude?: SectionPrelude,
    committing?: (value: T) => void,
  ): Promise<T> {
    const changeMark = this.changeMark(study)
    if (prelude?.session) {
      prelude.session.value ??= this.session
      if (prelude.session.value !== this.session)
        throw new StorageUnavailableError(this.label, 'reconnected since the last read')
    }
    let section: PostgresSection | undefined
    const out = await this.useClient(async (c) => {
      await this.prepare(c)
      section = new PostgresSection(c, study, this.label, this.counters)
      try {
        const result = await fn(await section.begin(prelude, changeMark))
        await section.commit(result, committing)
        return result
      } catch (error) {
        if (!isConnectionLoss(error)) await c.query('ROLLBACK').catch(() => undefined)
        throw error
      }
    })
    if (section?.notified) this.changed(study)
    return out
  }

  protected notifySql(study: string): Array<[string, unknown[]]> {
    return [['SELECT pg_notify(?, ?)', [CHANNEL, study]]]
  }

  protected changed(study: string): void {
    this.wakeFor(study).fire()
  }

  /**
   * A wait after a section must not miss a tell committed after it: it relies on LISTEN being in
   * effect from the section's start; if it is not, the wait looks again at once (and listens).
   */
  protected changeMark(study: string): number {
    const mark = this.listening ? this.wakeFor(study).generation : NOT_LISTENING
    if (this.listening && this.waiters === 0 && Date.now() - this.lastWaitMs > LISTEN_LINGER_MS) this.stopListening()
    return mark
  }

  /** PostgreSQL has no cheap per-database commit counter a client can read: callers read. */
  async changeCounter(): Promise<number | undefined> {
    return undefined
  }

  /** Opens the notification connection and prepares the section's statements, so that a worker's first trial does not pay for them. */
  async warmUp(): Promise<void> {
    await this.listen()
    await this.useClient((c) => this.prepare(c))
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

  async close(): Promise<void> {
    this.closed = true
    const clients = [this.client, this.listener]
    this.client = undefined
    this.listener = undefined
    for (const wake of this.wakes.values()) wake.fire()
    await Promise.all(clients.map((c) => c?.end().catch(() => undefined)))
  }
}
