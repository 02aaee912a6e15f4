/**
 * `kt online serve`: the online learner and the deployed reranker as an HTTP JSON service for
 * many tenants (Node's own http module). Every tenant call goes through the library
 * (src/online/library.ts), exactly as the CLI does; the events of all tenants go to one Journal
 * (src/online/journal.ts: one pwrite and one fdatasync per batch, the tenant logs written behind it),
 * so a batch of requests pays one flush, and a choose or feedback is answered only once durable.
 *
 * Endpoints (src/online/README.md, "The service", has the request and response bodies):
 *   POST /tenants                 create a tenant {tenant, profile?|config?, ...TenantSpec}
 *   GET  /tenants/{id}            status
 *   POST /tenants/{id}/choose     {query_id?, type?} -> configuration and query id
 *   POST /tenants/{id}/feedback   {query_id, used: true} | {query_id, label: G}
 *   GET  /rerank                  the deployed model: version, feature names
 *   POST /rerank                  {features: [[...], ...]} (or float64 rows as application/octet-stream) -> scores, order
 *   POST /noop                    reads the body and answers {} (the HTTP overhead reference of `kt bench serve`)
 *   GET  /healthz, GET /metrics   liveness; Prometheus text
 *
 * Errors are JSON {error: {code, message, retry}} with a 4xx status (429 with Retry-After for a
 * connection over the limit), 503 (with Retry-After) when the server cannot apply the request
 * now and it may be sent again, or 500 when the fault is on the server (a damaged tenant state:
 * the client's message names no server path, the log line has the whole error); each is logged
 * as one JSON line.
 */
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import type {Socket} from 'node:net'
import {statSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import type {Journal} from '../journal.js'
import {OnlineError, SERVER_SIDE_CODES, Tenant, openJournal, openTenant, type TenantSpec} from '../library.js'
import {validateTenantId} from '../store.js'
import {GateRefusedError} from '../../deploy/gate.js'
import {InputError, describeValue} from '../../util/errors.js'
import {parseJsonText} from '../../util/json.js'
import {bearerToken, checkBind, hostRefusal, tokenMatches} from '../../util/loopback.js'
import {snakeKeys} from '../../util/json-keys.js'
import {ServiceMetrics} from './metrics.js'
import {
  DEFAULT_IDLE_TENANT_MS,
  DEFAULT_MAX_PENDING_PER_TENANT,
  DEFAULT_MAX_PENDING_TOTAL,
  IDLE_CHECK_MS,
  TenantMemory,
} from './memory.js'
import {PackedEnsemble} from '../../rank/packed.js'
import {bestFirst} from '../../rank/apply.js'
import {fromSavedModel} from '../../rank/model.js'
import {currentVersion, readRegistry, readVersionModel, REGISTRY_INDEX} from '../../rank/registry.js'

/** Largest request body (the issue: a body over 1 MB is refused). */
const MAX_BODY_BYTES = 1024 * 1024
/**
 * Open connections at most; beyond it a new connection is answered 429 Too Many Requests (with
 * Retry-After: the client's to slow down, RFC 6585) and closed. 10,000 is the issue's flood size;
 * the process's file-descriptor limit caps it (minus FD_RESERVE).
 */
export const DEFAULT_MAX_CONNECTIONS = 10_000
/**
 * Descriptors kept for tenant logs, snapshots and the registry when the connection limit is derived
 * from the fd limit: this many, or half the limit when the limit is under twice this (a limit of
 * 1024, common by default, left 1 connection when the whole 1024 was reserved: review S#5).
 */
const FD_RESERVE = 1024
/** Of the reserve, descriptors not for tenant logs: the journal's segments, snapshot temp files, the registry, the listening socket, stdio. */
export const FD_HEADROOM = 64

/**
 * The server's descriptor budget under an open-file limit: open connections at most, open tenants
 * at most (each holds its log open), and whether the limit is below what the defaults assume.
 */
export function fdBudget(
  fdLimit: number | undefined,
  maxConnections?: number,
): {connections: number; tenants: number; constrained: boolean} {
  if (fdLimit === undefined)
    return {
      connections: maxConnections ?? DEFAULT_MAX_CONNECTIONS,
      tenants: Number.POSITIVE_INFINITY,
      constrained: false,
    }
  const reserve = Math.min(FD_RESERVE, Math.floor(fdLimit / 2))
  const derived = Math.max(1, Math.min(DEFAULT_MAX_CONNECTIONS, fdLimit - reserve))
  const connections = maxConnections ?? derived
  // every descriptor connections cannot take is for tenants (their logs), less the headroom; an
  // explicit --max-connections above what the limit allows still leaves tenants the reserve
  const tenants = Math.max(1, fdLimit - Math.min(connections, derived) - FD_HEADROOM)
  // worth a warning: the default cannot reach DEFAULT_MAX_CONNECTIONS, or an explicit limit exceeds what the fd limit allows
  const constrained =
    maxConnections === undefined ? fdLimit < DEFAULT_MAX_CONNECTIONS + FD_RESERVE : maxConnections > derived
  return {connections, tenants, constrained}
}
/** A connection with no traffic for this long is closed (idle floods cannot hold slots forever). */
const IDLE_TIMEOUT_MS = 30_000
/** Complete request headers must arrive within this (slow-header floods). */
const HEADERS_TIMEOUT_MS = 10_000
/** The whole request, body included, must arrive within this (slow-body floods). */
const REQUEST_TIMEOUT_MS = 30_000
/**
 * How often Node checks connections against those two limits. Its default, 30 s, let a slow
 * request live up to 30 s past HEADERS_TIMEOUT_MS (cut after about 27 s, not 10); checked every
 * second, a request is cut within a second of its limit.
 */
const TIMEOUT_CHECK_MS = 1000
/** How often the deployed reranker's registry index is checked for a new version. */
export const REGISTRY_CHECK_MS = 1000
/** Candidates per /rerank request at most (the body limit bounds it too). */
const MAX_RERANK_CANDIDATES = 10_000
/** Float64 rows can be copied byte for byte into a Float64Array on a little-endian machine. */
/**
 * After SIGTERM, connections still open this long are closed (requests in flight had their
 * chance: a journal flush takes milliseconds). Keep-alive clients that keep retrying would
 * otherwise hold the server open until a supervisor's SIGKILL (Docker waits 10 s), which skips the
 * snapshots.
 */
export const SHUTDOWN_GRACE_MS = 2000
/** Retry-After (seconds) sent with 429 and 503 answers. */
const RETRY_AFTER_S = 1

export interface ServeOptions {
  dir: string
  host?: string
  port?: number
  /** Required unless host is a loopback address: clients send `Authorization: Bearer <token>`. */
  token?: string
  /** Reranker registry (POST /rerank serves its current version); absent: /rerank answers 503 no_model. */
  registry?: string
  maxBodyBytes?: number
  maxConnections?: number
  /** The open-file limit the descriptor budget is derived from (default: the process's, from /proc/self/limits). */
  fdLimit?: number
  idleTimeoutMs?: number
  /** Defaults HEADERS_TIMEOUT_MS and REQUEST_TIMEOUT_MS (408 when exceeded; checked every TIMEOUT_CHECK_MS or a quarter of the headers timeout, whichever is shorter). */
  headersTimeoutMs?: number
  requestTimeoutMs?: number
  snapshotEvery?: number
  /** Remembered queries per open tenant at most (default DEFAULT_MAX_PENDING_PER_TENANT; src/online/serve/memory.ts). */
  maxPendingPerTenant?: number
  /** Remembered queries over all open tenants at most (default DEFAULT_MAX_PENDING_TOTAL). */
  maxPendingTotal?: number
  /** A tenant with no request for this long is closed (default DEFAULT_IDLE_TENANT_MS). */
  idleTenantMs?: number
  /** Bytes of one journal segment (default SEGMENT_BYTES; smaller ones reach checkpoints, and a full disk, sooner). */
  segmentBytes?: number
  /**
   * Origins (scheme://host[:port], as browsers send them) whose requests are served; a request with
   * any other Origin header is refused 403 (a web page's cross-site request: CSRF). Default none.
   */
  allowOrigins?: string[]
  /** One line per error (default: stderr). */
  log?: (line: string) => void
}

export interface RunningServer {
  readonly server: Server
  readonly port: number
  readonly host: string
  readonly url: string
  readonly metrics: ServiceMetrics
  /** The write-ahead journal every tenant's events go through (one fdatasync per batch). */
  readonly journal: Journal
  /** Stops accepting, lets requests in flight finish, closes every tenant (snapshots). */
  close(): Promise<void>
}

/**
 * The media type of a request body (Content-Type without parameters, lower case), or '' when none
 * is declared. JSON endpoints take application/json only: a browser sends text/plain, form
 * encodings and multipart across sites without asking first (no CORS preflight), application/json
 * never, so the check keeps web pages from posting to the service.
 */
function mediaType(req: IncomingMessage): string {
  const value = req.headers['content-type']
  if (value === undefined) return ''
  if (value === 'application/json') return value
  const semi = value.indexOf(';')
  return (semi < 0 ? value : value.slice(0, semi)).trim().toLowerCase()
}

/** The soft limit on open files from /proc/self/limits, or undefined. */
function openFileLimit(): number | undefined {
  try {
    const m = /Max open files\s+(\d+)/.exec(readFileSync('/proc/self/limits', 'utf8'))
    return m ? Number(m[1]) : undefined
  } catch {
    return undefined
  }
}

/** An HTTP answer to an error: status, code, message, and whether to retry. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retry = false,
    /** What the log line says instead of the message (server paths the client is not shown). */
    readonly logMessage = message,
  ) {
    super(message)
  }
}

