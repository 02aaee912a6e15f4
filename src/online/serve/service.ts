/**
 * One running `kt online serve`'s state and its routes: the open tenants (through the library,
 * exactly as the CLI), their memory caps, the journal, the reranker, and the router that checks a
 * request's origin, host and token and hands it to its route. server.ts owns the sockets.
 */
import type {IncomingMessage, ServerResponse} from 'node:http'
import type {Journal} from '../journal.js'
import {Tenant, openJournal, openTenant} from '../library.js'
import {OnlineError} from '../online-error.js'
import type {TenantSpec} from '../tenant-spec.js'
import {validateTenantId} from '../tenant-id.js'
import {describeValue} from '../../util/errors.js'
import {bearerToken, hostRefusal, tokenMatches} from '../../util/loopback.js'
import {snakeKeys} from '../../util/json-keys.js'
import {ServiceMetrics} from './metrics.js'
import {
  DEFAULT_IDLE_TENANT_MS,
  DEFAULT_MAX_PENDING_PER_TENANT,
  DEFAULT_MAX_PENDING_TOTAL,
  IDLE_CHECK_MS,
  TenantMemory,
} from './memory.js'
import {type FdBudget} from './fd-budget.js'
import {type Answer, HttpError, badRequest, expectJson, parseJson, readBody} from './http.js'
import {RerankerHolder, rerankRoute} from './rerank.js'
import type {ServeOptions} from './server.js'

/** Largest request body (the issue: a body over 1 MB is refused). */
const MAX_BODY_BYTES = 1024 * 1024

/** What a refused profile's answer says to do: the service does not force (see createTenant). */
const SERVICE_GATE_HINT =
  'the service does not force past the gate: an operator can, with kt online init --profile FILE --force --reason "why" --dir <the server\'s --dir>'

/** Every route, for the 404's message. */
const ROUTES_TEXT =
  'POST /tenants, GET /tenants/{id}, POST /tenants/{id}/choose, POST /tenants/{id}/feedback, GET|POST /rerank, POST /noop, GET /healthz, GET /metrics'

/** One JSON log line's fields (the line gets its time stamp). */
export type LogLine = (fields: Record<string, unknown>) => void

export class Service {
  readonly metrics = new ServiceMetrics()
  readonly journal: Journal
  readonly tenants = new Map<string, Tenant>()
  readonly memory: TenantMemory
  readonly reranker: RerankerHolder
  closing = false
  private readonly idleCheck: NodeJS.Timeout
  private readonly maxBody: number
  private readonly allowOrigins: Set<string>

  constructor(
    private readonly options: ServeOptions,
    private readonly budget: FdBudget,
    private readonly fdLimit: number | undefined,
    readonly logLine: LogLine,
    log: (line: string) => void,
  ) {
    this.maxBody = options.maxBodyBytes ?? MAX_BODY_BYTES
    this.allowOrigins = new Set(options.allowOrigins ?? [])
    // Events dead servers journaled go to their tenants' logs first; then this server's own journal.
    const {journal, recovery} = openJournal(options.dir, {log, segmentBytes: options.segmentBytes})
    this.journal = journal
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
    journal.onBatch = (_commits, ms) => this.metrics.commitBatch.observe(ms / 1000)
    this.memory = new TenantMemory(this.tenants, {
      perTenant: options.maxPendingPerTenant ?? DEFAULT_MAX_PENDING_PER_TENANT,
      total: options.maxPendingTotal ?? DEFAULT_MAX_PENDING_TOTAL,
      idleMs: options.idleTenantMs ?? DEFAULT_IDLE_TENANT_MS,
    })
    this.idleCheck = setInterval(
      () => {
        if (!this.closing) this.memory.closeIdle()
      },
      Math.min(IDLE_CHECK_MS, this.memory.limits.idleMs),
    )
    this.idleCheck.unref()
    this.reranker = new RerankerHolder(options.registry, (message, serving) => {
      this.metrics.registryErrors++
      logLine({
        level: 'error',
        code: 'registry_damaged',
        message: `reranker registry: ${message}`.slice(0, 1000),
        serving,
      })
    })
  }

