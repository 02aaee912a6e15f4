/**
 * A tenant's online learner: the bandits plus the join of feedback to the configuration each
 * query played. Everything that changes it is an event (a query, a piece of feedback, a clock
 * tick); applying the same events in the same order gives the same state, which is what lets the
 * feedback log be replayed after a crash.
 *
 * Change detection (adaptive forgetting: the Page-Hinkley test and the per-arm change model) sees
 * one settled outcome per implicit window, when it closes (top level if used, 0 if not), with the
 * arms the query played, and each accepted label when it arrives.
 *
 * What the tenant sends is a setting (BanditSettings.feedback): `implicit` tenants report every
 * use, so a window that closes unused is a 0; `labels` tenants send graded labels only, so silence
 * means nothing (no implicit window at all) and a "used" is refused. Without that setting a
 * label-only tenant had every label diluted by a 0 when the query's implicit window closed.
 *
 * Feedback rules:
 * - implicit: a retrieved node was used. Within IMPLICIT_WINDOW_MS of the query it credits the
 *   top reward level to the arms the query played; a query whose window closes unused credits
 *   level 0. A second "used" for the same query is a duplicate (one reward per query); "used"
 *   after the window closed is late. Both are counted and ignored.
 * - explicit: a graded label 0..levels-1, accepted while the query is remembered
 *   (LABEL_WINDOW_MS); a second label is a duplicate, one after that is late.
 * - a query id that was never issued is a counted rejection (unknown); a label that is not an
 *   integer in range is a counted rejection (bad label). Nothing is credited for either.
 * Query ids are the tenant's query counter (1, 2, ...), so an id at most the counter whose record
 * was dropped is known to be late rather than unknown.
 */
import type {Config, ParamSpace} from '../space/types.js'
import {Rng} from '../util/rng.js'
import {type BanditSettings, type BanditState, DEFAULT_FEEDBACK, TenantBandit} from './bandit.js'
import {streamSeed} from './sampling.js'

/** Time a retrieved node may take to be used and still count as implicit feedback, by default (the issue: 5 minutes; a tenant setting). */
export const IMPLICIT_WINDOW_MS = 5 * 60 * 1000
/**
 * How long a query is remembered for explicit labels (graded judgments arrive later than clicks);
 * never shorter than the tenant's implicit window, whose outcome needs the query's record.
 */
export const LABEL_WINDOW_MS = 60 * 60 * 1000
/**
 * Longest implicit window a tenant may be created with: a day. Every query is remembered at least
 * as long as its window (memory and snapshots grow with it), and a use more than a day after the
 * retrieval is no longer a response to it. (Before the bound, 1e300 was accepted: no query was
 * ever forgotten.)
 */
export const MAX_IMPLICIT_WINDOW_MS = 24 * 60 * 60 * 1000

/** 2^32 / golden ratio: multiplying ids by it spreads consecutive ids over the 32-bit seeds (Knuth's multiplicative hashing). */
const GOLDEN_RATIO_32 = 0x9e3779b1

export type Verdict = 'applied' | 'duplicate' | 'late' | 'unknown-query' | 'bad-label' | 'not-accepted'

/** What started the tenant: everything replay needs besides the events. */
export interface TenantInit {
  e: 'init'
  /** Log format version. */
  v: 1 | 2
  tenant: string
  space: string
  /** Fingerprint of the dimensions (keys and arm values): a changed space cannot silently reuse old state. */
  dims: string
  profile: Config
  /**
   * Per query type, the parameters a routed profile sets differently from `profile`: that type's
   * bandits (a per-type tenant's) start from the profile with them applied. Absent: none.
   */
  overrides?: Record<string, Config>
  /** The deployed profile the prior came from and how the deploy gate judged it; absent: the space's defaults or a configuration given as such. */
  origin?: PriorOrigin
  settings: BanditSettings
  seed: number
}

/**
 * The profile a tenant was created from, as the deploy gate saw it (kept in the init record, so a
 * forced creation is on record with its reason as a forced deploy is in a target's history).
 */