/** The client's message for a server-side OnlineError (SERVER_SIDE_CODES); the log keeps the error's own, which names server paths. */
const SERVER_SIDE_MESSAGE: Record<string, string> = {
  state_damaged:
    "the tenant's stored state does not read back as it was written: the operator must restore it (the server's log names the file)",
  storage_failed: "the tenant's folder cannot be read or written on the server (the server's log says why)",
}

/** A profile the deploy gate refuses (POST /tenants): the request is well formed, its content is not accepted. */
const GATE_REFUSED_STATUS = 422
/** What a refused profile's answer says to do: the service does not force (see createTenant). */
const SERVICE_GATE_HINT =
  'the service does not force past the gate: an operator can, with kt online init --profile FILE --force --reason "why" --dir <the server\'s --dir>'

const ONLINE_STATUS: Record<string, number> = {
  bad_request: 400,
  unknown_tenant: 404,
  unknown_query: 404,
  tenant_exists: 409,
  already_settled: 409,
  duplicate_query_id: 409,
  not_accepted: 422,
  tenant_busy: 503,
  not_durable: 503,
}

/** The deployed reranker, re-read when the registry index changes; scored by its packed ensemble (src/rank/packed.ts). */
class RerankerHolder {
  private checkedAt = 0
  private indexMtime = -1
  model: {version: string; packed: PackedEnsemble; featureNames: string[]} | null = null
  /**
   * Set while the registry's last change could not be read (a garbage index, a bad model file):
   * the last good model keeps serving (a broken deploy must not take ranking down; `kt rerank
   * deploy` checks what it writes, so this is damage on disk), health and metrics say so, and the
   * error is logged once per change. No good model yet: /rerank answers 503 model_unavailable.
   */
  damaged: string | undefined

