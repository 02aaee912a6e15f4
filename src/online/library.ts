/**
 * The online learner as a library: open a tenant, choose a configuration per query, report
 * feedback, read its status. `kt online init|choose|feedback|status` and `kt online serve` call
 * exactly these functions; an engine in production can too (`import {openTenant} from 'kt/online'`).
 *
 * Requests and results are the wire records the CLI's --json and the HTTP service print
 * (snake_case keys), so one shape is documented once. Every choose and feedback resolves only
 * after its event is durable (fsync'd log; with a GroupCommit shared by many tenants, one flush
 * covers a batch of them).
 */
import {createHash} from 'node:crypto'
import {QUERY_TYPES} from '../engine/retrieval/classifier.js'
import {TenantBandit} from './bandit.js'
import type {GroupCommit} from './commit.js'
import {ENGINE_SPACES_BUSY, forgetEngineSpace, keepEngineSpace, spaceById, withEngineSpacesLock} from './spaces.js'
import {StateDamagedError, TenantStore, type CreateOptions} from './store.js'
import {validateTenantId} from './tenant-id.js'
import {recoverJournals, type JournalRecovery} from './journal-recovery.js'
import {Journal, type JournalOptions} from './journal.js'
import {type PriorOrigin, callerQueryIdProblem} from './tenant.js'
import {GateRefusedError, passGate} from '../deploy/gate.js'
import {parseProfile} from '../deploy/load.js'
import {profileJson} from '../deploy/profile.js'
import type {Config, ParamSpace} from '../space/types.js'
import {InputError, describeValue} from '../util/errors.js'
import {snakeKeys} from '../util/json-keys.js'
import type {ChooseRequest, Choice, FeedbackOutcome, FeedbackRequest, TenantStatus} from './wire.js'
import {OnlineError} from './online-error.js'
import {resolveSpec, type TenantSpec} from './tenant-spec.js'

/**
 * A tenant over its cap of remembered queries forgets down to this fraction of it (limitPending), so
 * one forget event is logged per tenth of the cap, not one per query.
 */
const PENDING_TRIM_TO = 0.9

/** Query types a choose may name: the retrieval query classifier's (src/engine/retrieval/classifier.ts). */
export const CHOOSE_TYPES = QUERY_TYPES

/**
 * A deployed profile as a new tenant's prior. It goes through THE deploy gate (src/deploy/gate.ts),
 * as `kt deploy` does: a profile the gate refuses is refused (GateRefusedError, exit 1) unless
 * `force` with a `reason`, and the init record keeps where the prior came from (TenantInit.origin).
 * A routed profile's per-type overrides seed each type's bandits on a per_type tenant; without
 * per_type a routed profile with overrides is refused (they would be dropped).
 */
interface ProfileSource {
  /** The profile as parsed JSON (a kt_profile document of any kind kt reads). */
  document: unknown
  /** What names it in errors and in the init record: its file, or the request field it came in. */
  file: string
  /** Create the tenant from a profile the gate refuses; needs `reason`. */
  force?: boolean
  /** Why a refused profile is used anyway (one line; recorded in the init record). */
  reason?: string
  /** What a refusal says to do instead of forcing (default kt deploy's: --force --reason "why"). */
  hint?: string
  /** How the refusal of overrides without per_type names the setting (default --per-type, the CLI's). */
  perTypeName?: string
}

/** An engine file's parameter table to keep beside the tenants (kt online init --engine). */
interface EngineSpaceSource {
  space: ParamSpace
  /** The engine file (named when a different table is kept under the same id). */
  file: string
}