export interface PriorOrigin {
  /** The profile's file as given (or the request field it came in). */
  file: string
  name: string
  kind: string
  /** sha256 of the profile's canonical text (what kt deploy stores it under). */
  sha256: string
  verdict: 'pass' | 'fail' | 'not-validated'
  /** Whether it went past a gate refusal with --force. */
  forced: boolean
  /** Why (required when forced), or null. */
  reason: string | null
  /** The gate's objection that --force overrode, or null when it passed. */
  gate: string | null
}

/**
 * A query event: kt's id (the tenant's counter), time, the arms played; optionally the query type
 * the caller named (`ty`: per-type tenants play and credit that type's bandits) and the caller's own
 * query id (`qid`: feedback may name the query by it).
 */
export type QueryEvent = {e: 'q'; id: number; t: number; arms: number[]; ty?: string; qid?: string}

export type TenantEvent =
  | QueryEvent
  | {e: 'used'; id: string; t: number}
  | {e: 'label'; id: string; t: number; grade: number}
  | {e: 'tick'; t: number}
  | ForgetEvent

/**
 * Forgets the `n` oldest remembered queries (the server's memory cap, src/online/README.md "Memory"):
 * a query whose implicit window is still open settles as if it had closed unused (credit 0,
 * counted expired); feedback naming a forgotten query by kt's id is late, by the caller's id
 * unknown (as after the label window). Logged, so replay forgets the same queries.
 */
type ForgetEvent = {e: 'forget'; t: number; n: number}

export interface Counters {
  queries: number
  used: number
  labels: number
  /** Queries whose implicit window closed unused (credited level 0). */
  expired: number
  duplicate: number
  late: number
  unknown: number
  badLabel: number
  /** Feedback of a kind the tenant does not take ("used" for a labels-only tenant). */
  notAccepted: number
  alarms: number
  /** Queries forgotten before their label window ended, to keep memory under the cap (forget events). */
  evicted: number
}

const IMPLICIT_OPEN = 0
const IMPLICIT_USED = 1
const IMPLICIT_EXPIRED = 2

interface PendingQuery {
  t: number
  arms: number[]
  implicit: number
  labelled: boolean
  /** The query type the caller named, if any. */
  type?: string
  /** The caller's own id for the query, if any. */
  qid?: string
}

/** Persisted learner state (besides the bandits). */
export interface LearnerState {
  bandit: BanditState
  counters: Counters
  lastT: number
  /** [id, t, arms, implicit, labelled, type?, caller id?] in issue order (type and caller id null when absent). */
  pending: Array<
    [number, number, number[], number, 0 | 1] | [number, number, number[], number, 0 | 1, string | null, string | null]
  >
  /** Per-type tenants: each type's bandits (the default set, for queries without a type, is `bandit`). */
  typed?: Record<string, BanditState>
}

/** Longest caller-supplied query id. */
const MAX_CALLER_QUERY_ID_LENGTH = 128
/** Caller query ids: printable ASCII without spaces. */
const CALLER_QUERY_ID_PATTERN = /^[\x21-\x7e]+$/

/**
 * Why a caller-supplied query id cannot be used, or null if it can. A bare positive integer is
 * refused: it could name one of kt's own ids, and feedback must name exactly one query.
 */
export function callerQueryIdProblem(qid: unknown): string | null {
  if (typeof qid !== 'string' || qid.length === 0) return 'a non-empty string'
  if (qid.length > MAX_CALLER_QUERY_ID_LENGTH) return `at most ${MAX_CALLER_QUERY_ID_LENGTH} characters`
  if (!CALLER_QUERY_ID_PATTERN.test(qid)) return 'printable ASCII without spaces'
  if (/^[0-9]+$/.test(qid))
    return 'not a bare integer (kt numbers its own query ids 1, 2, ...; prefix yours, e.g. "q-17")'
  return null
}

/** Fingerprint of a space's bandit dimensions. */
export function dimensionsFingerprint(bandit: TenantBandit): string {
  return JSON.stringify(bandit.dims.map((d) => [d.key, d.values]))
}

function zeroCounters(): Counters {
  return {
    queries: 0,
    used: 0,
    labels: 0,
    expired: 0,
    duplicate: 0,
    late: 0,
    unknown: 0,
    badLabel: 0,
    notAccepted: 0,
    alarms: 0,
    evicted: 0,
  }
}