  constructor(
    private readonly dir: string | undefined,
    private readonly onError: (message: string, serving: string | null) => void = () => undefined,
  ) {
    this.refresh(true)
  }

  /** For /healthz: current (serving the registry's version), stale (serving an older one), unavailable, none. */
  get state(): 'current' | 'stale' | 'unavailable' | 'none' {
    if (this.damaged !== undefined) return this.model ? 'stale' : 'unavailable'
    return this.model ? 'current' : 'none'
  }

  refresh(force = false): void {
    if (!this.dir) return
    const now = Date.now()
    if (!force && now - this.checkedAt < REGISTRY_CHECK_MS) return
    this.checkedAt = now
    let mtime: number
    try {
      mtime = statSync(join(this.dir, REGISTRY_INDEX)).mtimeMs
    } catch {
      // no index: nothing deployed (not damage)
      this.model = null
      this.damaged = undefined
      this.indexMtime = -1
      return
    }
    if (mtime === this.indexMtime) return
    this.indexMtime = mtime
    try {
      const version = currentVersion(readRegistry(this.dir))
      if (!version) {
        this.model = null
        this.damaged = undefined
        return
      }
      const saved = readVersionModel(this.dir, version)
      const packed = new PackedEnsemble(fromSavedModel(saved))
      this.model = {version: version.id, packed, featureNames: saved.feature_names}
      this.damaged = undefined
    } catch (error) {
      // logged once: the index is read again only when it changes
      this.damaged = (error as Error)?.message ?? String(error)
      this.onError(this.damaged, this.model?.version ?? null)
    }
  }
}

/** The rows of a parsed `{features: [[...], ...]}` body, row-major; null is a missing value (NaN goes right at every split, as in training). */
function rowsFromJson(parsed: unknown, width: number): Float64Array {
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
    for (const key of Object.keys(parsed))
      if (key !== 'features')
        throw new HttpError(
          400,
          'bad_request',
          `POST /rerank: ${key.slice(0, 40)}: expected only features, got an unknown field`,
        )
  const features = (parsed as {features?: unknown} | null)?.features
  if (!Array.isArray(features) || features.length === 0 || features.length > MAX_RERANK_CANDIDATES)
    throw new HttpError(
      400,
      'bad_request',
      `POST /rerank: features: expected 1..${MAX_RERANK_CANDIDATES} rows, got ${describeValue(features)}`,
    )
  const count = features.length
  const rows = new Float64Array(count * width)
  for (let r = 0; r < count; r++) {
    const row = features[r]
    if (!Array.isArray(row) || row.length !== width)
      throw new HttpError(
        400,
        'bad_request',
        `POST /rerank: features[${r}]: expected ${width} numbers (the model's feature_names), got ${describeValue(row)}`,
      )
    for (let f = 0; f < width; f++) {
      const v = row[f]
      // JSON.parse reads 1e400 as Infinity; kt rerank train refuses it too
      if (v !== null && (typeof v !== 'number' || !Number.isFinite(v)))
        throw new HttpError(
          400,
          'bad_request',
          `POST /rerank: features[${r}][${f}]: expected a finite number or null, got ${describeValue(v)}`,
        )
      rows[r * width + f] = v === null ? Number.NaN : v
    }
  }
  return rows
}