export interface OpenTenantOptions {
  /** Folder holding the tenants (default `.kt/online`, as the CLI). */
  dir?: string
  tenant: string
  /** Creates the tenant from this spec (it must not exist yet). */
  create?: TenantSpec
  /** With create: the prior is this deployed profile, through the deploy gate (not with create.profile). */
  fromProfile?: ProfileSource
  /**
   * With create: the tenant tunes this engine file's table (space `engine:<name>`), kept beside the
   * tenants under the engine tables' lock: written only if none is kept under its id, refused if a
   * different one is (keepEngineSpace); an init that fails leaves no table it wrote behind.
   */
  engine?: EngineSpaceSource
  /** Shares log flushes with other tenants; absent: one fsync per event. */
  groupCommit?: GroupCommit
  /**
   * Journals the events of many tenants in one file with one fdatasync per batch (the server;
   * journal.ts), the tenant's own log written behind it; wins over groupCommit. Open it with
   * openJournal(dir) on the same dir, and close it after every tenant that uses it.
   */
  journal?: Journal
  /** How long to wait for a tenant another process has open (ms). */
  lockWaitMs?: number
  /** Events between snapshots. */
  snapshotEvery?: number
}

/** Where tenants live unless `dir` says otherwise (relative to the working folder). */
export const DEFAULT_ONLINE_DIR = '.kt/online'

/** The store's own errors, by what they say was found (store.ts). */
function storeErrorIs(error: unknown, test: (e: InputError) => boolean): error is InputError {
  return error instanceof InputError && !(error instanceof OnlineError) && test(error)
}

/**
 * Opens the journal that tenants of `dir` can share (OpenTenantOptions.journal), after applying
 * what dead processes left in journals there to the tenants' logs (recoverJournals). One process
 * at a time per tenant, as always; several journals may live in one dir.
 */
export function openJournal(
  dir: string = DEFAULT_ONLINE_DIR,
  options: JournalOptions = {},
): {journal: Journal; recovery: JournalRecovery} {
  const recovery = recoverJournals(dir)
  return {journal: new Journal(dir, options), recovery}
}

/** An InputError about the request as an OnlineError bad_request (the same message). */
function asBadRequest(error: unknown): unknown {
  return error instanceof InputError && !(error instanceof OnlineError)
    ? new OnlineError('bad_request', error.where, error.expected, error.got)
    : error
}

/** The prior a profile gives a tenant of `space`: its configuration, a routed profile's overrides, and the gate's record. */
function gatedPrior(
  source: ProfileSource,
  space: ParamSpace,
  perType: boolean,
): {profile: Config; overrides?: Record<string, Config>; origin: PriorOrigin} {
  // THE profile loader: any kind, checked against the tenant's space
  const loaded = parseProfile(source.document, source.file, {space})
  if (loaded.space.id !== space.id)
    throw new OnlineError(
      'bad_request',
      `${source.file}: space`,
      `a profile of space ${JSON.stringify(space.id)} (the tenant's)`,
      JSON.stringify(loaded.space.id),
    )
  const p = loaded.profile
  const gate = passGate(p, source.file, {force: source.force, reason: source.reason, hint: source.hint})
  const overrides = Object.keys(p.overrides ?? {}).length > 0 ? p.overrides : undefined
  if (overrides && !perType) {
    const list = Object.entries(overrides)
      .map(([type, o]) => `${type} (${Object.keys(o).join(', ')})`)
      .join(', ')
    throw new OnlineError(
      'bad_request',
      `${source.file}: overrides`,
      `a tenant with one set of bandits per query type (${source.perTypeName ?? '--per-type'}), whose types start from their overrides, or a profile without overrides`,
      `a routed profile overriding ${list}, which one set of bandits would drop`,
    )
  }
  const origin: PriorOrigin = {
    file: source.file,
    name: p.name,
    kind: p.kind,
    sha256: createHash('sha256').update(profileJson(p)).digest('hex'),
    verdict: p.validation.verdict,
    forced: !gate.passed,
    reason: gate.passed ? null : source.reason?.trim() || null,
    gate: gate.reason,
  }
  return {profile: p.config, ...(overrides ? {overrides} : {}), origin}
}

