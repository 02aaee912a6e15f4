/**
 * The server's write-ahead journal: one file for the events of every tenant, one fdatasync per
 * batch. Group commit over the tenants' own logs (commit.ts) pays one fdatasync per tenant log
 * touched in a batch, each 50-90 µs of kernel CPU and an ext4 journal commit of its own (the file
 * grew); `kt bench serve` spent more CPU in those syncs than in everything else. Here a batch of
 * events from any number of tenants is one frame, written with one pwrite into a preallocated
 * segment and made durable with one fdatasync, which on a file that does not grow commits no
 * metadata (measured here: 0.13 ms and about 50 µs of CPU, against 0.22 ms and 75 µs for an
 * appending write).
 *
 * Layout: `<dir>/.journal/<pid>-<start>-<seq>.wal`, where pid and start (its start time, as the
 * locks record it) name the process that writes it: a segment whose process is no longer running
 * is "dead" and is read by recovery. A segment is SEGMENT_BYTES of zeros, written and fsync'd
 * before use (created under a `.tmp` name and renamed), then filled with frames:
 *
 *   magic u32 LE (FRAME_MAGIC) | payload length u32 LE | crc32 u32 LE of length and payload | payload
 *
 * The payload is one line per event, `<tenant> <byte offset in the tenant's log> <the log line>`,
 * the log line being exactly what the tenant's own log gets (with its chained checksum). A frame
 * that does not fit the segment starts the next one.
 *
 * The tenants' own logs are written behind the journal: a tenant keeps its journaled lines in
 * memory and writes them to its log when it snapshots, when it closes, or when the segment
 * holding them is retired. Retiring (checkpoint): once a segment is full, every tenant that has
 * lines in it writes them to its log and fdatasyncs it; then the segment is deleted.
 *
 * Reading a segment (recovery): frames are read until the first header of zeros (the unused rest
 * of the segment). A frame that fails its checksum or runs past the end is a torn write of a
 * batch never acknowledged (its fdatasync did not return) when nothing intact follows it; if an
 * intact frame or any non-zero byte follows, a byte of the journal was changed after it was
 * written, and reading stops with one line naming the segment and the byte: kt does not guess
 * (the tenant logs' own rule).
 *
 * Failure: a failed write or fdatasync rejects the batch (its requests are told to retry) and
 * every later append: on Linux a failed fsync may have dropped the dirty pages, so nothing this
 * process still holds in memory can be trusted to reach the disk. The process must be restarted;
 * recovery then rebuilds every tenant from what is on disk.
 *
 * A full disk is not such a failure: the journal writes into segments whose space was taken when
 * they were prepared, so what fills up is the preparation of the next segment and the tenant logs
 * written behind. Without a prepared next segment, append() refuses (DiskFullError, thrown before
 * the caller applies anything) a line the current segment has no room for; a segment whose tenants
 * cannot write their logs back is kept, with their lines in memory. Both are tried again every
 * DISK_RETRY_MS, so the journal takes lines again by itself once space returns. A tenant that
 * closes without its lines in its log (retain()) keeps every segment for recovery at the next start.
 */
import {closeSync, existsSync, fdatasync, fsyncSync, openSync, renameSync, rmSync, writeSync} from 'node:fs'
import {close as closeCb, fsync as fsyncCb, open as openCb, rename as renameCb, write as writeCb} from 'node:fs'
import {promisify} from 'node:util'
import {join} from 'node:path'
import {ensureDir, fsyncDir} from '../util/fs.js'
import type {CommitStats} from './commit.js'
import {
  FRAME_HEADER_BYTES,
  FRAME_MAGIC,
  JOURNAL_DIR,
  OWN_START,
  SEGMENT_SUFFIX,
  frameCrc,
  removeDeadSegmentTemps,
} from './journal-segments.js'
export {
  FRAME_HEADER_BYTES,
  JOURNAL_DIR,
  deadRecordsFor,
  deadSegments,
  readSegment,
  type JournalRecord,
} from './journal-segments.js'

/**
 * Size of one segment. At 5,000 queries/s (two events of about 200 bytes each) 4 MB last about
 * 2 s; retiring one syncs every tenant log written meanwhile (100 tenants: about 8 ms of kernel
 * CPU), and a dead one is read whole by recovery (about 2 ms).
 */
const SEGMENT_BYTES = 4 * 1024 * 1024
/**
 * Flushes that may be in flight at once. With 1, a request that arrives during a sync waits for it
 * and then for its own (1.5 syncs on average); with 2 the next batch starts at once, at the price
 * of somewhat smaller batches (7-8 events against 8 with 16 clients). Measured here, interleaved
 * runs of 1 and 2 at load average 13-19 did not separate (queries/s and CPU per query within the
 * noise of the shared disk); 2 is kept for the shorter wait when syncs are fast.
 */
