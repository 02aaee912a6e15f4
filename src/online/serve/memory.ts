/**
 * What bounds the server's memory by configuration rather than by traffic (src/online/README.md,
 * "Memory"): each open tenant remembers at most `perTenant` queries, all open tenants together at
 * most `total` (past it, the tenant that just chose is held to an equal share, total / open
 * tenants), the oldest forgotten first through a logged forget event (src/online/tenant.ts); and a
 * tenant with no request for `idleMs` is closed (its snapshot written, its descriptor and memory
 * freed; the next request opens it again).
 */
import type {Tenant} from '../library.js'

/**
 * Heap one remembered query takes, rounded up from 386 bytes measured: 50,000 chooses into one
 * journaled tenant, heap after a full GC (docs/measurements.md, "Memory per remembered query").
 */
const PENDING_QUERY_BYTES = 400
/**
 * The heap the remembered queries of all open tenants may take by default: 16 MiB, about an eighth
 * of the ~120 MB the server holds with 100 tenants open; a full load of ~900 queries/s (a shared
 * 2-core machine) fills it within the first minute.
 */
const DEFAULT_PENDING_BUDGET_BYTES = 16 * 1024 * 1024
/** Remembered queries over all open tenants by default: the budget at PENDING_QUERY_BYTES each (41,943). */
export const DEFAULT_MAX_PENDING_TOTAL = Math.floor(DEFAULT_PENDING_BUDGET_BYTES / PENDING_QUERY_BYTES)
/**
 * Remembered queries per tenant by default, about 8 MB of heap: a tenant taking more than this many
 * queries in its label window (an hour) forgets the oldest sooner.
 */
export const DEFAULT_MAX_PENDING_PER_TENANT = 20_000
/** A tenant with no request for this long is closed (5 minutes: the default implicit window). */
export const DEFAULT_IDLE_TENANT_MS = 5 * 60 * 1000
/** How often idle tenants are looked for (at most; sooner when the idle time is shorter). */
export const IDLE_CHECK_MS = 10_000
/** The total is summed over the open tenants once per this many chooses (in between it is kept up to date by the forgets). */
const PENDING_SUM_EVERY = 256

export interface MemoryLimits {
  perTenant: number
  total: number
  idleMs: number
}

export class TenantMemory {
  /** Queries forgotten to keep under the caps (the forget events logged). */
  evicted = 0
  /** Tenants closed because they were idle. */
  closedIdle = 0
  private readonly use = new WeakMap<Tenant, {last: number; inflight: number}>()
  private total = 0
  private sinceSum = PENDING_SUM_EVERY

  constructor(
    private readonly tenants: Map<string, Tenant>,
    readonly limits: MemoryLimits,
  ) {}

  /** A request for `tenant` starts. */
  begin(tenant: Tenant): void {
    let u = this.use.get(tenant)
    if (!u) this.use.set(tenant, (u = {last: 0, inflight: 0}))
    u.inflight++
    u.last = Date.now()
  }

  /** A request for `tenant` ended; after a choose, the caps are applied to it. */
  end(tenant: Tenant, chose: boolean): void {
    const u = this.use.get(tenant)
    if (u) {
      u.inflight--
      u.last = Date.now()
    }
    if (!chose) return
    if (++this.sinceSum >= PENDING_SUM_EVERY) this.pendingTotal()
    else this.total++
    const share =
      this.total > this.limits.total ? Math.floor(this.limits.total / Math.max(1, this.tenants.size)) : Infinity
    const forgotten = tenant.limitPending(Math.min(this.limits.perTenant, share))
    this.evicted += forgotten
    this.total -= forgotten
  }

  /** Remembered queries over all open tenants (summed now). */
  pendingTotal(): number {
    let total = 0
    for (const t of this.tenants.values()) total += t.pendingCount
    this.sinceSum = 0
    return (this.total = total)
  }

  /** Closes the tenants with no request in flight and none for limits.idleMs; returns how many. */
  closeIdle(now: number = Date.now()): number {
    let closed = 0
    for (const [id, tenant] of this.tenants) {
      const u = this.use.get(tenant)
      // a tenant opened or created without a request through begin(): its idle time starts now
      if (!u) this.use.set(tenant, {last: now, inflight: 0})
      if (!u || u.inflight > 0 || now - u.last < this.limits.idleMs) continue
      this.tenants.delete(id)
      tenant.closeSettled()
      closed++
    }
    this.closedIdle += closed
    return closed
  }
}