/** Everything a new tenant is created from, checked (the request's mistakes as bad_request; a gate refusal as GateRefusedError). */
function checkedCreate(options: OpenTenantOptions, dir: string): CreateOptions {
  const spec = options.create!
  try {
    const resolved = resolveSpec(spec, 'tenant spec', dir, options.engine?.space)
    let create: CreateOptions = resolved
    if (options.fromProfile) {
      if (spec.profile !== undefined)
        throw new OnlineError(
          'bad_request',
          'tenant spec: profile',
          'a configuration or a deployed profile (fromProfile), not both',
          'both',
        )
      create = {...resolved, ...gatedPrior(options.fromProfile, resolved.space, resolved.settings.perType === true)}
    }
    // Settings, profile, overrides and tuned parameters checked here, so that what the store refuses later is about the disk.
    new TenantBandit(create.space, create.profile, create.settings)
    for (const o of Object.values(create.overrides ?? {}))
      new TenantBandit(create.space, {...create.profile, ...o}, create.settings)
    return create
  } catch (error) {
    throw asBadRequest(error)
  }
}

/**
 * Opens a tenant (or creates one with `create`); see OpenTenantOptions. Every refusal is an
 * OnlineError: the request's mistakes (a bad id or spec) bad_request, then unknown_tenant,
 * tenant_exists, tenant_busy, state_damaged (its files do not read back as written) or
 * storage_failed (its folder cannot be read or written); except a profile (fromProfile) the
 * deploy gate refuses: GateRefusedError (src/deploy/gate.ts, exit code 1, code gate_refused).
 */
export function openTenant(options: OpenTenantOptions): Tenant {
  const dir = options.dir ?? DEFAULT_ONLINE_DIR
  const common = {
    dir,
    tenant: options.tenant,
    groupCommit: options.groupCommit,
    journal: options.journal,
    lockWaitMs: options.lockWaitMs,
    snapshotEvery: options.snapshotEvery,
  }
  try {
    validateTenantId(options.tenant)
    if (!options.create && (options.fromProfile || options.engine))
      throw new OnlineError(
        'bad_request',
        `tenant ${options.tenant}`,
        'fromProfile and engine only with create',
        'them without create',
      )
  } catch (error) {
    throw asBadRequest(error)
  }
  try {
    if (!options.create)
      return new Tenant(TenantStore.open({...common, resolveSpace: (id) => spaceById(id, 'space', dir)}))
    const engineId = options.engine?.space.id ?? options.create.space
    // A tenant of an engine space is created under the engine tables' lock, its table read (or kept) there too.
    if (typeof engineId !== 'string' || !engineId.startsWith('engine:'))
      return new Tenant(TenantStore.open({...common, create: checkedCreate(options, dir)}))
    return withEngineSpacesLock(
      dir,
      () => {
        const create = checkedCreate(options, dir)
        let wrote = false
        try {
          if (options.engine) wrote = keepEngineSpace(dir, options.engine.space, options.engine.file)
        } catch (error) {
          throw asBadRequest(error)
        }
        try {
          return new Tenant(TenantStore.open({...common, create}))
        } catch (error) {
          // nobody can have used the table meanwhile: creating from it takes this lock
          if (wrote) forgetEngineSpace(dir, options.engine!.space.id)
          throw error
        }
      },
      options.lockWaitMs,
    )
  } catch (error) {
    if (error instanceof OnlineError || error instanceof GateRefusedError) throw error
    if (error instanceof StateDamagedError)
      throw new OnlineError('state_damaged', error.where, error.expected, error.got)
    if (storeErrorIs(error, (e) => e.got === 'no such tenant'))
      throw new OnlineError(
        'unknown_tenant',
        `tenant ${options.tenant}`,
        'an existing tenant (create it first)',
        'no such tenant',
      )
    if (storeErrorIs(error, (e) => e.got === 'a tenant with that id'))
      throw new OnlineError('tenant_exists', `tenant ${options.tenant}`, 'a new tenant id', 'a tenant with that id')
    if (
      storeErrorIs(
        error,
        (e) => e.expected.startsWith('a tenant nobody else has open') || e.expected.startsWith(ENGINE_SPACES_BUSY),
      )
    )
      throw new OnlineError('tenant_busy', error.where, error.expected, error.got)
    // A full disk passes (retry later: nothing was created); what remains is the folder itself (unwritable, not a folder).
    const full = diskFullCode(error)
    if (full)
      throw new OnlineError(
        'not_durable',
        `tenant ${options.tenant} in ${dir}`,
        'room on the disk (retry the request)',
        `${full}: ${(error as Error).message.split('\n')[0]}`,
      )
    if (error instanceof InputError) throw new OnlineError('storage_failed', error.where, error.expected, error.got)
    const code = (error as NodeJS.ErrnoException)?.code
    if (typeof code === 'string')
      throw new OnlineError(
        'storage_failed',
        `tenant ${options.tenant} in ${dir}`,
        'a folder kt can read and write',
        `${code}: ${(error as Error).message.split('\n')[0]}`,
      )
    throw error
  }
}