const MAX_INFLIGHT_FLUSHES = 2
/** Tenant-log syncs a checkpoint runs at once (bin/kt.js gives `kt online serve` a thread pool with room for these, the journal's flushes and a segment being prepared). */
const CHECKPOINT_SYNCS_AT_ONCE = 2
/** Zeros written at a time while preparing a segment. */
const ZERO_CHUNK = 1024 * 1024
/** How often a journal short of disk space tries again to prepare its next segment and to retire the segments it kept. */
const DISK_RETRY_MS = 1000
/** Longest a batch that needs the next segment waits for the disk to make room for it before the journal fails. */
const ROTATE_WAIT_MS = 60_000

/** A tenant whose events are journaled: it writes its lines to its own log at a checkpoint. */
export interface JournalClient {
  /** Writes every line logged so far that is not yet in the tenant's own log (a no-op when closed). */
  writeBack(): void
  /** Resolves once the tenant's own log is on disk (at once when closed: closing syncs it). */
  syncLog(): Promise<void>
}

interface Segment {
  fd: number
  path: string
  /** Next byte to write. */
  pos: number
  size: number
  /** Tenants with a frame in this segment. */
  clients: Set<JournalClient>
}

interface Batch {
  lines: string[]
  /** Bytes of the frame these lines make (header included). */
  bytes: number
  clients: Set<JournalClient>
  promise: Promise<void>
  resolve: () => void
  reject: (error: Error) => void
}

function newBatch(): Batch {
  let resolve!: () => void
  let reject!: (error: Error) => void
  const promise = new Promise<void>((res, rej) => {
    resolve = res
    reject = rej
  })
  // Nobody may be waiting when a batch fails (a request whose client went away): not an unhandled rejection.
  promise.catch(() => undefined)
  return {lines: [], bytes: FRAME_HEADER_BYTES, clients: new Set(), promise, resolve, reject}
}

const openP = promisify(openCb)
const closeP = promisify(closeCb)
const fsyncP = promisify(fsyncCb)
const renameP = promisify(renameCb)
const writeP = (fd: number, buffer: Buffer, offset: number, length: number, position: number): Promise<number> =>
  new Promise((resolve, reject) =>
    writeCb(fd, buffer, offset, length, position, (error, written) => (error ? reject(error) : resolve(written))),
  )

function syncFd(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())))
}

export interface JournalOptions {
  segmentBytes?: number
  /** The flush (tests inject failures); default fdatasync on the thread pool. */
  sync?: (fd: number) => Promise<void>
  /** Flushes that may overlap (default MAX_INFLIGHT_FLUSHES). */
  maxInflight?: number
  /** One line per problem that does not fail a request (a checkpoint that could not finish). */
  log?: (line: string) => void
}

export interface JournalStats extends CommitStats {
  /** Segments retired (their tenants' logs synced, the segment deleted). */
  checkpoints: number
  /** Lines refused because the disk had no room for the next segment (DiskFullError: answered 503, nothing applied). */
  diskFull: number
  /** Checkpoints that failed and were kept to be tried again (a tenant log the disk had no room for). */
  checkpointFailures: number
}

/**
 * The journal has no room for a line: its current segment is full and the next could not be
 * prepared (the disk is full). Thrown by append() before the caller applies anything; the request
 * may be sent again. `code` is an errno, as the write calls' own errors have.
 */
class DiskFullError extends Error {
  readonly code = 'ENOSPC'
  constructor(detail: string) {
    super(`the journal has no room for more events: ${detail}`)
    this.name = 'DiskFullError'
  }
}