  /** Answers one request (or throws what httpErrorOf turns into its answer); `route.name` names it for the metrics. */
  async handle(req: IncomingMessage, res: ServerResponse, route: {name: string}): Promise<Answer> {
    const url = req.url ?? '/'
    const q = url.indexOf('?')
    const path = q < 0 ? url : url.slice(0, q)
    const method = req.method ?? 'GET'
    const token = this.options.token
    // Web pages on the operator's machine can reach a loopback server: a cross-site request carries
    // an Origin header, a DNS-rebound one a foreign Host (src/online/README.md, "Requests from browsers").
    const origin = req.headers.origin
    if (origin !== undefined && !this.allowOrigins.has(origin))
      throw new HttpError(
        403,
        'origin_refused',
        `Origin: expected no Origin header (a request from a web page), or one of --allow-origin, got ${JSON.stringify(origin.slice(0, 100))}`,
      )
    if (token === undefined) {
      const refused = hostRefusal(req.headers.host)
      if (refused) throw new HttpError(403, 'host_refused', refused)
    }
    // `allowed`: the Allow header's list; the message names its first method
    const expect = (allowed: string): void => {
      const methods = allowed.split(', ')
      if (!methods.includes(method)) {
        res.setHeader('allow', allowed)
        throw new HttpError(405, 'method_not_allowed', `${path}: expected ${methods[0]}, got ${method}`)
      }
    }
    if (path === '/healthz') {
      route.name = 'healthz'
      expect('GET, HEAD')
      return this.health()
    }
    if (token !== undefined && !tokenMatches(bearerToken(req.headers.authorization), token))
      throw new HttpError(401, 'unauthorized', "Authorization: expected Bearer <the server's token>")
    if (this.closing)
      throw new HttpError(503, 'shutting_down', 'the server is shutting down: retry against its successor', true)
    const body = (): Promise<Buffer> => readBody(req, this.maxBody)
    const json = async (what: string): Promise<unknown> => {
      expectJson(req, what)
      return parseJson(await body(), what)
    }
    const parts = path.split('/')
    if (path === '/metrics') {
      route.name = 'metrics'
      expect('GET')
      return {status: 200, body: null, text: this.renderMetrics()}
    }
    if (path === '/noop') {
      route.name = 'noop'
      expect('POST')
      await body()
      return {status: 200, body: {}}
    }
    if (path === '/rerank') {
      route.name = 'rerank'
      expect(method === 'GET' ? 'GET' : 'POST')
      return rerankRoute(this.reranker, this.options.registry, req, body)
    }
    if (path === '/tenants') {
      route.name = 'create'
      expect('POST')
      return this.createTenant(await json('POST /tenants'))
    }
    if (parts.length >= 3 && parts.length <= 4 && parts[1] === 'tenants') {
      let id: string
      try {
        id = decodeURIComponent(parts[2])
      } catch {
        throw badRequest(`${path}: expected a tenant id, got a malformed escape`)
      }
      const action = parts[3]
      if (action === undefined) {
        route.name = 'status'
        expect('GET')
        return this.tenantCall(id, false, async (tenant) => ({status: 200, body: tenant.status()}))
      }
      if (action === 'choose' || action === 'feedback') {
        route.name = action
        expect('POST')
        return this.feedbackOrChoose(id, action, await json(`POST /tenants/${id}/${action}`))
      }
    }
    throw new HttpError(404, 'not_found', `${method} ${path}: expected one of ${ROUTES_TEXT}`)
  }

  /** GET /healthz: liveness stays 200 while the reranker is stale (a restart would not mend the registry and would lose the good model). */
  private health(): Answer {
    this.reranker.refresh()
    return {
      status: this.closing ? 503 : 200,
      body: {status: this.closing ? 'closing' : 'ok', tenants_open: this.tenants.size, reranker: this.reranker.state},
    }
  }

  private renderMetrics(): string {
    const {memory, reranker} = this
    return this.metrics.render({
      tenantsOpen: this.tenants.size,
      memory: {pending: memory.pendingTotal(), evicted: memory.evicted, closedIdle: memory.closedIdle},
      commit: this.journal.stats,
      modelVersion: reranker.model?.version ?? null,
      registryDamaged: reranker.damaged !== undefined,
    })
  }

  /** POST /tenants/{id}/choose and /feedback. */
  private feedbackOrChoose(id: string, action: 'choose' | 'feedback', body: unknown): Promise<Answer> {
    // Over HTTP the server owns the clock: a client's `now` could move a tenant's time to any year and expire its queries (the library and CLI take one, for simulations).
    if (typeof body === 'object' && body !== null && Object.prototype.hasOwnProperty.call(body, 'now'))
      throw badRequest(
        `POST /tenants/${id}/${action}: now: expected no client clock (the server stamps each event with its own time), got ${describeValue((body as {now: unknown}).now)}`,
      )
    if (action === 'choose')
      return this.tenantCall(id, true, async (tenant) => ({status: 200, body: await tenant.choose(body as object)}))
    return this.tenantCall(id, false, async (tenant) => {
      const outcome = await tenant.feedback(body as {query_id: string})
      if (outcome.verdict !== 'applied')
        throw new HttpError(
          409,
          'already_settled',
          `feedback for query ${outcome.query_id}: expected a query awaiting this feedback, got ${outcome.verdict} (counted and ignored; after a retry, a duplicate means the first attempt was applied)`,
        )
      return {status: 200, body: outcome}
    })
  }