/** ENOSPC or EDQUOT when `error` says the disk (or the quota) is full, as an errno or in an InputError's text (writeFileAtomic's). */
function diskFullCode(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException)?.code
  if (code === 'ENOSPC' || code === 'EDQUOT') return code
  if (error instanceof InputError) return /\b(ENOSPC|EDQUOT)\b/.exec(error.got ?? '')?.[1]
  return undefined
}

/** The event time of a request: `now` if given (a finite number >= 0), else the clock. */
function eventTime(now: unknown, where: string): number {
  if (now === undefined) return Date.now()
  if (typeof now !== 'number' || !Number.isFinite(now) || now < 0)
    throw new OnlineError('bad_request', `${where}: now`, 'ms since the epoch (a number >= 0)', describeValue(now))
  return now
}

/** One open tenant. Not shared between processes: a lock keeps other openers out until close(). */
export class Tenant {
  private closed = false

  constructor(readonly store: TenantStore) {}

  /** Refuses requests to a closed or failed tenant as OnlineErrors. */
  private usable(what: string): void {
    if (this.closed)
      throw new OnlineError(
        'tenant_closed',
        `${what} for tenant ${this.id}`,
        'an open tenant (open it again with openTenant)',
        'a closed one',
      )
    if (this.store.failed)
      throw new OnlineError(
        'not_durable',
        `${what} for tenant ${this.id}`,
        'a tenant whose log can be synced (abandon() it and open it again)',
        this.store.failed.message.split('\n')[0],
      )
  }

  get id(): string {
    return this.store.learner.init.tenant
  }

  /**
   * Samples a configuration for a new query and logs it; resolves once the query is durable. The
   * returned query_id is what feedback names.
   */
  async choose(request: ChooseRequest = {}): Promise<Choice> {
    this.usable('choose')
    const {qid, type, now} = this.checkChoose(request)
    const again = qid === undefined ? undefined : this.store.learner.remembered(qid)
    if (again) {
      // A retry of a choose whose answer was lost: the same query, the same configuration.
      if ((again.type ?? undefined) !== type)
        throw new OnlineError(
          'duplicate_query_id',
          'choose request: query_id',
          `an id not yet issued (it was issued with type ${again.type ?? 'none'})`,
          describeValue(qid),
        )
      await this.durable()
      return {
        query_id: qid!,
        kt_query_id: again.id,
        type: type ?? null,
        arms: [...again.arms],
        config: this.store.learner.configOf(again.arms, again.type),
        repeated: true,
      }
    }
    const {queryId, arms, config} = this.logged(() => this.store.choose(now, {type, qid}))
    await this.durable()
    return {query_id: qid ?? String(queryId), kt_query_id: queryId, type: type ?? null, arms, config}
  }

