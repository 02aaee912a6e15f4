/**
 * The kill -9 campaign: `kt online serve` under load (C clients, T tenants, a choose plus a
 * feedback per query) is SIGKILLed at K random moments and restarted each time. Afterwards, with
 * the server stopped, every tenant is opened through the library and checked:
 *
 * - every acknowledged choose is a remembered query, with the arms the client was given;
 * - every acknowledged feedback is applied (the query is marked used);
 * - nothing is credited twice: per set of bandits, the evidence beyond the prior equals the
 *   settled outcomes the counters report (uses + expired windows + labels), and the counters'
 *   uses equal the queries marked used;
 * - a request that was not answered (the connection died) was retried after the restart: a
 *   choose with the same caller query id returns the same configuration if it had been logged,
 *   a feedback is applied or answered 409 already_settled (the first attempt had been applied),
 *   never 404 unknown_query (an acknowledged choose is never lost).
 *
 * Half the tenants keep one set of bandits per query type, so per-type state is exercised too.
 * Tenants forget nothing (forgetting none), so the evidence check is exact.
 */
import {Rng} from '../util/rng.js'
import {streamSeed} from '../online/sampling.js'
import {CHOOSE_TYPES, openTenant} from '../online/library.js'
import {TenantBandit} from '../online/bandit.js'
import type {TenantLearner} from '../online/tenant.js'
import {RawClient} from './client.js'
import {startServerProcess, stopServerProcess, type ServerProcess} from './process.js'

/** Longest a round waits for its minAcksPerRound (a server that answers nothing fails the checks instead of hanging). */
const ROUND_ACK_WAIT_MS = 60_000

export interface CampaignOptions {
  dir: string
  kills: number
  tenants: number
  clients: number
  seed: number
  /** Load runs this long (uniform in [min, max] ms, seeded) before each kill. */
  minLoadMs: number
  maxLoadMs: number
  /**
   * Feedbacks acknowledged since the last restart before the next kill may land (default 0): the
   * load window is then also a count, so a slow or busy machine still puts each kill under load.
   */
  minAcksPerRound?: number
  onProgress?: (text: string) => void
}

/** What the clients saw and what the checks found; the kill -9 campaign's report adds its kills. */
export interface LoadReport {
  tenants: number
  clients: number
  acknowledged_chooses: number
  acknowledged_feedback: number
  /** Requests whose connection died unanswered, retried after a restart. */
  retried_chooses: number
  retried_feedback: number
  /** Retried chooses that found their query logged (same configuration returned). */
  retried_chooses_found: number
  /** Retried feedback answered 409 already_settled: the first attempt had been applied before the kill. */
  retried_feedback_already_applied: number
  /** Requests answered 503 or 429 (not applied) and sent again. */
  refused_503: number
  /** Checks that failed (empty: the campaign passed). */
  violations: string[]
  passed: boolean
}

export interface CampaignReport extends LoadReport {
  kills: number
}

interface Ack {
  tenant: string
  qid: string
  arms: string
}

/**
 * The campaigns' clients: each sends a choose then a feedback (used) for a random tenant, sending
 * a request again until it is answered (a 503 or 429, a connection that died, a server that is
 * down: pause() until resume()), and records what was acknowledged for check().
 */
export class CampaignLoad {
  readonly violations: string[] = []
  readonly chooses: Ack[] = []
  readonly feedbacks: Ack[] = []
  private retriedChooses = 0
  private retriedFeedback = 0
  private retriedFound = 0
  private alreadyApplied = 0
  /** Requests answered 503 or 429 so far (each sent again). */
  refused = 0
  private stopped = false
  private aborted = false
  private running: Promise<void>[] = []
  /** Resolves while the server is up; replaced by a pending promise while it is down. */
  private up: Promise<void> = Promise.resolve()
  private markUp: () => void = () => undefined
  /** Attempts per tenant whose answer was lost (each may have been logged: the only source of duplicate feedback). */
  private readonly lostAttempts = new Map<string, number>()

  constructor(
    private port: number,
    readonly tenants: string[],
    private readonly seed: number,
  ) {}

  /** Creates `count` tenants (half of them per query type, forgetting nothing so the evidence check is exact). */
  static async createTenants(port: number, count: number): Promise<string[]> {
    const tenants: string[] = []
    const admin = new RawClient(port)
    try {
      for (let i = 0; i < count; i++) {
        const id = `k${String(i).padStart(3, '0')}`
        const r = await admin.request(
          'POST',
          '/tenants',
          JSON.stringify({tenant: id, forgetting: 'none', levels: 2, per_type: i % 2 === 1, seed: i}),
        )
        if (r.status !== 201) throw new Error(`POST /tenants ${id}: ${r.status} ${r.body.toString()}`)
        tenants.push(id)
      }
    } finally {
      admin.close()
    }
    return tenants
  }