export class Journal {
  readonly dir: string
  private segment: Segment
  private next: Promise<Segment> | undefined
  private seq = 0
  private batch: Batch | undefined
  /** Flushes started and not yet finished. */
  private inflight = 0
  /** Whether the last flush started succeeded (resolves when it ends). */
  private lastFlush: Promise<boolean> = Promise.resolve(true)
  /** A flush is moving to the next segment: no other starts meanwhile. */
  private rotating = false
  private readonly maxInflight: number
  private scheduled = false
  private checkpoints = new Set<Promise<void>>()
  private closed = false
  /** The next segment: being prepared, ready to take over, or its preparation failed (a full disk). */
  private nextState: 'preparing' | 'ready' | 'failed' = 'preparing'
  private nextError = ''
  /** Bytes of frames appended and not yet written (the open batch and batches waiting to be written). */
  private queuedBytes = 0
  /** Segments whose checkpoint failed: kept (with their tenants' lines in memory) and tried again. */
  private unretired = new Set<Segment>()
  private retiring = new Set<Segment>()
  private retrying: NodeJS.Timeout | undefined
  /** A tenant closed without its lines in its log: every segment stays for recovery (see retain). */
  private retained = false
  /** Set after a failed write or sync: every later append is refused (see the file comment). */
  failed: Error | undefined
  readonly stats: JournalStats = {
    batches: 0,
    commits: 0,
    syncs: 0,
    failures: 0,
    checkpoints: 0,
    diskFull: 0,
    checkpointFailures: 0,
  }
  /** Called after every batch with its size (events) and how long its write and sync took (ms). */
  onBatch?: (commits: number, ms: number) => void
  private readonly segmentBytes: number
  private readonly sync: (fd: number) => Promise<void>
  private readonly log: (line: string) => void

  /**
   * Opens a new journal in `<dir>/.journal`. Dead segments are not touched here: recoverJournals
   * (store.ts) applies them to the tenants' logs first (the server calls it before this).
   */
  constructor(dir: string, options: JournalOptions = {}) {
    this.dir = join(dir, JOURNAL_DIR)
    this.segmentBytes = options.segmentBytes ?? SEGMENT_BYTES
    this.sync = options.sync ?? syncFd
    this.maxInflight = options.maxInflight ?? MAX_INFLIGHT_FLUSHES
    this.log = options.log ?? ((line) => process.stderr.write(`${line}\n`))
    ensureDir(this.dir)
    removeDeadSegmentTemps(dir)
    this.segment = this.createSegmentSync()
    this.prepareNext()
  }

  private segmentName(seq: number): string {
    return `${process.pid}-${OWN_START}-${String(seq).padStart(6, '0')}${SEGMENT_SUFFIX}`
  }

  /** A fresh segment: zeros written and fsync'd under a temp name, renamed, the folder fsync'd. */
  private createSegmentSync(): Segment {
    const path = join(this.dir, this.segmentName(++this.seq))
    const tmp = `${path}.tmp`
    const fd = openSync(tmp, 'w+')
    try {
      const zeros = Buffer.alloc(Math.min(ZERO_CHUNK, this.segmentBytes))
      for (let done = 0; done < this.segmentBytes;) {
        const n = Math.min(zeros.length, this.segmentBytes - done)
        writeSync(fd, zeros, 0, n, done)
        done += n
      }
      fsyncSync(fd)
      renameSync(tmp, path)
      fsyncDir(this.dir)
    } catch (error) {
      closeSync(fd)
      rmSync(tmp, {force: true})
      throw error
    }
    return {fd, path, pos: 0, size: this.segmentBytes, clients: new Set()}
  }

  /** The same, off the event loop (the next segment is prepared while this one fills). */
  private async createSegment(): Promise<Segment> {
    const path = join(this.dir, this.segmentName(++this.seq))
    const tmp = `${path}.tmp`
    const fd = await openP(tmp, 'w+')
    try {
      const zeros = Buffer.alloc(Math.min(ZERO_CHUNK, this.segmentBytes))
      for (let done = 0; done < this.segmentBytes;) {
        const n = Math.min(zeros.length, this.segmentBytes - done)
        await writeP(fd, zeros, 0, n, done)
        done += n
      }
      await fsyncP(fd)
      await renameP(tmp, path)
      const dirFd = await openP(this.dir, 'r')
      try {
        await fsyncP(dirFd)
      } finally {
        await closeP(dirFd)
      }
    } catch (error) {
      await closeP(fd).catch(() => undefined)
      rmSync(tmp, {force: true})
      throw error
    }
    return {fd, path, pos: 0, size: this.segmentBytes, clients: new Set()}
  }

  private prepareNext(): void {
    const next = this.createSegment()
    this.nextState = 'preparing'
    next.then(
      () => {
        if (this.next === next) this.nextState = 'ready'
      },
      (error: Error) => {
        if (this.next !== next) return
        this.nextState = 'failed'
        this.nextError = error.message.split('\n')[0]
        this.retryLater()
      },
    )
    this.next = next
  }

  /** Tries again, every DISK_RETRY_MS until nothing is left, what a full disk refused: the next segment, the kept checkpoints. */
  private retryLater(): void {
    if (this.retrying || this.closed) return
    this.retrying = setInterval(() => {
      if (this.nextState === 'failed') this.prepareNext()
      for (const segment of this.unretired) this.startCheckpoint(segment)
      if (this.nextState !== 'failed' && this.unretired.size === 0) {
        clearInterval(this.retrying)
        this.retrying = undefined
      }
    }, DISK_RETRY_MS)
    this.retrying.unref()
  }