  /** Checks a choose request (everything that can be refused before anything is logged). */
  private checkChoose(request: ChooseRequest): {qid?: string; type?: string; now: number} {
    if (typeof request !== 'object' || request === null || Array.isArray(request))
      throw new OnlineError('bad_request', 'choose request', 'an object', describeValue(request))
    for (const key of Object.keys(request))
      if (key !== 'query_id' && key !== 'type' && key !== 'now')
        throw new OnlineError('bad_request', `choose request: ${key}`, 'query_id, type or now', 'an unknown field')
    const qid = request.query_id
    if (qid !== undefined) {
      const problem = callerQueryIdProblem(qid)
      if (problem) throw new OnlineError('bad_request', 'choose request: query_id', problem, describeValue(qid))
    }
    const type = request.type
    if (type !== undefined && !(CHOOSE_TYPES as readonly unknown[]).includes(type))
      throw new OnlineError(
        'bad_request',
        'choose request: type',
        `one of ${CHOOSE_TYPES.join(', ')}`,
        describeValue(type),
      )
    return {qid, type, now: eventTime(request.now, 'choose request')}
  }

  /**
   * Records feedback for a query; resolves once it is durable. Duplicates and late feedback are
   * logged, counted and returned as their verdict; an unknown query, a label out of range or
   * feedback the tenant does not take is refused (OnlineError) after being logged and counted.
   */
  async feedback(request: FeedbackRequest): Promise<FeedbackOutcome> {
    this.usable('feedback')
    if (typeof request !== 'object' || request === null || Array.isArray(request))
      throw new OnlineError('bad_request', 'feedback request', 'an object', describeValue(request))
    for (const key of Object.keys(request))
      if (!['query_id', 'used', 'label', 'now'].includes(key))
        throw new OnlineError(
          'bad_request',
          `feedback request: ${key}`,
          'query_id, used, label or now',
          'an unknown field',
        )
    const raw = request.query_id
    if (
      !(typeof raw === 'string' && raw.length > 0 && raw.length <= 128) &&
      !(Number.isInteger(raw) && (raw as number) > 0)
    )
      throw new OnlineError(
        'bad_request',
        'feedback request: query_id',
        'the query id choose returned',
        describeValue(raw),
      )
    const queryId = String(raw)
    const used = request.used
    const label = request.label
    if (used !== undefined && used !== true)
      throw new OnlineError('bad_request', 'feedback request: used', 'true (or leave it out)', describeValue(used))
    if ((used === true) === (label !== undefined))
      throw new OnlineError('bad_request', 'feedback request', 'exactly one of used: true or label: G')
    if (label !== undefined && typeof label !== 'number')
      throw new OnlineError('bad_request', 'feedback request: label', 'an integer grade', describeValue(label))
    const now = eventTime(request.now, 'feedback request')
    const verdict = this.logged(() => (used ? this.store.used(queryId, now) : this.store.label(queryId, label!, now)))
    await this.durable()
    const bandit = this.store.learner.bandit
    const tenant = this.id
    if (verdict === 'unknown-query')
      throw new OnlineError(
        'unknown_query',
        `feedback for query ${queryId}`,
        `a query id issued to tenant ${tenant} (1..${this.store.learner.queries} or your own ids)`,
        'an unknown id (counted as rejected)',
      )
    if (verdict === 'not-accepted')
      throw new OnlineError(
        'not_accepted',
        `feedback for query ${queryId}: used`,
        `a label: tenant ${tenant} takes labels only (feedback labels)`,
        'implicit feedback (counted as rejected)',
      )
    if (verdict === 'bad-label')
      throw new OnlineError(
        'bad_request',
        `feedback for query ${queryId}: label`,
        `an integer in 0..${bandit.settings.levels - 1}`,
        `${describeValue(label)} (counted as rejected)`,
      )
    return {query_id: queryId, verdict}
  }