/** The id of a query as feedback names it: a positive integer, else null (unknown). */
function parseQueryId(raw: string): number | null {
  return /^[1-9][0-9]{0,15}$/.test(raw) ? Number(raw) : null
}

export class TenantLearner {
  readonly bandit: TenantBandit
  counters: Counters = zeroCounters()
  /** Latest event time (ms); time never runs backwards (an earlier clock reading is taken as this). */
  lastT = 0
  private readonly pending = new Map<number, PendingQuery>()
  /** Caller query ids of remembered queries -> kt's id. */
  private readonly callerIds = new Map<string, number>()
  /** Per-type tenants: the bandits of each query type seen so far (created on first use from the profile prior). */
  private readonly typed = new Map<string, TenantBandit>()
  /** Whether this tenant keeps one set of bandits per query type. */
  readonly perType: boolean
  /** Query ids in issue order still waiting for their implicit window to close (head index). */
  private implicitQueue: number[] = []
  private implicitHead = 0

  private readonly seedHash: number
  /** Whether queries settle through an implicit window (feedback mode `implicit`). */
  private readonly implicit: boolean
  /** The tenant's implicit window and label window, in ms. */
  readonly windowMs: number
  readonly labelWindowMs: number

  private readonly space: ParamSpace

  constructor(
    readonly init: TenantInit,
    space: ParamSpace,
  ) {
    this.bandit = new TenantBandit(space, init.profile, init.settings)
    this.space = space
    this.perType = init.settings.perType === true
    this.seedHash = streamSeed(init.seed, 'query')
    this.implicit = (init.settings.feedback ?? DEFAULT_FEEDBACK) === 'implicit'
    this.windowMs = init.settings.implicitWindowMs ?? IMPLICIT_WINDOW_MS
    this.labelWindowMs = Math.max(LABEL_WINDOW_MS, this.windowMs)
  }

  /** Queries issued so far (the last query id). */
  get queries(): number {
    return this.counters.queries
  }

  /**
   * The bandits that play and learn from queries of `type`: the type's own set on a per-type tenant
   * (created from the profile prior on first use), else the tenant's one set.
   */
  banditFor(type: string | undefined): TenantBandit {
    if (!this.perType || type === undefined) return this.bandit
    let bandit = this.typed.get(type)
    if (!bandit) {
      bandit = new TenantBandit(this.space, this.profileOf(type), this.init.settings)
      this.typed.set(type, bandit)
    }
    return bandit
  }

  /** The prior configuration of `type`'s bandits: the profile with the type's overrides (a routed profile's) applied. */
  profileOf(type: string | undefined): Config {
    const override = type === undefined ? undefined : this.init.overrides?.[type]
    return override ? {...this.init.profile, ...override} : this.init.profile
  }

  /** The per-type bandits created so far, by type. */
  typedBandits(): ReadonlyMap<string, TenantBandit> {
    return this.typed
  }

  /**
   * A remembered query by the id feedback would name it (caller id or kt's), or undefined: its kt
   * id, type, arms and whether it has been used or labelled (for retries and checks).
   */
  remembered(raw: string): {id: number; type?: string; arms: number[]; used: boolean; labelled: boolean} | undefined {
    const id = this.callerIds.get(raw) ?? parseQueryId(raw)
    const record = id === null ? undefined : this.pending.get(id)
    if (id === null || !record) return undefined
    return {
      id,
      type: record.type,
      arms: record.arms,
      used: record.implicit === IMPLICIT_USED,
      labelled: record.labelled,
    }
  }

  /** Whether a caller query id names a query still remembered (a second query may not take it). */
  hasCallerId(qid: string): boolean {
    return this.callerIds.has(qid)
  }

  /** Samples the arms of the next query (of `type`, if given; deterministic in the seed and the query number; changes nothing). */
  sampleNext(type?: string): {id: number; arms: number[]} {
    const id = this.counters.queries + 1
    return {id, arms: Array.from(this.banditFor(type).sampleArms(this.queryRng(id)))}
  }

