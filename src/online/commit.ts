/**
 * Group commit: many appends, one flush. A tenant store writes each event to its log at once
 * (write(2), so a killed process loses nothing it wrote) and asks here for durability; the
 * committer collects every log file written to during one turn of the event loop and fdatasyncs
 * them together (in parallel on libuv's thread pool; ext4 folds concurrent syncs into one journal
 * commit), then acknowledges every waiter of the batch. Writes that arrive while a batch is being
 * flushed wait for the next batch, since the running sync may have started before them.
 *
 * fdatasync, not fsync: the logs are append-only, and fdatasync flushes the file size with the
 * data (POSIX: the metadata needed to read the data back); only the times are left to the kernel.
 */
import {fdatasync} from 'node:fs'

export interface CommitStats {
  /** Flushes done. */
  batches: number
  /** Commit requests acknowledged (one per logged event). */
  commits: number
  /** File syncs issued (one per log file per batch). */
  syncs: number
  /** Syncs that failed (their waiters were told). */
  failures: number
}

type Waiter = {resolve: () => void; reject: (error: Error) => void}

function syncFd(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())))
}

export class GroupCommit {
  private dirty = new Map<number, Waiter[]>()
  private running = false
  private scheduled = false
  readonly stats: CommitStats = {batches: 0, commits: 0, syncs: 0, failures: 0}
  /** Called after every batch with its size (commits) and how long the flush took (ms). */
  onBatch?: (commits: number, ms: number) => void

  constructor(private readonly sync: (fd: number) => Promise<void> = syncFd) {}

  /** Resolves once everything written to `fd` before this call is on disk. */
  commit(fd: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiters = this.dirty.get(fd)
      if (waiters) waiters.push({resolve, reject})
      else this.dirty.set(fd, [{resolve, reject}])
      this.schedule()
    })
  }

  /** Whether nothing waits for a flush. */
  get idle(): boolean {
    return !this.running && this.dirty.size === 0
  }

  private schedule(): void {
    if (this.running || this.scheduled) return
    this.scheduled = true
    // Let every request handled in this turn of the event loop join the batch.
    setImmediate(() => void this.flush())
  }

  private async flush(): Promise<void> {
    this.scheduled = false
    this.running = true
    const batch = this.dirty
    this.dirty = new Map()
    const started = performance.now()
    let commits = 0
    await Promise.all(
      [...batch].map(async ([fd, waiters]) => {
        commits += waiters.length
        try {
          await this.sync(fd)
          for (const w of waiters) w.resolve()
        } catch (error) {
          this.stats.failures++
          for (const w of waiters) w.reject(error as Error)
        }
      }),
    )
    this.stats.batches++
    this.stats.syncs += batch.size
    this.stats.commits += commits
    this.onBatch?.(commits, performance.now() - started)
    this.running = false
    if (this.dirty.size > 0) this.schedule()
  }
}