  start(clients: number): void {
    for (let i = 0; i < clients; i++) this.running.push(this.loop(i))
  }

  /** Requests wait from now on (the server is going down). */
  pause(): void {
    this.up = new Promise((res) => (this.markUp = res))
  }

  /** Requests go to the server at `port` from now on. */
  resume(port: number): void {
    this.port = port
    this.markUp()
  }

  async stop(): Promise<void> {
    this.stopped = true
    await Promise.all(this.running)
  }

  /** Stops with the server gone for good (it did not start again): requests waiting for it give up. */
  async abort(): Promise<void> {
    this.aborted = true
    this.markUp()
    await this.stop()
  }

  /** Sends until answered, waiting out restarts; true if an attempt went unanswered or was refused. */
  private async send(
    client: RawClient,
    tenant: string,
    path: string,
    body: string,
  ): Promise<{status: number; json: Record<string, unknown>; retried: boolean}> {
    let retried = false
    for (;;) {
      await this.up
      if (this.aborted) return {status: 0, json: {error: 'the server did not come back'}, retried}
      client.port = this.port
      try {
        const r = await client.request('POST', path, body)
        if (r.status === 503 || r.status === 429) {
          // not applied, retry (e.g. shutting down, not durable, a full disk, over the connection limit)
          retried = true
          this.refused++
          await new Promise((res) => setTimeout(res, 20))
          continue
        }
        return {status: r.status, json: RawClient.json(r) as Record<string, unknown>, retried}
      } catch {
        retried = true
        this.lostAttempts.set(tenant, (this.lostAttempts.get(tenant) ?? 0) + 1)
        client.close()
        await new Promise((res) => setTimeout(res, 10))
      }
    }
  }

  private async loop(index: number): Promise<void> {
    const client = new RawClient(this.port)
    const crng = new Rng(streamSeed(this.seed, 'campaign-client', index))
    const tenants = this.tenants
    let n = 0
    while (!this.stopped) {
      const tenant = tenants[crng.int(tenants.length)]
      const qid = `c${index}-${n++}`
      const type = CHOOSE_TYPES[crng.int(CHOOSE_TYPES.length)]
      const chosen = await this.send(client, tenant, `/tenants/${tenant}/choose`, JSON.stringify({query_id: qid, type}))
      if (this.aborted) break
      if (chosen.status !== 200) {
        this.violations.push(`choose ${tenant}/${qid}: ${chosen.status} ${JSON.stringify(chosen.json).slice(0, 200)}`)
        continue
      }
      if (chosen.retried) {
        this.retriedChooses++
        if (chosen.json.repeated === true) this.retriedFound++
      }
      this.chooses.push({tenant, qid, arms: JSON.stringify(chosen.json.arms)})
      const fed = await this.send(
        client,
        tenant,
        `/tenants/${tenant}/feedback`,
        JSON.stringify({query_id: qid, used: true}),
      )
      if (this.aborted) break
      if (fed.retried) this.retriedFeedback++
      if (fed.status === 200) this.feedbacks.push({tenant, qid, arms: ''})
      else if (fed.status === 409 && fed.retried && (fed.json.error as {code?: string})?.code === 'already_settled') {
        this.alreadyApplied++
        this.feedbacks.push({tenant, qid, arms: ''})
      } else
        this.violations.push(
          `feedback ${tenant}/${qid}: ${fed.status} ${JSON.stringify(fed.json).slice(0, 200)}${fed.retried ? ' (after a retry)' : ''}`,
        )
    }
    client.close()
  }

  /** With the server stopped: opens every tenant of `dir` through the library and checks it (the file comment's list); the report. */
  async check(dir: string, clients: number): Promise<LoadReport> {
    const violations = this.violations
    const byTenant = new Map<string, {chooses: Ack[]; feedback: Set<string>}>()
    for (const t of this.tenants) byTenant.set(t, {chooses: [], feedback: new Set()})
    for (const c of this.chooses) byTenant.get(c.tenant)!.chooses.push(c)
    for (const f of this.feedbacks) byTenant.get(f.tenant)!.feedback.add(f.qid)
    for (const id of this.tenants) {
      let tenant
      try {
        tenant = openTenant({dir, tenant: id})
      } catch (error) {
        violations.push(`${id}: does not open: ${(error as Error).message.slice(0, 300)}`)
        continue
      }
      try {
        checkTenant(tenant.store.learner, id, byTenant.get(id)!, this.lostAttempts.get(id) ?? 0, violations)
      } finally {
        await tenant.close()
      }
    }
    return {
      tenants: this.tenants.length,
      clients,
      acknowledged_chooses: this.chooses.length,
      acknowledged_feedback: this.feedbacks.length,
      retried_chooses: this.retriedChooses,
      retried_feedback: this.retriedFeedback,
      retried_chooses_found: this.retriedFound,
      retried_feedback_already_applied: this.alreadyApplied,
      refused_503: this.refused,
      violations: violations.slice(0, 50),
      passed: violations.length === 0,
    }
  }
}