  /** The random stream of query `id`: the Rng's splitmix seeding decorrelates neighbouring ids. */
  queryRng(id: number): Rng {
    return new Rng((this.seedHash ^ Math.imul(id, GOLDEN_RATIO_32)) >>> 0)
  }

  /** The configuration arms of `type`'s bandits play (untuned parameters from that type's prior). */
  configOf(arms: readonly number[], type?: string): Config {
    return this.banditFor(type).configOf(arms)
  }

  /** Applies one event; returns what became of it. */
  apply(event: TenantEvent): Verdict {
    const t = Math.max(event.t, this.lastT)
    this.lastT = t
    this.expire(t)
    switch (event.e) {
      case 'q':
        return this.applyQuery(event, t)
      case 'used':
        return this.applyUsed(event.id)
      case 'label':
        return this.applyLabel(event.id, event.grade)
      case 'tick':
        return 'applied'
      case 'forget':
        this.forgetOldest(event.n)
        return 'applied'
    }
  }

  /** See ForgetEvent. */
  private forgetOldest(n: number): void {
    let left = n
    for (const [id, record] of this.pending) {
      if (left-- <= 0) break
      // as expire() settles a window that closes (its id in implicitQueue is skipped once the record is gone)
      if (this.implicit && record.implicit === IMPLICIT_OPEN) {
        record.implicit = IMPLICIT_EXPIRED
        this.banditFor(record.type).observe(record.arms, 0)
        this.counters.expired++
        this.detect(record, 0)
      } else if (this.implicit && record.implicit === IMPLICIT_USED && record.t + this.windowMs >= this.lastT)
        this.detect(record, this.bandit.settings.levels - 1)
      this.pending.delete(id)
      if (record.qid !== undefined) this.callerIds.delete(record.qid)
      this.counters.evicted++
    }
    // the forgotten queries were the oldest: the implicit queue's head moves past them
    const q = this.implicitQueue
    while (this.implicitHead < q.length && !this.pending.has(q[this.implicitHead])) this.implicitHead++
  }

  /** Whether an event at time `now` would change anything (a window would close): then a tick is worth logging. */
  wouldExpire(now: number): boolean {
    const id = this.implicitQueue[this.implicitHead]
    if (id !== undefined && this.pending.get(id)!.t + this.windowMs < now) return true
    const first = this.pending.values().next()
    return !first.done && first.value.t + this.labelWindowMs < now
  }

  private applyQuery(event: QueryEvent, t: number): Verdict {
    const {id, arms, ty, qid} = event
    const expected = this.counters.queries + 1
    if (id !== expected) throw new RangeError(`query event out of order: id ${id} where ${expected} was expected`)
    if (qid !== undefined && this.callerIds.has(qid))
      throw new RangeError(`query event ${id}: caller id ${qid} is already taken`)
    this.banditFor(ty).countQuery(arms)
    this.counters.queries++
    const record: PendingQuery = {t, arms, implicit: IMPLICIT_OPEN, labelled: false}
    if (ty !== undefined) record.type = ty
    if (qid !== undefined) {
      record.qid = qid
      this.callerIds.set(qid, id)
    }
    this.pending.set(id, record)
    if (this.implicit) this.implicitQueue.push(id)
    return 'applied'
  }

  /** Closes implicit windows that ended before `now` (credit 0) and forgets queries past the label window. */
  private expire(now: number): void {
    const q = this.implicitQueue
    while (this.implicitHead < q.length) {
      const record = this.pending.get(q[this.implicitHead])
      if (record && record.t + this.windowMs >= now) break
      if (record) {
        // The implicit outcome is settled now: feed change detection in query order (a use is
        // credited to the posteriors at once, but reaches the test only here, so that fast
        // positives and window-delayed negatives do not look like a fall of the mean).
        if (record.implicit === IMPLICIT_OPEN) {
          record.implicit = IMPLICIT_EXPIRED
          this.banditFor(record.type).observe(record.arms, 0)
          this.counters.expired++
        }
        this.detect(record, record.implicit === IMPLICIT_USED ? this.bandit.settings.levels - 1 : 0)
      }
      this.implicitHead++
    }
    if (this.implicitHead > 1024 && this.implicitHead * 2 > q.length) {
      this.implicitQueue = q.slice(this.implicitHead)
      this.implicitHead = 0
    }
    for (const [id, record] of this.pending) {
      if (record.t + this.labelWindowMs >= now) break
      this.pending.delete(id)
      if (record.qid !== undefined) this.callerIds.delete(record.qid)
    }
  }