  /**
   * Keeps every segment of this journal when it closes (recovery at the next start applies them):
   * a tenant closed without writing its journaled lines to its log (a full disk).
   */
  retain(): void {
    this.retained = true
  }

  /**
   * Journals one line of `tenant`'s log (with its newline) at byte `offset` of that log; resolves
   * once it is durable. Lines of one tenant must be appended in log order.
   */
  append(client: JournalClient, tenant: string, offset: number, line: string): Promise<void> {
    if (this.failed || this.closed) {
      const refused = Promise.reject(this.failed ?? new Error('journal is closed'))
      refused.catch(() => undefined)
      return refused
    }
    const record = `${tenant} ${offset} ${line}`
    const bytes = Buffer.byteLength(record) + (this.batch ? 0 : FRAME_HEADER_BYTES)
    // With no next segment ready to move to, a line must fit the current one: refused before anything
    // is applied. A batch never waits for a preparation (clients would stall, not be told 503); a slow
    // preparation costs a retryable 503 instead.
    if (this.nextState !== 'ready' && this.segment.pos + this.queuedBytes + bytes > this.segment.size) {
      this.stats.diskFull++
      this.retryLater()
      throw new DiskFullError(this.nextState === 'failed' ? this.nextError : 'the next segment is still being prepared')
    }
    let batch = this.batch
    if (!batch) batch = this.batch = newBatch()
    this.queuedBytes += bytes
    batch.bytes += bytes - (batch.lines.length === 0 ? FRAME_HEADER_BYTES : 0)
    batch.lines.push(record)
    batch.clients.add(client)
    this.schedule()
    return batch.promise
  }

  /** Whether nothing waits for a flush. */
  get idle(): boolean {
    return this.inflight === 0 && this.batch === undefined
  }

  private schedule(): void {
    if (this.scheduled || this.inflight >= this.maxInflight || this.rotating) return
    this.scheduled = true
    // Let every request handled in this turn of the event loop join the batch.
    setImmediate(this.flushNow)
  }

  private readonly flushNow = (): void => {
    this.scheduled = false
    const batch = this.batch
    if (!batch || this.inflight >= this.maxInflight || this.rotating) return
    this.batch = undefined
    void this.flush(batch)
  }