/** The checks of one tenant's state against what its clients were acknowledged. */
function checkTenant(
  learner: TenantLearner,
  id: string,
  mine: {chooses: Ack[]; feedback: Set<string>},
  lost: number,
  violations: string[],
): void {
  for (const c of mine.chooses) {
    const q = learner.remembered(c.qid)
    if (!q) violations.push(`${id}: acknowledged query ${c.qid} is not in the state`)
    else if (JSON.stringify(q.arms) !== c.arms)
      violations.push(`${id}: query ${c.qid} plays other arms than the client was given`)
  }
  let used = 0
  for (const c of mine.chooses) if (learner.remembered(c.qid)?.used) used++
  for (const qid of mine.feedback)
    if (!learner.remembered(qid)?.used) violations.push(`${id}: acknowledged feedback for ${qid} is not in the state`)
  // Queries logged but never acknowledged may have been used too (their feedback was retried); count all remembered uses.
  const counters = learner.counters
  if (counters.used < used) violations.push(`${id}: counters.used ${counters.used} < acknowledged uses ${used}`)
  // A duplicate is a feedback attempt whose answer was lost but which had been logged, retried:
  // never more than the attempts that went unanswered.
  if (counters.duplicate > lost)
    violations.push(`${id}: ${counters.duplicate} duplicate feedbacks, but only ${lost} attempts went unanswered`)
  if (counters.unknown !== 0) violations.push(`${id}: ${counters.unknown} feedbacks for unknown queries`)
  // Exactly once: the evidence beyond the prior equals the settled outcomes.
  const fresh = openPriorMass(learner.bandit)
  const sets = [learner.bandit, ...learner.typedBandits().values()]
  let evidence = 0
  for (const b of sets) for (let a = 0; a < b.posteriors[0].arms; a++) evidence += b.posteriors[0].evidence(a)
  const beyondPrior = evidence - fresh * sets.length
  const settled = counters.used + counters.expired + counters.labels
  if (Math.abs(beyondPrior - settled) > 1e-6)
    violations.push(
      `${id}: evidence beyond the prior ${beyondPrior} != settled outcomes ${settled} (something credited twice or lost)`,
    )
}

export async function runKillCampaign(options: CampaignOptions): Promise<CampaignReport> {
  const progress = options.onProgress ?? (() => undefined)
  const rng = new Rng(streamSeed(options.seed, 'campaign'))
  let server: ServerProcess = await startServerProcess(['--dir', options.dir])
  const tenants = await CampaignLoad.createTenants(server.port, options.tenants)
  const load = new CampaignLoad(server.port, tenants, options.seed)
  load.start(options.clients)
  for (let k = 0; k < options.kills; k++) {
    const acksBefore = load.feedbacks.length
    await new Promise((res) =>
      setTimeout(res, options.minLoadMs + rng.next() * (options.maxLoadMs - options.minLoadMs)),
    )
    const waitUntil = Date.now() + ROUND_ACK_WAIT_MS
    while (load.feedbacks.length - acksBefore < (options.minAcksPerRound ?? 0) && Date.now() < waitUntil)
      await new Promise((res) => setTimeout(res, 10))
    load.pause()
    await stopServerProcess(server, 'SIGKILL')
    progress(`kill ${k + 1}/${options.kills}: ${load.feedbacks.length} feedbacks acknowledged so far`)
    server = await startServerProcess(['--dir', options.dir])
    load.resume(server.port)
  }
  await new Promise((res) => setTimeout(res, options.minLoadMs))
  await load.stop()
  await stopServerProcess(server, 'SIGTERM')
  return {kills: options.kills, ...(await load.check(options.dir, options.clients))}
}

/** Evidence a fresh set of bandits with these settings holds in its first dimension (the prior's pseudo-observations). */
function openPriorMass(bandit: TenantBandit): number {
  const fresh = new TenantBandit(bandit.space, bandit.profile, bandit.settings)
  let total = 0
  for (let a = 0; a < fresh.posteriors[0].arms; a++) total += fresh.posteriors[0].evidence(a)
  return total
}
