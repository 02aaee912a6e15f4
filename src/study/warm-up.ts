/**
 * The warm-up of a worker (WARM-UP below): a catch-up read made shortly before a trial is expected
 * to end, so that the locked section after it runs on warm caches.
 */

/**
 * WARM-UP. On a shared virtual machine a process that slept through a trial wakes with cold
 * caches, and so does the server backend it talks to: on this project's 2-core machine a loopback
 * `SELECT 1` took 0.2 ms back to back but 3.8-5.8 ms after the client slept 50 ms (about in
 * proportion to the idle time; a trivial Node echo server 3.4 ms, Python 0.8 ms), and 0.4-0.6 ms
 * when another query went 2-5 ms before it. So a worker catches its replica up (the read outside
 * the lock that the section would otherwise make, useful work) shortly before a trial is expected
 * to end, and the section that follows runs warm. Expected end: the shortest of this process's
 * last WARM_UP_HISTORY evaluations at the trial's budget (the earliest plausible end; one that
 * ends sooner only misses its warm-up). Lead: the warm-ups' own round trip (they run cold),
 * smoothed, plus WARM_UP_MARGIN_MS, so the read is back just before the trial ends.
 */
const WARM_UP_HISTORY = 8
/** Evaluations shorter than this are not warmed up: the extra round trip would cost more than the cold start it saves. */
export const WARM_UP_MIN_TRIAL_MS = 10
/** Evaluations at a budget seen before its trials are warmed up (one could be a cold start's outlier). */
const WARM_UP_MIN_SAMPLES = 2
/** Slack between the warm-up's expected return and the trial's expected end (ms). */
const WARM_UP_MARGIN_MS = 1
/** Lead before the first warm-up's round trip is known (ms): a cold round trip measured above. */
const WARM_UP_FIRST_LEAD_MS = 6
/** Weight of the newest warm-up round trip in the smoothed lead (exponential moving average). */
const WARM_UP_LEAD_WEIGHT = 0.25

/**
 * How long from now to wait before the warm-up read of an evaluation begun `sinceBeginMs` ago,
 * given this process's recent evaluation times at its budget (`past`, ms) and the warm-up's lead
 * (its own round trip, ms); undefined when it gets none (WARM-UP).
 */
export function warmUpDelay(
  past: readonly number[] | undefined,
  leadMs: number,
  sinceBeginMs: number,
): number | undefined {
  if (!past || past.length < WARM_UP_MIN_SAMPLES) return undefined
  const expected = Math.min(...past)
  if (expected < WARM_UP_MIN_TRIAL_MS) return undefined
  return Math.max(0, expected - leadMs - WARM_UP_MARGIN_MS - sinceBeginMs)
}

/** This process's recent evaluation times by budget, and the warm-ups' smoothed round trip. */
export class WarmUps {
  private readonly durations = new Map<number, number[]>()
  private leadMs = WARM_UP_FIRST_LEAD_MS
  private pending = false

  /** Records an evaluation's time (ms) at its budget. */
  note(budget: number, ms: number): void {
    const list = this.durations.get(budget) ?? []
    list.push(ms)
    if (list.length > WARM_UP_HISTORY) list.shift()
    this.durations.set(budget, list)
  }

  /** Records a warm-up read's round trip (ms). */
  noteRoundTrip(ms: number): void {
    this.leadMs += WARM_UP_LEAD_WEIGHT * (ms - this.leadMs)
  }

  /** Schedules `read` before the expected end of an evaluation begun at `begunAt` (performance.now()); returns its cancel. */
  before(budget: number, begunAt: number, read: () => Promise<void>): () => void {
    const delay = warmUpDelay(this.durations.get(budget), this.leadMs, performance.now() - begunAt)
    if (delay === undefined) return () => undefined
    const timer = setTimeout(() => {
      if (this.pending) return
      this.pending = true
      void read().finally(() => (this.pending = false))
    }, delay)
    return () => clearTimeout(timer)
  }
}