  /**
   * Writes one batch as a frame and syncs it. Up to maxInflight flushes overlap (a batch need not
   * wait for the previous sync to return before its own starts); a batch is acknowledged only
   * after every earlier batch was, and fails if one of them failed: after a failed fdatasync Linux
   * may report success to the next caller although the failed pages never reached the disk.
   */
  private async flush(batch: Batch): Promise<void> {
    this.inflight++
    const started = performance.now()
    const previous = this.lastFlush
    let done!: (ok: boolean) => void
    const mine = new Promise<boolean>((resolve) => (done = resolve))
    this.lastFlush = mine
    let ok = false
    let queued = batch.bytes
    try {
      if (this.failed) throw this.failed
      const payload = Buffer.from(batch.lines.join(''), 'utf8')
      const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payload.length)
      frame.writeUInt32LE(FRAME_MAGIC, 0)
      frame.writeUInt32LE(payload.length, 4)
      payload.copy(frame, FRAME_HEADER_BYTES)
      frame.writeUInt32LE(frameCrc(frame, frame.length), 8)
      if (this.segment.pos > 0 && this.segment.pos + frame.length > this.segment.size) {
        // A batch in the next segment must not be acknowledged while one in this segment may still be lost.
        this.rotating = true
        try {
          await previous
          await this.rotate()
        } finally {
          this.rotating = false
        }
      }
      if (this.failed) throw this.failed
      const segment = this.segment
      let written = 0
      while (written < frame.length)
        written += writeSync(segment.fd, frame, written, frame.length - written, segment.pos + written)
      segment.pos += frame.length
      this.queuedBytes -= queued
      queued = 0
      for (const c of batch.clients) segment.clients.add(c)
      await this.sync(segment.fd)
      if (!(await previous)) throw this.failed ?? new Error('an earlier journal batch failed')
      this.stats.batches++
      this.stats.syncs++
      this.stats.commits += batch.lines.length
      ok = true
      batch.resolve()
    } catch (error) {
      this.stats.failures++
      if (!this.failed) {
        this.failed = error as Error
        this.log(
          JSON.stringify({
            t: new Date().toISOString(),
            level: 'error',
            code: 'not_durable',
            message: `journal ${this.segment.path}: ${(error as Error).message}; no request is acknowledged any more: restart the server (recovery reads the journal)`,
          }),
        )
      }
      this.queuedBytes -= queued
      batch.reject(error as Error)
      // Everything already waiting for the next batch is refused too.
      const waiting = this.batch as Batch | undefined
      this.batch = undefined
      if (waiting) this.queuedBytes -= waiting.bytes
      waiting?.reject(this.failed)
    }
    done(ok)
    this.inflight--
    this.onBatch?.(batch.lines.length, performance.now() - started)
    if (this.batch) this.schedule()
  }

  /** Starts writing into the next segment and retires the full one in the background. */
  private async rotate(): Promise<void> {
    const old = this.segment
    let next: Segment | undefined
    try {
      next = await this.next!
    } catch {
      // the preparation failed after this batch was taken: the disk filled meanwhile; its events are
      // applied, so the batch waits for space (DISK_RETRY_MS apart, at most ROTATE_WAIT_MS) rather than fail
      for (const until = Date.now() + ROTATE_WAIT_MS; !next;) {
        try {
          next = this.createSegmentSync()
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOSPC' || Date.now() > until) throw error
          await new Promise((resolve) => setTimeout(resolve, DISK_RETRY_MS))
        }
      }
    }
    this.segment = next
    this.prepareNext()
    this.startCheckpoint(old)
  }

  /** Retires `old` in the background (not twice at once: a kept segment is tried again while its last try may still run). */
  private startCheckpoint(old: Segment): void {
    if (this.retiring.has(old)) return
    this.retiring.add(old)
    const checkpoint = this.retire(old).finally(() => this.retiring.delete(old))
    this.checkpoints.add(checkpoint)
    void checkpoint.finally(() => this.checkpoints.delete(checkpoint))
  }

  /**
   * Writes every tenant of `old` back to its own log, syncs those logs, then deletes `old`. A
   * tenant that cannot (a full disk) keeps its lines, and the segment is kept and tried again.
   */
  private async retire(old: Segment): Promise<void> {
    try {
      for (const c of old.clients) {
        c.writeBack()
        // one tenant per turn of the event loop: a hundred writes in a row would hold up every request for milliseconds
        await new Promise((resolve) => setImmediate(resolve))
      }
      // A few syncs at a time: a thread-pool queue full of them would hold up the journal's own fdatasync, which every request waits for.
      const clients = [...old.clients]
      let nextClient = 0
      const worker = async (): Promise<void> => {
        while (nextClient < clients.length) await clients[nextClient++].syncLog()
      }
      await Promise.all(Array.from({length: Math.min(CHECKPOINT_SYNCS_AT_ONCE, clients.length)}, worker))
      if (this.retained) return
      closeSync(old.fd)
      rmSync(old.path, {force: true})
      this.unretired.delete(old)
      this.stats.checkpoints++
    } catch (error) {
      // The segment stays: tried again, and recovery applies it after a restart (applying is idempotent).
      this.stats.checkpointFailures++
      if (!this.unretired.has(old))
        this.log(
          JSON.stringify({
            t: new Date().toISOString(),
            level: 'error',
            code: 'checkpoint_failed',
            message: `journal ${old.path}: ${(error as Error).message}; kept, tried again every ${DISK_RETRY_MS} ms and applied by recovery after a restart`,
          }),
        )
      this.unretired.add(old)
      this.retryLater()
    }
  }

  /**
   * Waits for the batch in flight and the checkpoints, then deletes this journal's segments: call
   * it after closing every tenant that used it (closing writes a tenant's lines to its own log and
   * syncs it). After a failure the segments stay for recovery.
   */
  async close(): Promise<void> {
    if (this.closed) return
    while (this.inflight > 0 || this.batch) await new Promise((resolve) => setImmediate(resolve))
    this.closed = true
    clearInterval(this.retrying)
    this.retrying = undefined
    await Promise.all(this.checkpoints)
    // every tenant has closed (its lines written to its log and synced): a kept checkpoint can finish now, or stays for recovery
    for (const segment of this.unretired) this.startCheckpoint(segment)
    await Promise.all(this.checkpoints)
    const next = await this.next?.catch(() => undefined)
    for (const s of [this.segment, next, ...this.unretired]) {
      if (!s) continue
      try {
        closeSync(s.fd)
      } catch {
        // already closed
      }
      if (!this.failed && !this.retained && !this.unretired.has(s)) rmSync(s.path, {force: true})
    }
  }
}

/** Whether `dir` has a journal folder at all (no folder: nothing to recover, no readdir per open). */
export function hasJournal(dir: string): boolean {
  return existsSync(join(dir, JOURNAL_DIR))
}