/**
 * Float64 little-endian rows, back to back, checked as the JSON path checks its rows: NaN is a
 * missing value (JSON's null: it goes right at every split), +-Infinity is refused (the JSON path
 * refuses 1e400, which JSON.parse reads as Infinity; kt rerank train refuses non-finite features).
 */
function rowsFromFloat64(body: Buffer, width: number): Float64Array {
  if (body.length % (8 * width) !== 0 || body.length === 0)
    throw new HttpError(
      400,
      'bad_request',
      `POST /rerank: expected float64 rows of ${width} values (${8 * width} bytes each), got ${body.length} bytes`,
    )
  const count = body.length / (8 * width)
  if (count > MAX_RERANK_CANDIDATES)
    throw new HttpError(
      400,
      'bad_request',
      `POST /rerank: expected at most ${MAX_RERANK_CANDIDATES} rows, got ${count}`,
    )
  const rows = new Float64Array(count * width)
  for (let i = 0; i < rows.length; i++) {
    const v = body.readDoubleLE(i * 8)
    if (v === Number.POSITIVE_INFINITY || v === Number.NEGATIVE_INFINITY)
      throw new HttpError(
        400,
        'bad_request',
        `POST /rerank: features[${Math.floor(i / width)}][${i % width}]: expected a finite number or NaN (a missing value, as null in JSON), got ${describeValue(v)}`,
      )
    rows[i] = v
  }
  return rows
}

function jsonError(code: string, message: string, retry: boolean): string {
  return JSON.stringify({error: {code, message, retry}})
}