  private detect(record: PendingQuery, level: number): void {
    if (this.banditFor(record.type).outcome(record.arms, level)) this.counters.alarms++
  }

  /** A record for feedback, or the verdict when there is none. */
  private lookup(raw: string): PendingQuery | Verdict {
    const id = this.callerIds.get(raw) ?? parseQueryId(raw)
    if (id === null || id > this.counters.queries) {
      this.counters.unknown++
      return 'unknown-query'
    }
    const record = this.pending.get(id)
    if (!record) {
      this.counters.late++
      return 'late'
    }
    return record
  }

  private applyUsed(raw: string): Verdict {
    if (!this.implicit) {
      this.counters.notAccepted++
      return 'not-accepted'
    }
    const record = this.lookup(raw)
    if (typeof record === 'string') return record
    if (record.implicit === IMPLICIT_USED) {
      this.counters.duplicate++
      return 'duplicate'
    }
    if (record.implicit === IMPLICIT_EXPIRED) {
      this.counters.late++
      return 'late'
    }
    record.implicit = IMPLICIT_USED
    this.banditFor(record.type).observe(record.arms, this.bandit.settings.levels - 1)
    this.counters.used++
    return 'applied'
  }

  private applyLabel(raw: string, grade: number): Verdict {
    if (!Number.isInteger(grade) || grade < 0 || grade >= this.bandit.settings.levels) {
      this.counters.badLabel++
      return 'bad-label'
    }
    const record = this.lookup(raw)
    if (typeof record === 'string') return record
    if (record.labelled) {
      this.counters.duplicate++
      return 'duplicate'
    }
    record.labelled = true
    this.banditFor(record.type).observe(record.arms, grade)
    this.detect(record, grade)
    this.counters.labels++
    return 'applied'
  }

  /** Queries still remembered. */
  get pendingCount(): number {
    return this.pending.size
  }

  save(): LearnerState {
    const pending: LearnerState['pending'] = []
    for (const [id, r] of this.pending) {
      const base: [number, number, number[], number, 0 | 1] = [id, r.t, r.arms, r.implicit, r.labelled ? 1 : 0]
      pending.push(r.type === undefined && r.qid === undefined ? base : [...base, r.type ?? null, r.qid ?? null])
    }
    const state: LearnerState = {bandit: this.bandit.save(), counters: {...this.counters}, lastT: this.lastT, pending}
    if (this.typed.size > 0) state.typed = Object.fromEntries([...this.typed].map(([type, b]) => [type, b.save()]))
    return state
  }

  load(state: LearnerState): void {
    this.bandit.load(state.bandit)
    this.counters = {...zeroCounters(), ...state.counters}
    this.lastT = state.lastT
    this.pending.clear()
    this.callerIds.clear()
    this.typed.clear()
    if (state.typed !== undefined) {
      if (!this.perType) throw new RangeError('per-type bandits in the state of a tenant without perType')
      for (const [type, banditState] of Object.entries(state.typed)) this.banditFor(type).load(banditState)
    }
    this.implicitQueue = []
    this.implicitHead = 0
    for (const [id, t, arms, implicit, labelled, type, qid] of state.pending) {
      this.bandit.checkArms(arms, `pending query ${id}`)
      const record: PendingQuery = {t, arms, implicit, labelled: labelled === 1}
      if (type != null) record.type = type
      if (qid != null) {
        record.qid = qid
        this.callerIds.set(qid, id)
      }
      this.pending.set(id, record)
      // Every window that has not closed yet, used or not: its outcome still has to reach change
      // detection when it closes (expire() has closed exactly the windows that ended before lastT).
      if (this.implicit && implicit !== IMPLICIT_EXPIRED && t + this.windowMs >= this.lastT) this.implicitQueue.push(id)
    }
  }
}
