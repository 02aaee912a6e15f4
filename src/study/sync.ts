/** Small async primitives of the study workers: a mutex and a wake-up signal within one process. */

/** Runs async sections one at a time, in call order. */
export class Mutex {
  private tail: Promise<unknown> = Promise.resolve()

  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.tail.then(fn, fn)
    this.tail = result.catch(() => undefined)
    return result
  }
}

/** Wakes every waiter in this process at once (a change this process made). */
export class LocalWake {
  private waiters = new Set<() => void>()
  /** Incremented by every fire(): a waiter that saw an older value returns at once (no lost wake-up). */
  generation = 0

  fire(): void {
    this.generation++
    const waiters = [...this.waiters]
    this.waiters.clear()
    for (const w of waiters) w()
  }

  /** Resolves on fire(), after timeoutMs, or when the signal aborts. */
  wait(timeoutMs: number, signal?: AbortSignal, since?: number): Promise<void> {
    if (signal?.aborted || (since !== undefined && since !== this.generation)) return Promise.resolve()
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer)
        this.waiters.delete(done)
        signal?.removeEventListener('abort', done)
        resolve()
      }
      const timer = setTimeout(done, Math.max(0, timeoutMs))
      this.waiters.add(done)
      signal?.addEventListener('abort', done, {once: true})
    })
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new LocalWake().wait(ms, signal)
}

/**
 * Gives the event loop a turn (setImmediate) when `everyMs` passed since the last one: a loop
 * whose awaits all settle as microtasks (an in-process objective on SQLite) otherwise starves
 * signal handlers, timers and I/O for as long as it runs.
 */
export class EventLoopTurns {
  private last = performance.now()

  constructor(private readonly everyMs: number) {}

  /** Resolves after a turn of the event loop when one is due; at once otherwise. */
  async take(): Promise<void> {
    if (performance.now() - this.last < this.everyMs) return
    await new Promise<void>((resolve) => setImmediate(resolve))
    this.last = performance.now()
  }
}