export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1'
  const token = options.token
  checkBind(host, token)
  const maxBody = options.maxBodyBytes ?? MAX_BODY_BYTES
  const fdLimit = options.fdLimit ?? openFileLimit()
  const budget = fdBudget(fdLimit, options.maxConnections)
  const maxConnections = budget.connections
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`))
  const metrics = new ServiceMetrics()
  const logLine = (fields: Record<string, unknown>): void =>
    log(JSON.stringify({t: new Date().toISOString(), ...fields}))
  if (budget.constrained)
    logLine({
      level: 'warn',
      code: 'fd_limit',
      message: `the open-file limit is ${fdLimit}: at most ${maxConnections} open connections and ${budget.tenants} open tenants (raise it, e.g. ulimit -n ${DEFAULT_MAX_CONNECTIONS + FD_RESERVE}, for ${DEFAULT_MAX_CONNECTIONS} connections)`,
    })
  // Events dead servers journaled go to their tenants' logs first; then this server's own journal.
  const {journal, recovery} = openJournal(options.dir, {log, segmentBytes: options.segmentBytes})
  for (const o of recovery.orphaned)
    logLine({
      level: 'warn',
      code: 'journal_records_orphaned',
      message: `${o.records} acknowledged journal record(s) of tenant ${o.tenant} not applied: its log no longer exists (the tenant's folder was removed)`,
    })
  if (recovery.segments > 0)
    logLine({
      level: 'info',
      code: 'journal_recovered',
      message: `${recovery.segments} journal segment(s) of dead processes: ${recovery.appended} lines appended to ${recovery.tenants} tenant logs, ${recovery.torn} torn last batch(es) dropped (never acknowledged)${recovery.busy.length > 0 ? `; kept for busy tenants ${recovery.busy.join(', ')}` : ''}`,
    })
  journal.onBatch = (_commits, ms) => metrics.commitBatch.observe(ms / 1000)
  const tenants = new Map<string, Tenant>()
  const memory = new TenantMemory(tenants, {
    perTenant: options.maxPendingPerTenant ?? DEFAULT_MAX_PENDING_PER_TENANT,
    total: options.maxPendingTotal ?? DEFAULT_MAX_PENDING_TOTAL,
    idleMs: options.idleTenantMs ?? DEFAULT_IDLE_TENANT_MS,
  })
  const idleCheck = setInterval(() => memory.closeIdle(), Math.min(IDLE_CHECK_MS, memory.limits.idleMs))
  idleCheck.unref()
  const reranker = new RerankerHolder(options.registry, (message, serving) => {
    metrics.registryErrors++
    logLine({
      level: 'error',
      code: 'registry_damaged',
      message: `reranker registry: ${message}`.slice(0, 1000),
      serving,
    })
  })
  const expectedAuth = token === undefined ? undefined : Buffer.from(token)
  const allowOrigins = new Set(options.allowOrigins ?? [])
  let closing = false

  /** Each open tenant holds its log's descriptor: past the budget, a clear 503 instead of EMFILE from deep in the store. */
  const checkTenantRoom = (id: string): void => {
    if (tenants.size >= budget.tenants)
      throw new HttpError(
        503,
        'too_many_tenants',
        `tenant ${id}: expected at most ${budget.tenants} tenants open in this server (open-file limit ${fdLimit}): raise ulimit -n, or spread tenants over servers with their own --dir`,
        false,
      )
  }

  const tenantOf = (id: string): Tenant => {
    if (journal.failed)
      throw new OnlineError(
        'not_durable',
        "the server's journal",
        'a journal that can be synced (restart the server: recovery reads the journal)',
        journal.failed.message.split('\n')[0],
      )
    let tenant = tenants.get(id)
    if (tenant?.failed) {
      tenant.abandon()
      tenants.delete(id)
      tenant = undefined
    }
    if (!tenant) {
      checkTenantRoom(id)
      // No waiting for a lock another process holds: the wait would block every tenant's requests; 503 tenant_busy instead (a dead owner's lock is taken over at once)
      tenant = openTenant({dir: options.dir, tenant: id, journal, snapshotEvery: options.snapshotEvery, lockWaitMs: 0})
      tenants.set(id, tenant)
    }
    return tenant
  }

  /** A request's body, refused past maxBody (413) whether or not it declared its length. */
  const readBody = (req: IncomingMessage): Promise<Buffer> =>
    new Promise((resolve, reject) => {
      const declared = Number(req.headers['content-length'])
      if (declared > maxBody) {
        reject(new HttpError(413, 'body_too_large', `request body: expected at most ${maxBody} bytes, got ${declared}`))
        return
      }
      const chunks: Buffer[] = []
      let size = 0
      let failed = false
      req.on('data', (chunk: Buffer) => {
        if (failed) return
        size += chunk.length
        if (size > maxBody) {
          failed = true
          reject(new HttpError(413, 'body_too_large', `request body: expected at most ${maxBody} bytes, got more`))
          return
        }
        chunks.push(chunk)
      })
      req.on('end', () => {
        if (!failed) resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size))
      })
      req.on('error', (error) => {
        if (!failed) reject(new HttpError(400, 'bad_request', `request body: ${error.message}`))
      })
    })

  const parseJson = (body: Buffer, what: string): unknown => {
    if (body.length === 0) throw new HttpError(400, 'bad_request', `${what}: expected a JSON body, got nothing`)
    // kt's one JSON reader: nesting beyond MAX_JSON_DEPTH is refused before anything recursive
    // (describeValue, the tenant's checks) walks the value; its InputError answers 400
    return parseJsonText(what, body.toString('utf8'), {expected: 'JSON'})
  }

  const createTenant = (body: unknown): {status: number; body: unknown} => {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw new HttpError(
        400,
        'bad_request',
        `POST /tenants: expected an object {tenant, ...}, got ${describeValue(body)}`,
      )
    const {tenant: id, profile, config, ...rest} = body as Record<string, unknown>
    if (typeof id !== 'string')
      throw new HttpError(400, 'bad_request', `POST /tenants: tenant: expected a tenant id, got ${describeValue(id)}`)
    validateTenantId(id)
    if (profile !== undefined && config !== undefined)
      throw new HttpError(
        400,
        'bad_request',
        'POST /tenants: expected profile (a kt_profile document) or config (a configuration), not both',
      )
    // Forcing past the deploy gate is an operator's decision at the CLI (kt online init --force --reason), never a client's: a force baked into a client would let every later refused profile through.
    for (const key of ['force', 'reason'])
      if (key in rest)
        throw new HttpError(
          400,
          'bad_request',
          `POST /tenants: ${key}: expected no ${key} (the service does not force past the deploy gate: an operator can, with kt online init --profile FILE --force --reason "why" --dir <the server's --dir>), got ${describeValue(rest[key])}`,
        )
    const spec: TenantSpec = rest as TenantSpec
    if (config !== undefined) spec.profile = config as TenantSpec['profile']
    if (journal.failed)
      throw new OnlineError(
        'not_durable',
        "the server's journal",
        'a journal that can be synced (restart the server: recovery reads the journal)',
        journal.failed.message.split('\n')[0],
      )
    if (tenants.has(id))
      throw new OnlineError('tenant_exists', `tenant ${id}`, 'a new tenant id', 'a tenant with that id')
    checkTenantRoom(id)
    // a profile goes through THE profile loader and THE deploy gate in openTenant (refused: 422 gate_refused)
    const fromProfile =
      profile === undefined
        ? undefined
        : {document: profile, file: 'POST /tenants: profile', hint: SERVICE_GATE_HINT, perTypeName: 'per_type: true'}
    // lockWaitMs 0 as in tenantOf: a busy-wait for a lock another process holds (the tenant's, the engine tables') would freeze every tenant's requests
    const tenant = openTenant({
      dir: options.dir,
      tenant: id,
      create: spec,
      fromProfile,
      journal,
      snapshotEvery: options.snapshotEvery,
      lockWaitMs: 0,
    })
    tenants.set(id, tenant)
    const bandit = tenant.store.learner.bandit
    const origin = tenant.store.learner.init.origin
    return {
      status: 201,
      body: {
        tenant: id,
        space: bandit.space.id,
        dimensions: bandit.dims.map((d) => ({key: d.key, arms: d.values})),
        settings: snakeKeys(bandit.settings),
        ...(origin ? {prior: {...origin, overrides: tenant.store.learner.init.overrides ?? {}}} : {}),
      },
    }
  }

  const modelUnavailable = (what: string): HttpError =>
    new HttpError(
      503,
      'model_unavailable',
      `${what}: expected a readable reranker registry, got one the server cannot read (the server's log says why)`,
      true,
      `${what}: ${reranker.damaged}`,
    )

  const isBinary = (req: IncomingMessage): boolean => mediaType(req) === 'application/octet-stream'

  /** POST /rerank: the scores in row order and the rows best first, from the model current when the request came. */
  const rerankRequest = async (req: IncomingMessage): Promise<string> => {
    reranker.refresh()
    const model = reranker.model
    const body = await readBody(req)
    if (!model && reranker.damaged !== undefined) throw modelUnavailable('POST /rerank')
    if (!model)
      throw new HttpError(
        503,
        'no_model',
        `POST /rerank: expected a deployed reranker in ${options.registry ?? '(no --registry)'}, got none`,
        true,
      )
    const width = model.packed.width
    const rows = isBinary(req) ? rowsFromFloat64(body, width) : rowsFromJson(parseJson(body, 'POST /rerank'), width)
    const count = rows.length / width
    const scores = model.packed.scoreAll(rows, count, new Float64Array(count))
    return JSON.stringify({model: model.version, scores: Array.from(scores), order: bestFirst(scores)})
  }

  /** A JSON endpoint's body type check: 415 for anything but application/json (see mediaType). */
  const expectJson = (req: IncomingMessage, what: string): void => {
    const type = mediaType(req)
    if (type !== 'application/json')
      throw new HttpError(
        415,
        'unsupported_media_type',
        `${what}: expected Content-Type application/json, got ${type === '' ? 'none' : JSON.stringify(type.slice(0, 80))}`,
      )
  }

  const handle = async (
    req: IncomingMessage,
    res: ServerResponse,
    route: {name: string},
  ): Promise<{status: number; body: unknown; text?: string; type?: string}> => {
    const url = req.url ?? '/'
    const q = url.indexOf('?')
    const path = q < 0 ? url : url.slice(0, q)
    const method = req.method ?? 'GET'
    // Web pages on the operator's machine can reach a loopback server: a cross-site request carries
    // an Origin header, a DNS-rebound one a foreign Host (src/online/README.md, "Requests from browsers").
    const origin = req.headers.origin
    if (origin !== undefined && !allowOrigins.has(origin))
      throw new HttpError(
        403,
        'origin_refused',
        `Origin: expected no Origin header (a request from a web page), or one of --allow-origin, got ${JSON.stringify(origin.slice(0, 100))}`,
      )
    if (!expectedAuth) {
      const refused = hostRefusal(req.headers.host)
      if (refused) throw new HttpError(403, 'host_refused', refused)
    }
    if (path === '/healthz') {
      route.name = 'healthz'
      if (method !== 'GET' && method !== 'HEAD') {
        res.setHeader('allow', 'GET, HEAD')
        throw new HttpError(405, 'method_not_allowed', `${path}: expected GET, got ${method}`)
      }
      reranker.refresh()
      // liveness stays 200 while the reranker is stale: a restart would not mend the registry and would lose the good model
      return {
        status: closing ? 503 : 200,
        body: {status: closing ? 'closing' : 'ok', tenants_open: tenants.size, reranker: reranker.state},
      }
    }
    if (expectedAuth) {
      if (!tokenMatches(bearerToken(req.headers.authorization), token!))
        throw new HttpError(401, 'unauthorized', "Authorization: expected Bearer <the server's token>")
    }
    if (closing)
      throw new HttpError(503, 'shutting_down', 'the server is shutting down: retry against its successor', true)
    const parts = path.split('/')
    const expect = (allowed: string): void => {
      if (method !== allowed) {
        res.setHeader('allow', allowed)
        throw new HttpError(405, 'method_not_allowed', `${path}: expected ${allowed}, got ${method}`)
      }
    }
    if (path === '/metrics') {
      route.name = 'metrics'
      expect('GET')
      return {
        status: 200,
        body: null,
        text: metrics.render({
          tenantsOpen: tenants.size,
          memory: {pending: memory.pendingTotal(), evicted: memory.evicted, closedIdle: memory.closedIdle},
          commit: journal.stats,
          modelVersion: reranker.model?.version ?? null,
          registryDamaged: reranker.damaged !== undefined,
        }),
      }
    }
    if (path === '/noop') {
      route.name = 'noop'
      expect('POST')
      await readBody(req)
      return {status: 200, body: {}}
    }
    if (path === '/rerank') {
      route.name = 'rerank'
      if (method === 'GET') {
        reranker.refresh()
        const m = reranker.model
        if (!m && reranker.damaged !== undefined) throw modelUnavailable('GET /rerank')
        if (!m)
          throw new HttpError(
            503,
            'no_model',
            `GET /rerank: expected a deployed reranker in ${options.registry ?? '(no --registry)'}, got none`,
            true,
          )
        return {
          status: 200,
          body: {model: m.version, feature_names: m.featureNames, width: m.packed.width, trees: m.packed.roots.length},
        }
      }
      expect('POST')
      // JSON rows, or float64 rows as application/octet-stream (a type a page can send across sites
      // without a preflight: the Origin and Host checks above keep pages out of this one)
      if (!isBinary(req)) expectJson(req, 'POST /rerank')
      return {status: 200, body: null, text: await rerankRequest(req), type: 'application/json'}
    }
    if (path === '/tenants') {
      route.name = 'create'
      expect('POST')
      expectJson(req, 'POST /tenants')
      const body = parseJson(await readBody(req), 'POST /tenants')
      return createTenant(body)
    }
    if (parts.length >= 3 && parts.length <= 4 && parts[1] === 'tenants') {
      let id: string
      try {
        id = decodeURIComponent(parts[2])
      } catch {
        throw new HttpError(400, 'bad_request', `${path}: expected a tenant id, got a malformed escape`)
      }
      const action = parts[3]
      if (action === undefined) {
        route.name = 'status'
        expect('GET')
        const tenant = tenantOf(id)
        memory.begin(tenant)
        memory.end(tenant, false)
        return {status: 200, body: tenant.status()}
      }
      if (action === 'choose' || action === 'feedback') {
        route.name = action
        expect('POST')
        expectJson(req, `POST /tenants/${id}/${action}`)
        const body = parseJson(await readBody(req), `POST /tenants/${id}/${action}`)
        // Over HTTP the server owns the clock: a client's `now` could move a tenant's time to any year and expire its queries (the library and CLI take one, for simulations).
        if (typeof body === 'object' && body !== null && Object.prototype.hasOwnProperty.call(body, 'now'))
          throw new HttpError(
            400,
            'bad_request',
            `POST /tenants/${id}/${action}: now: expected no client clock (the server stamps each event with its own time), got ${describeValue((body as {now: unknown}).now)}`,
          )
        const tenant = tenantOf(id)
        memory.begin(tenant)
        let chose = false
        let outcome
        try {
          if (action === 'choose') {
            const choice = await tenant.choose(body as object)
            chose = true
            return {status: 200, body: choice}
          }
          outcome = await tenant.feedback(body as {query_id: string})
        } finally {
          memory.end(tenant, chose)
        }
        if (outcome.verdict !== 'applied')
          throw new HttpError(
            409,
            'already_settled',
            `feedback for query ${outcome.query_id}: expected a query awaiting this feedback, got ${outcome.verdict} (counted and ignored; after a retry, a duplicate means the first attempt was applied)`,
          )
        return {status: 200, body: outcome}
      }
    }
    throw new HttpError(
      404,
      'not_found',
      `${method} ${path}: expected one of POST /tenants, GET /tenants/{id}, POST /tenants/{id}/choose, POST /tenants/{id}/feedback, GET|POST /rerank, POST /noop, GET /healthz, GET /metrics`,
    )
  }

  const headersTimeout = options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS
  const requestTimeout = Math.max(headersTimeout, options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS)
  /** Sockets whose request the timeout check cut (clientError answered 408 and logged it). */
  const timedOut = new WeakSet<Socket>()
  const server = createServer(
    {
      keepAliveTimeout: IDLE_TIMEOUT_MS,
      headersTimeout,
      requestTimeout,
      connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_MS, Math.ceil(headersTimeout / 4)),
    },
    (req, res) => {
      const started = performance.now()
      const route = {name: 'other'}
      const finish = (status: number, text: string, type: string, extra?: string[]): void => {
        // a flat [name, value, ...] array: Node copies no object and checks each header once
        const headers = ['content-type', type, 'content-length', String(Buffer.byteLength(text))]
        if (extra) headers.push(...extra)
        // shutting down: every answer ends its connection, so a client that keeps retrying cannot keep the server open
        if (closing && !headers.includes('connection')) headers.push('connection', 'close')
        res.writeHead(status, headers)
        res.end(text)
        metrics.request(route.name, status, (performance.now() - started) / 1000)
      }
      handle(req, res, route).then(
        (out) => {
          if (out.text !== undefined) finish(out.status, out.text, out.type ?? 'text/plain; version=0.0.4')
          else finish(out.status, JSON.stringify(out.body), 'application/json')
        },
        (error: unknown) => {
          if (timedOut.has(req.socket)) {
            // answered 408 and logged by clientError; the body read then failed as aborted: count it once, as 408
            metrics.request(route.name, 408, (performance.now() - started) / 1000)
            return
          }
          let e: HttpError
          if (error instanceof HttpError) e = error
          else if (error instanceof OnlineError && SERVER_SIDE_CODES.has(error.code))
            e = new HttpError(500, error.code, SERVER_SIDE_MESSAGE[error.code], error.retry, error.message)
          else if (error instanceof OnlineError)
            e = new HttpError(ONLINE_STATUS[error.code] ?? 400, error.code, error.message, error.retry)
          else if (error instanceof GateRefusedError) e = new HttpError(GATE_REFUSED_STATUS, error.code, error.message)
          else if (error instanceof InputError) e = new HttpError(400, 'bad_request', error.message)
          else {
            const message = (error as Error)?.message ?? String(error)
            e = new HttpError(500, 'internal', "internal error (the server's log has the details)", false, message)
          }
          logLine({
            level: e.status >= 500 ? 'error' : 'warn',
            method: req.method,
            path: (req.url ?? '').slice(0, 200),
            status: e.status,
            code: e.code,
            message: e.logMessage.slice(0, 500),
          })
          const headers = e.retry ? ['retry-after', String(RETRY_AFTER_S)] : []
          // A refused oversized body is not read to its end: close the connection after answering.
          if (e.status === 413) headers.push('connection', 'close')
          finish(e.status, jsonError(e.code, e.message, e.retry), 'application/json', headers)
          if (e.status === 413) res.on('finish', () => req.socket.destroy())
        },
      )
    },
  )
  // A client that half-closes after its request (shutdown(SHUT_WR)) still gets the answer: Node's
  // default ends the socket at the client's FIN, dropping the answer of a choose already applied.
  ;(server as Server & {httpAllowHalfOpen: boolean}).httpAllowHalfOpen = true
  server.timeout = options.idleTimeoutMs ?? IDLE_TIMEOUT_MS
  const sockets = new Set<Socket>()
  server.on('connection', (socket: Socket) => {
    if (sockets.size >= maxConnections) {
      metrics.connectionsRejected++
      logLine({
        level: 'warn',
        status: 429,
        code: 'overloaded',
        message: `connection refused: ${sockets.size} open connections, the limit is ${maxConnections}`,
      })
      const text = jsonError('overloaded', `expected at most ${maxConnections} open connections: retry later`, true)
      socket.end(
        `HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nretry-after: ${RETRY_AFTER_S}\r\nconnection: close\r\n\r\n${text}`,
      )
      socket.on('error', () => undefined)
      return
    }
    sockets.add(socket)
    metrics.connections = sockets.size
    socket.setNoDelay(true)
    socket.on('close', () => {
      sockets.delete(socket)
      metrics.connections = sockets.size
    })
  })
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    // Malformed HTTP (not a request the handler could see): one line, a JSON 400, close.
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy()
      return
    }
    const code = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400
    if (code === 408) timedOut.add(socket)
    logLine({
      level: 'warn',
      status: code,
      code: 'bad_http',
      message: `${error.code ?? 'malformed request'}: ${error.message}`.slice(0, 300),
    })
    const text = jsonError('bad_http', `expected an HTTP/1.1 request, got ${error.code ?? 'something else'}`, false)
    socket.end(
      `HTTP/1.1 ${code} ${code === 431 ? 'Request Header Fields Too Large' : code === 408 ? 'Request Timeout' : 'Bad Request'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
    )
  })

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen({host, port: options.port ?? 0, backlog: 4096}, () => {
        server.off('error', reject)
        resolve()
      })
    })
  } catch (error) {
    clearInterval(idleCheck)
    await journal.close()
    const code = (error as NodeJS.ErrnoException).code
    const at = `${host.includes(':') ? `[${host}]` : host}:${options.port ?? 0}`
    if (code === 'EADDRINUSE')
      throw new InputError(
        '--port',
        `a port free on ${host}`,
        `${at} already in use (EADDRINUSE: another process listens there)`,
      )
    if (code === 'EACCES')
      throw new InputError(
        '--port',
        `a port this user may bind on ${host} (1024 or above without privileges)`,
        `${at} refused (EACCES)`,
      )
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAFNOSUPPORT')
      throw new InputError('--host', 'an address of this machine', `${host} (${code})`)
    throw error
  }
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 0)
  const shownHost = host.includes(':') ? `[${host}]` : host

  return {
    server,
    port,
    host,
    url: `http://${shownHost}:${port}`,
    metrics,
    journal,
    async close() {
      closing = true
      clearInterval(idleCheck)
      await new Promise<void>((resolve) => {
        const grace = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS)
        server.close(() => {
          clearTimeout(grace)
          resolve()
        })
        server.closeIdleConnections()
      })
      for (const tenant of tenants.values()) {
        if (tenant.failed) tenant.abandon()
        else
          await tenant.close().catch((error: unknown) =>
            // a full disk: the tenant's lines stay in the journal, which recovery applies at the next start
            logLine({
              level: 'error',
              code: 'close_failed',
              message: `tenant ${tenant.id}: ${(error as Error)?.message ?? String(error)}`.slice(0, 500),
            }),
          )
      }
      tenants.clear()
      await journal.close()
    },
  }
}