  /** Runs a store call that logs an event; a write that failed (the disk, not the request) is a not_durable OnlineError. */
  private logged<T>(write: () => T): T {
    try {
      return write()
    } catch (error) {
      if (
        error instanceof OnlineError ||
        !(this.store.failed || typeof (error as NodeJS.ErrnoException)?.code === 'string')
      )
        throw error
      throw new OnlineError(
        'not_durable',
        `tenant ${this.id} log`,
        'a log that can be written and synced (retry the request)',
        (error as Error).message.split('\n')[0],
      )
    }
  }

  private async durable(): Promise<void> {
    try {
      await this.store.durable()
    } catch (error) {
      throw new OnlineError(
        'not_durable',
        `tenant ${this.id} log`,
        'a log that can be synced (retry the request)',
        (error as Error).message.split('\n')[0],
      )
    }
  }

  /** Counters, settings and what the bandits currently believe (as of the last logged event; writes nothing). */
  status(): TenantStatus {
    if (this.closed)
      throw new OnlineError(
        'tenant_closed',
        `status of tenant ${this.id}`,
        'an open tenant (open it again with openTenant)',
        'a closed one',
      )
    const learner = this.store.learner
    const bandit = learner.bandit
    const best = bandit.bestArms()
    const dimensions = bandit.dims.map((d, i) => {
      const p = bandit.posteriors[i]
      return {
        key: d.key,
        best_bin: best[i],
        best_value: d.values[best[i]],
        best_mean_reward: p.meanReward(best[i]),
        evidence: Array.from({length: p.arms}, (_, a) => p.evidence(a)),
      }
    })
    const snake = <T>(v: unknown): T => snakeKeys(v) as T
    const origin = learner.init.origin
    const report: TenantStatus = {
      tenant: this.id,
      queries: learner.queries,
      pending: learner.pendingCount,
      counters: snake(learner.counters),
      open: snake(this.store.openReport),
      settings: snake(bandit.settings),
      dimensions,
      prior: origin ? {...origin, overrides: learner.init.overrides ?? {}} : null,
    }
    if (learner.perType)
      report.types = Object.fromEntries(
        [...learner.typedBandits()].map(([type, b]) => [
          type,
          {queries: b.queries, best_bins: Array.from(b.bestArms())},
        ]),
      )
    return report
  }

  /** Queries the tenant remembers (each held in memory until its label window ends or it is forgotten). */
  get pendingCount(): number {
    return this.store.learner.pendingCount
  }

  /**
   * Keeps at most `max` remembered queries: past it, forgets the oldest down to PENDING_TRIM_TO of
   * `max` in one logged forget event (tenant.ts ForgetEvent) and returns how many; 0 when under it
   * or when the event could not be logged (a full disk: tried again at the next call).
   */
  limitPending(max: number, now: number = Date.now()): number {
    const pending = this.store.learner.pendingCount
    if (this.closed || this.store.failed || pending <= max) return 0
    const n = pending - Math.floor(max * PENDING_TRIM_TO)
    try {
      this.store.forget(n, now)
      return n
    } catch {
      return 0
    }
  }

  /**
   * Closes a tenant with no request in flight at once (writes the snapshot, releases the lock):
   * synchronous, so no request can find it half closed. A full disk abandons it instead (its lines
   * stay in the journal for recovery).
   */
  closeSettled(): void {
    if (this.closed) return
    if (this.store.failed) return this.abandon()
    this.closed = true
    try {
      this.store.close()
    } catch {
      // store.close() abandoned it: the journal keeps its lines
    }
  }

  /** Whether a log sync failed: the tenant takes nothing more; abandon() it and open it again. */
  get failed(): boolean {
    return this.store.failed !== undefined
  }

  /** Releases a failed tenant without writing a snapshot (the next open rebuilds from the log). */
  abandon(): void {
    this.closed = true
    this.store.abandon()
  }

  /** Waits for pending flushes, writes the snapshot and releases the lock. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.store.durable().catch(() => undefined)
    this.store.close()
  }
}
