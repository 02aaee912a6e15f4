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
  settings: BanditSettings
  seed: number
}

export type TenantEvent =
  | {e: 'q'; id: number; t: number; arms: number[]}
  | {e: 'used'; id: string; t: number}
  | {e: 'label'; id: string; t: number; grade: number}
  | {e: 'tick'; t: number}

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
}

const IMPLICIT_OPEN = 0
const IMPLICIT_USED = 1
const IMPLICIT_EXPIRED = 2

interface PendingQuery {
  t: number
  arms: number[]
  implicit: number
  labelled: boolean
}

/** Persisted learner state (besides the bandits). */
export interface LearnerState {
  bandit: BanditState
  counters: Counters
  lastT: number
  /** [id, t, arms, implicit, labelled] in issue order. */
  pending: Array<[number, number, number[], number, 0 | 1]>
}

/** Fingerprint of a space's bandit dimensions. */
export function dimensionsFingerprint(bandit: TenantBandit): string {
  return JSON.stringify(bandit.dims.map((d) => [d.key, d.values]))
}

function zeroCounters(): Counters {
  return {queries: 0, used: 0, labels: 0, expired: 0, duplicate: 0, late: 0, unknown: 0, badLabel: 0, notAccepted: 0, alarms: 0}
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
  /** Query ids in issue order still waiting for their implicit window to close (head index). */
  private implicitQueue: number[] = []
  private implicitHead = 0

  private readonly seedHash: number
  /** Whether queries settle through an implicit window (feedback mode `implicit`). */
  private readonly implicit: boolean
  /** The tenant's implicit window and label window, in ms. */
  readonly windowMs: number
  readonly labelWindowMs: number

  constructor(
    readonly init: TenantInit,
    space: ParamSpace,
  ) {
    this.bandit = new TenantBandit(space, init.profile, init.settings)
    this.seedHash = streamSeed(init.seed, 'query')
    this.implicit = (init.settings.feedback ?? DEFAULT_FEEDBACK) === 'implicit'
    this.windowMs = init.settings.implicitWindowMs ?? IMPLICIT_WINDOW_MS
    this.labelWindowMs = Math.max(LABEL_WINDOW_MS, this.windowMs)
  }

  /** Samples the arms of the next query (deterministic in the seed and the query number; changes nothing). */
  sampleNext(): {id: number; arms: number[]} {
    const id = this.bandit.queries + 1
    return {id, arms: Array.from(this.bandit.sampleArms(this.queryRng(id)))}
  }

  /** The random stream of query `id`: the Rng's splitmix seeding decorrelates neighbouring ids. */
  queryRng(id: number): Rng {
    return new Rng((this.seedHash ^ Math.imul(id, GOLDEN_RATIO_32)) >>> 0)
  }

  configOf(arms: readonly number[]): Config {
    return this.bandit.configOf(arms)
  }

  /** Applies one event; returns what became of it. */
  apply(event: TenantEvent): Verdict {
    const t = Math.max(event.t, this.lastT)
    this.lastT = t
    this.expire(t)
    switch (event.e) {
      case 'q':
        return this.applyQuery(event.id, t, event.arms)
      case 'used':
        return this.applyUsed(event.id)
      case 'label':
        return this.applyLabel(event.id, event.grade)
      case 'tick':
        return 'applied'
    }
  }

  /** Whether an event at time `now` would change anything (a window would close): then a tick is worth logging. */
  wouldExpire(now: number): boolean {
    const id = this.implicitQueue[this.implicitHead]
    if (id !== undefined && this.pending.get(id)!.t + this.windowMs < now) return true
    const first = this.pending.values().next()
    return !first.done && first.value.t + this.labelWindowMs < now
  }

  private applyQuery(id: number, t: number, arms: number[]): Verdict {
    const counted = this.bandit.countQuery(arms)
    if (id !== counted) throw new RangeError(`query event out of order: id ${id} where ${counted} was expected`)
    this.counters.queries++
    this.pending.set(id, {t, arms, implicit: IMPLICIT_OPEN, labelled: false})
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
          this.bandit.observe(record.arms, 0)
          this.counters.expired++
        }
        this.detect(record.arms, record.implicit === IMPLICIT_USED ? this.bandit.settings.levels - 1 : 0)
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
    }
  }

  private detect(arms: readonly number[], level: number): void {
    if (this.bandit.outcome(arms, level)) this.counters.alarms++
  }

  /** A record for feedback, or the verdict when there is none. */
  private lookup(raw: string): PendingQuery | Verdict {
    const id = parseQueryId(raw)
    if (id === null || id > this.bandit.queries) {
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
    this.bandit.observe(record.arms, this.bandit.settings.levels - 1)
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
    this.bandit.observe(record.arms, grade)
    this.detect(record.arms, grade)
    this.counters.labels++
    return 'applied'
  }

  /** Queries still remembered. */
  get pendingCount(): number {
    return this.pending.size
  }

  save(): LearnerState {
    const pending: LearnerState['pending'] = []
    for (const [id, r] of this.pending) pending.push([id, r.t, r.arms, r.implicit, r.labelled ? 1 : 0])
    return {bandit: this.bandit.save(), counters: {...this.counters}, lastT: this.lastT, pending}
  }

  load(state: LearnerState): void {
    this.bandit.load(state.bandit)
    this.counters = {...zeroCounters(), ...state.counters}
    this.lastT = state.lastT
    this.pending.clear()
    this.implicitQueue = []
    this.implicitHead = 0
    for (const [id, t, arms, implicit, labelled] of state.pending) {
      this.bandit.checkArms(arms, `pending query ${id}`)
      this.pending.set(id, {t, arms, implicit, labelled: labelled === 1})
      // Every window that has not closed yet, used or not: its outcome still has to reach change
      // detection when it closes (expire() has closed exactly the windows that ended before lastT).
      if (this.implicit && implicit !== IMPLICIT_EXPIRED && t + this.windowMs >= this.lastT) this.implicitQueue.push(id)
    }
  }
}