  /** Runs `call` on an open tenant, its use counted for the idle check; after a choose that succeeded, the memory caps apply. */
  private async tenantCall(id: string, choose: boolean, call: (tenant: Tenant) => Promise<Answer>): Promise<Answer> {
    const tenant = this.tenantOf(id)
    this.memory.begin(tenant)
    let chose = false
    try {
      const answer = await call(tenant)
      chose = choose
      return answer
    } finally {
      this.memory.end(tenant, chose)
    }
  }

  private checkJournal(): void {
    if (this.journal.failed)
      throw new OnlineError(
        'not_durable',
        "the server's journal",
        'a journal that can be synced (restart the server: recovery reads the journal)',
        this.journal.failed.message.split('\n')[0],
      )
  }

  /** Each open tenant holds its log's descriptor: past the budget, a clear 503 instead of EMFILE from deep in the store. */
  private checkTenantRoom(id: string): void {
    if (this.tenants.size >= this.budget.tenants)
      throw new HttpError(
        503,
        'too_many_tenants',
        `tenant ${id}: expected at most ${this.budget.tenants} tenants open in this server (open-file limit ${this.fdLimit}): raise ulimit -n, or spread tenants over servers with their own --dir`,
        false,
      )
  }

  /**
   * An open tenant, opened now if it is not. No waiting for a lock another process holds (lockWaitMs
   * 0): the wait would block every tenant's requests; 503 tenant_busy instead (a dead owner's lock
   * is taken over at once).
   */
  private tenantOf(id: string, create?: Pick<Parameters<typeof openTenant>[0], 'create' | 'fromProfile'>): Tenant {
    this.checkJournal()
    if (create && this.tenants.has(id))
      throw new OnlineError('tenant_exists', `tenant ${id}`, 'a new tenant id', 'a tenant with that id')
    let tenant = this.tenants.get(id)
    if (tenant?.failed) {
      tenant.abandon()
      this.tenants.delete(id)
      tenant = undefined
    }
    if (!tenant) {
      this.checkTenantRoom(id)
      const {dir, snapshotEvery} = this.options
      tenant = openTenant({dir, tenant: id, journal: this.journal, snapshotEvery, lockWaitMs: 0, ...create})
      this.tenants.set(id, tenant)
    }
    return tenant
  }

  /** POST /tenants: {tenant, profile?|config?, ...TenantSpec}. */
  private createTenant(body: unknown): Answer {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw badRequest(`POST /tenants: expected an object {tenant, ...}, got ${describeValue(body)}`)
    const {tenant: id, profile, config, ...rest} = body as Record<string, unknown>
    if (typeof id !== 'string')
      throw badRequest(`POST /tenants: tenant: expected a tenant id, got ${describeValue(id)}`)
    validateTenantId(id)
    if (profile !== undefined && config !== undefined)
      throw badRequest('POST /tenants: expected profile (a kt_profile document) or config (a configuration), not both')
    // Forcing past the deploy gate is an operator's decision at the CLI (kt online init --force --reason), never a client's: a force baked into a client would let every later refused profile through.
    for (const key of ['force', 'reason'])
      if (key in rest)
        throw badRequest(
          `POST /tenants: ${key}: expected no ${key} (the service does not force past the deploy gate: an operator can, with kt online init --profile FILE --force --reason "why" --dir <the server's --dir>), got ${describeValue(rest[key])}`,
        )
    const spec: TenantSpec = rest as TenantSpec
    if (config !== undefined) spec.profile = config as TenantSpec['profile']
    // a profile goes through THE profile loader and THE deploy gate in openTenant (refused: 422 gate_refused)
    const fromProfile =
      profile === undefined
        ? undefined
        : {document: profile, file: 'POST /tenants: profile', hint: SERVICE_GATE_HINT, perTypeName: 'per_type: true'}
    const tenant = this.tenantOf(id, {create: spec, fromProfile})
    const {bandit, init} = tenant.store.learner
    return {
      status: 201,
      body: {
        tenant: id,
        space: bandit.space.id,
        dimensions: bandit.dims.map((d) => ({key: d.key, arms: d.values})),
        settings: snakeKeys(bandit.settings),
        ...(init.origin ? {prior: {...init.origin, overrides: init.overrides ?? {}}} : {}),
      },
    }
  }

  /** Closes every tenant (snapshots; a failed one is abandoned), then the journal. */
  async close(): Promise<void> {
    clearInterval(this.idleCheck)
    for (const tenant of this.tenants.values()) {
      if (tenant.failed) tenant.abandon()
      else
        await tenant.close().catch((error: unknown) =>
          // a full disk: the tenant's lines stay in the journal, which recovery applies at the next start
          this.logLine({
            level: 'error',
            code: 'close_failed',
            message: `tenant ${tenant.id}: ${(error as Error)?.message ?? String(error)}`.slice(0, 500),
          }),
        )
    }
    this.tenants.clear()
    await this.journal.close()
  }
}
