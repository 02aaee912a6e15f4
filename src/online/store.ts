/**
 * Persistence of a tenant's learner: an append-only event log plus a checksummed state snapshot.
 *
 * <dir>/<tenant>/log.jsonl: line 1 the init record, then one event per line (log-file.ts), each
 * written with one write() and fsync'd before the event is applied, so an acknowledged query or
 * feedback survives a crash. With a GroupCommit (commit.ts) the line is written, applied, and
 * acknowledged once the batch's fdatasync covered it (durable()); later events of the tenant may
 * see it before then, which is safe: a later event that is durable implies every earlier line is.
 * Under a journal (journal.ts; the server) the line is journaled and written to the log behind it.
 *
 * <dir>/<tenant>/state.json (state-file.ts): written every SNAPSHOT_EVERY_EVENTS events and on
 * close, always after the log it covers is synced. Under a journal also not before the log has
 * grown by the last snapshot's size (a snapshot holds every remembered query, so at a few hundred
 * events it would cost more than the log; this way it costs at most as much to write, and replay
 * reads at most about one snapshot's worth of log), and off the request path (snapshotInTurns).
 *
 * <dir>/<tenant>/lock: the lock every kt store shares (src/util/lock.ts); an opener that finds it
 * held waits up to LOCK_WAIT_MS. Under it, temp files of state.json a kill left behind are removed.
 *
 * Opening loads the snapshot and replays the log lines after it. A snapshot that is missing its
 * checksum line, fails the checksum, does not parse or does not fit the space is discarded and the
 * learner rebuilt from the whole log (the log is the truth; the snapshot only saves replay time).
 * A checksummed snapshot that covers more bytes than the log holds is damage, refused in one line
 * naming the log. A torn last log line (a crash mid-write) is cut off; it was never acknowledged.
 * A log line that does not match its chained checksum stops the open with one line naming it: the
 * log cannot be trusted and kt does not guess. The query counter is part of the state, so
 * scheduled decay resumes in phase after a restart.
 */
import {
  closeSync,
  existsSync,
  fdatasync,
  fdatasyncSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  rmSync,
  writeSync,
} from 'node:fs'
import {join} from 'node:path'
import type {Config, ParamSpace} from '../space/types.js'
import {InputError, describeValue} from '../util/errors.js'
import {ensureDir, fsyncDir} from '../util/fs.js'
import {acquireDirLock, releaseDirLock, removeStaleTemps, LOCK_WAIT_MS as DEFAULT_LOCK_WAIT_MS} from '../util/lock.js'
import type {BanditSettings} from './bandit.js'
import {TenantBandit} from './bandit.js'
import {removeIfEmpty} from './spaces.js'
import {validateTenantId} from './tenant-id.js'
import type {GroupCommit} from './commit.js'
import {type Journal, type JournalClient, deadRecordsFor, hasJournal} from './journal.js'
import {catchUpLog} from './journal-recovery.js'
import {LOG_FILE, LOG_FORMAT, chainedLine, readFirstLine, replayLog, verifyChained, verifyCovered} from './log-file.js'
import {STATE_FILE, readStateFile, stateInTurns, stateNow, writeState, type LogPosition} from './state-file.js'
import {
  type QueryEvent,
  type TenantEvent,
  type PriorOrigin,
  type TenantInit,
  type Verdict,
  TenantLearner,
  dimensionsFingerprint,
} from './tenant.js'

/** Re-exported for callers that check lock owners (tests). */
export {processStartTime} from '../util/proc.js'

/** Events between snapshots: bounds replay after a crash to this many lines. */
const SNAPSHOT_EVERY_EVENTS = 200

/** How long opening waits for a tenant another process has open (the shared lock's default wait). */
const LOCK_WAIT_MS = DEFAULT_LOCK_WAIT_MS

/**
 * A tenant's stored files (log, snapshot, journal) do not read back as kt wrote them: damage to
 * fix on the server (restore from a backup), not a mistake of whoever asked. Keeps the message
 * (it names the file and line) for the operator; the HTTP service does not send it to clients.
 */
export class StateDamagedError extends InputError {
  constructor(cause: InputError) {
    super(cause.where, cause.expected, cause.got)
    this.name = 'StateDamagedError'
  }
}

export interface CreateOptions {
  space: ParamSpace
  profile: Config
  /** Per query type, a routed profile's overrides (TenantInit.overrides). */
  overrides?: Record<string, Config>
  /** The deployed profile behind the prior (TenantInit.origin). */
  origin?: PriorOrigin
  settings: BanditSettings
  seed: number
}

export interface OpenOptions {
  dir: string
  tenant: string
  /** Creates the tenant (it must not exist yet). */
  create?: CreateOptions
  /** Finds a space by id (for tenants created earlier). */
  resolveSpace?: (id: string) => ParamSpace
  snapshotEvery?: number
  /** How long to wait for a tenant another process has open (default LOCK_WAIT_MS). */
  lockWaitMs?: number
  /** Batches the log syncs with other tenants' (events are acknowledged through durable()); absent: one fsync per event. */
  groupCommit?: GroupCommit
  /** Journals the events instead (journal.ts: one fdatasync per batch for all tenants, the log written behind it); wins over groupCommit. */
  journal?: Journal
}

/** What opening found. */
export interface OpenReport {
  /** Log lines replayed after the snapshot. */
  replayed: number
  /** Why the snapshot was discarded and the state rebuilt from the log, or null. */
  rebuilt: string | null
  /** Bytes of a torn last log line that were cut off. */
  tornBytes: number
  /** Lines a dead process had journaled but not yet written to the log, appended from its journal (journal.ts). */
  journaled: number
}

export class TenantStore implements JournalClient {
  private fd: number
  private sinceSnapshot = 0
  /** Log bytes at the last snapshot, and that snapshot's size (the journaled store's snapshot rule). */
  private snapshotAt = {logBytes: 0, size: 0}
  private closed = false
  /** Durability of the last logged event under group commit. */
  private lastCommit: Promise<void> | undefined
  /** Set when a log sync failed: what was applied in memory may not be on disk, so the store takes nothing more. */
  failed: Error | undefined
  private groupCommit: GroupCommit | undefined
  private journal: Journal | undefined
  /** Journaled lines not yet written to the log file (written at a snapshot, at close, or when their journal segment is retired). */
  private unwritten: string[] = []
  /** Bytes of the log file that hold complete lines: the next write goes there, never after a torn tail. */
  private fileBytes: number
  /** A failed write left bytes past fileBytes that could not be cut off yet. */
  private tornTail = false
  /** A journaled store's snapshot is being made (snapshotInTurns). */
  private snapshotRunning = false
  /** Snapshots that failed (a full disk): the log still holds everything, the next one is tried later. */
  snapshotFailures = 0

  private constructor(
    readonly dir: string,
    readonly learner: TenantLearner,
    private readonly initLine: string,
    /** Lines and bytes in the log (the init line included). */
    private log: {lines: number; bytes: number},
    /** Checksum of the last log line (format 2), or null for a format-1 log. */
    private chain: string | null,
    readonly openReport: OpenReport,
    private readonly snapshotEvery: number,
  ) {
    // not O_APPEND: every write names its offset, so a torn tail is overwritten, never built upon
    this.fd = openSync(join(dir, LOG_FILE), 'r+')
    this.fileBytes = log.bytes
  }

  /** Opens (or with `create`, creates) a tenant; see the file comment for recovery. */
  static open(options: OpenOptions): TenantStore {
    validateTenantId(options.tenant)
    const dir = join(options.dir, options.tenant)
    const logPath = join(dir, LOG_FILE)
    const c = options.create
    let bandit: TenantBandit | undefined
    let madeDir = false
    if (c) {
      if (existsSync(logPath))
        throw new InputError(logPath, `no existing tenant ${options.tenant}`, 'a tenant with that id')
      // Checks settings, profile and tuned parameters before anything is created: a failed init leaves no folder behind.
      bandit = new TenantBandit(c.space, c.profile, c.settings)
      madeDir = !existsSync(dir)
      ensureDir(dir)
    } else if (!existsSync(logPath))
      throw new InputError(
        logPath,
        `an existing tenant ${options.tenant} (create it with kt online init)`,
        'no such tenant',
      )
    try {
      acquireDirLock(dir, {
        waitMs: options.lockWaitMs ?? LOCK_WAIT_MS,
        expected: 'a tenant nobody else has open',
        subject: `tenant ${options.tenant}`,
      })
      let madeLog = false
      try {
        if (c) {
          // Another init may have created the tenant while this one waited for the lock.
          if (existsSync(logPath))
            throw new InputError(logPath, `no existing tenant ${options.tenant}`, 'a tenant with that id')
          TenantStore.writeInit(dir, options.tenant, c, bandit!)
          madeLog = true
          // the new folder's entry in the tenants' folder: without it a power loss can lose an acknowledged tenant
          if (madeDir) fsyncDir(options.dir)
        }
        // Under the lock nobody else writes the snapshot: a temp file of it is what a kill left behind.
        removeStaleTemps(dir, STATE_FILE)
        // Events a dead server journaled but had not yet written to this log (journal.ts).
        try {
          const journaled =
            !c && hasJournal(options.dir) ? catchUpLog(logPath, deadRecordsFor(options.dir, options.tenant)) : 0
          return TenantStore.load(dir, options, journaled)
        } catch (error) {
          // What was read back is not what kt wrote: the stored state, not the caller, is at fault.
          throw error instanceof InputError ? new StateDamagedError(error) : error
        }
      } catch (error) {
        if (madeLog) rmSync(logPath, {force: true})
        releaseDirLock(dir)
        throw error
      }
    } catch (error) {
      if (madeDir) removeIfEmpty(dir)
      throw error
    }
  }

  /** Writes the init record as a new log; a log it fails to complete is removed again. */
  private static writeInit(dir: string, tenant: string, c: CreateOptions, bandit: TenantBandit): void {
    const init: TenantInit = {
      e: 'init',
      v: LOG_FORMAT,
      tenant,
      space: c.space.id,
      dims: dimensionsFingerprint(bandit),
      profile: c.profile,
      ...(c.overrides && Object.keys(c.overrides).length > 0 ? {overrides: c.overrides} : {}),
      ...(c.origin ? {origin: c.origin} : {}),
      settings: c.settings,
      seed: c.seed,
    }
    const logPath = join(dir, LOG_FILE)
    const fd = openSync(logPath, 'wx')
    try {
      writeSync(fd, `${chainedLine('', JSON.stringify(init)).line}\n`)
      fsyncSync(fd)
    } catch (error) {
      rmSync(logPath, {force: true})
      throw error
    } finally {
      closeSync(fd)
    }
    fsyncDir(dir)
  }

  private static load(dir: string, options: OpenOptions, journaled: number): TenantStore {
    const logPath = join(dir, LOG_FILE)
    const initLine = readFirstLine(logPath)
    let init: TenantInit
    try {
      init = JSON.parse(initLine) as TenantInit
    } catch (error) {
      throw new InputError(`${logPath}:1`, 'one JSON event per line', (error as Error).message.split('\n')[0])
    }
    const where = `${logPath}:1`
    if (init?.e !== 'init' || (init.v !== 1 && init.v !== LOG_FORMAT))
      throw new InputError(
        where,
        `an init record of log format 1 or ${LOG_FORMAT}`,
        describeValue(init?.e === 'init' ? init.v : init?.e),
      )
    const chained = init.v === LOG_FORMAT
    // Format 2: the init line's checksum starts the chain.
    let chain: string | null = chained ? verifyChained(initLine, '', where).chain : null
    if (init.tenant !== options.tenant)
      throw new InputError(`${where}: tenant`, JSON.stringify(options.tenant), describeValue(init.tenant))
    const space = options.create?.space ?? options.resolveSpace?.(init.space)
    if (!space || space.id !== init.space)
      throw new InputError(`${where}: space`, 'a known parameter space', describeValue(init.space))
    let learner = new TenantLearner(init, space)
    if (dimensionsFingerprint(learner.bandit) !== init.dims)
      throw new InputError(
        `${where}: dims`,
        `the bins of space ${space.id} as the tenant was created with`,
        'a changed space (create a new tenant)',
      )

    // The snapshot says how many lines and bytes of the log it covers; only the rest is read.
    let covered = {lines: 1, bytes: Buffer.byteLength(initLine) + 1}
    let rebuilt: string | null = null
    const statePath = join(dir, STATE_FILE)
    if (existsSync(statePath)) {
      const loaded = readStateFile(statePath, initLine, logPath)
      if (typeof loaded === 'string') rebuilt = loaded
      else {
        // The covered part is hashed, not replayed: a byte changed in it breaks the chain at its line.
        const coveredChain = chained ? verifyCovered(logPath, covered, loaded, chain!) : null
        if (coveredChain === undefined)
          rebuilt = 'state file covers another number of log lines than its log position holds'
        else if (coveredChain !== loaded.chain)
          rebuilt = "state file does not match the log's checksum at the position it covers"
        else {
          try {
            learner.load(loaded.learner)
            covered = {lines: loaded.logLines, bytes: loaded.logBytes}
            chain = coveredChain
          } catch (error) {
            rebuilt = `state does not fit the tenant (${(error as Error).message})`
          }
        }
      }
      if (rebuilt !== null) learner = new TenantLearner(init, space)
    }

    const replay = replayLog(logPath, covered, chain, (event, at) => {
      if (event.e === 'q') {
        learner.bandit.checkArms(event.arms, at)
        const next = learner.queries + 1
        if (event.id !== next)
          throw new InputError(
            `${at}: id`,
            `query id ${next} (query events number the queries 1, 2, 3, ... in log order)`,
            `${event.id} (a duplicate or out-of-order query event)`,
          )
      }
      learner.apply(event)
    })
    const report: OpenReport = {replayed: replay.lines, rebuilt, tornBytes: replay.tornBytes, journaled}
    const store = new TenantStore(
      dir,
      learner,
      initLine,
      {lines: covered.lines + replay.lines, bytes: covered.bytes + replay.bytes},
      replay.chain,
      report,
      options.snapshotEvery ?? SNAPSHOT_EVERY_EVENTS,
    )
    store.groupCommit = options.journal ? undefined : options.groupCommit
    store.journal = options.journal
    if (report.replayed > 0 || report.rebuilt !== null) store.snapshotDue()
    return store
  }

  /** Logs (fsync'd) and applies one event. */
  private record(event: TenantEvent): Verdict {
    if (this.closed) throw new Error('tenant store is closed')
    if (this.failed) throw this.failed
    if (this.journal?.failed) throw (this.failed = this.journal.failed)
    let line = JSON.stringify(event)
    let chain: string | null = null
    if (this.chain !== null) ({line, chain} = chainedLine(this.chain, line))
    line += '\n'
    if (this.journal) {
      // throws (a DiskFullError) before anything is applied when the journal has no room for the line
      this.lastCommit = this.journal.append(this, this.learner.init.tenant, this.log.bytes, line)
      this.unwritten.push(line)
    } else {
      // a failed write throws before anything is applied (its torn bytes are cut off)
      this.appendToFile(Buffer.from(line, 'utf8'))
      this.syncEvent()
    }
    this.chain = chain
    this.log = {lines: this.log.lines + 1, bytes: this.log.bytes + Buffer.byteLength(line)}
    const verdict = this.learner.apply(event)
    if (
      ++this.sinceSnapshot >= this.snapshotEvery &&
      (!this.journal || this.log.bytes - this.snapshotAt.logBytes >= this.snapshotAt.size)
    ) {
      this.snapshotDue()
    }
    return verdict
  }

  /**
   * Writes `text` at the end of the log's complete lines. A write that fails part way (a full
   * disk) has its torn bytes cut off and throws: the file never ends in half a line that later
   * lines would be glued to.
   */
  private appendToFile(text: Buffer): void {
    if (this.tornTail) {
      ftruncateSync(this.fd, this.fileBytes)
      this.tornTail = false
    }
    let done = 0
    try {
      while (done < text.length) done += writeSync(this.fd, text, done, text.length - done, this.fileBytes + done)
    } catch (error) {
      if (done > 0) {
        this.tornTail = true
        try {
          ftruncateSync(this.fd, this.fileBytes)
          this.tornTail = false
        } catch {
          // cut before the next write (which starts at fileBytes all the same)
        }
      }
      throw error
    }
    this.fileBytes += text.length
  }

  /**
   * A snapshot is due. The event is durable (or will be) whatever becomes of it: a failed one (a
   * full disk) never fails the request, it only costs replay time at the next open.
   */
  private snapshotDue(): void {
    if (!this.journal) this.trySnapshot()
    else if (!this.snapshotRunning) void this.snapshotInTurns()
  }

  /** snapshot(), except that a failure (a full disk) is counted and the next one is tried SNAPSHOT_EVERY_EVENTS later. */
  trySnapshot(): boolean {
    try {
      this.snapshot()
      return true
    } catch {
      this.snapshotFailures++
      this.sinceSnapshot = 0
      return false
    }
  }

  /** The log position everything logged so far ends at, its lines written to the log file first (not synced). */
  private positionWritten(): LogPosition {
    // The snapshot covers what the log file holds: journaled lines go there first, and reach the
    // disk before state.json can (a snapshot ahead of its log is refused as damage on open).
    this.writeBack()
    return {logLines: this.log.lines, logBytes: this.log.bytes, chain: this.chain}
  }

  /** Writes the snapshot of everything logged so far (atomically, with its checksum). */
  snapshot(): void {
    const at = this.positionWritten()
    fdatasyncSync(this.fd)
    this.snapshotWritten(at, writeState(this.dir, stateNow(this.initLine, at, this.learner.save())))
  }

  private snapshotWritten(at: LogPosition, size: number): void {
    this.sinceSnapshot = 0
    this.snapshotAt = {logBytes: at.logBytes, size}
  }

  /**
   * A journaled store's snapshot, off the request path: the learner copied now (learner.save()),
   * its JSON made a slice per turn of the event loop, the log synced by the thread pool, then the
   * file written in one synchronous step, unless the store closed (close() wrote its own) or failed
   * meanwhile. The file protocol is snapshot()'s: a kill at any point leaves the old state file or
   * the new one, each covering a synced part of the log.
   */
  private async snapshotInTurns(): Promise<void> {
    this.snapshotRunning = true
    try {
      const at = this.positionWritten()
      const parts = await stateInTurns(this.initLine, at, this.learner.save())
      if (this.closed) return
      const fd = this.fd
      await new Promise<void>((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())))
      if (this.closed || this.failed || this.snapshotAt.logBytes >= at.logBytes) return
      this.snapshotWritten(at, writeState(this.dir, parts))
    } catch {
      if (this.closed) return
      this.snapshotFailures++
      this.sinceSnapshot = 0
    } finally {
      this.snapshotRunning = false
    }
  }

  /** Makes the log durable now (fsync), or under group commit joins the next batch (see durable()). */
  private syncEvent(): void {
    if (!this.groupCommit) {
      try {
        fsyncSync(this.fd)
      } catch (error) {
        // the line is in the file but may not reach the disk: the store takes nothing more (reopen it)
        this.failed = error as Error
        throw error
      }
      return
    }
    const commit = this.groupCommit.commit(this.fd)
    commit.catch((error: Error) => {
      this.failed ??= error
    })
    this.lastCommit = commit
  }

  /** Resolves once every event logged so far is on disk (at once without group commit: each was fsync'd as it was logged). */
  durable(): Promise<void> {
    return this.lastCommit ?? Promise.resolve()
  }

  /** Closes implicit windows that ended before `now` (logged as a tick so replay does the same); true if any closed. */
  tick(now: number): boolean {
    if (!this.learner.wouldExpire(now)) return false
    this.record({e: 'tick', t: now})
    return true
  }

  /**
   * Samples a configuration for a new query and records it; the query id is what feedback names
   * (or the caller's `qid`, when given: the caller checks it with callerQueryIdProblem and
   * hasCallerId first). `type` is the query's type (per-type tenants play that type's bandits).
   */
  choose(now: number, options: {type?: string; qid?: string} = {}): {queryId: number; arms: number[]; config: Config} {
    this.tick(now)
    const {id, arms} = this.learner.sampleNext(options.type)
    const event: QueryEvent = {e: 'q', id, t: now, arms}
    if (options.type !== undefined) event.ty = options.type
    if (options.qid !== undefined) event.qid = options.qid
    this.record(event)
    return {queryId: id, arms, config: this.learner.configOf(arms, options.type)}
  }

  /** Implicit feedback: a node retrieved by query `queryId` was used at `now`. */
  used(queryId: string, now: number): Verdict {
    return this.record({e: 'used', id: String(queryId), t: now})
  }

  /** Forgets the `n` oldest remembered queries (a logged forget event: see tenant.ts ForgetEvent). */
  forget(n: number, now: number): void {
    this.record({e: 'forget', t: now, n})
  }

  /** Explicit feedback: graded relevance `grade` (0..levels-1) for query `queryId`. */
  label(queryId: string, grade: number, now: number): Verdict {
    return this.record({e: 'label', id: String(queryId), t: now, grade})
  }

  /** Writes the journaled lines not yet in the log file to it (one write; no sync: the journal holds them durably). */
  writeBack(): void {
    if (this.unwritten.length === 0) return
    // a store closed with lines it could not write (abandoned on a full disk): its segment must stay
    if (this.closed) throw new Error(`tenant ${this.learner.init.tenant}: closed with journaled lines not in its log`)
    // the lines stay until written: a failed write (a full disk) is tried again at the next checkpoint
    this.appendToFile(Buffer.from(this.unwritten.join(''), 'utf8'))
    this.unwritten = []
  }

  /** Resolves once the log file is on disk (a journal checkpoint; at once when closed, since closing syncs it). */
  syncLog(): Promise<void> {
    if (this.closed) return Promise.resolve()
    const fd = this.fd
    return new Promise((resolve, reject) =>
      fdatasync(fd, (error) => {
        // closed meanwhile: close() synced the log itself (the fd may even belong to another file now)
        if (error && !this.closed) reject(error)
        else resolve()
      }),
    )
  }

  /**
   * Closes without a snapshot, after a failed log sync: memory may hold events the disk lost, so
   * the next open rebuilds from what the log really holds.
   */
  abandon(): void {
    if (this.closed) return
    try {
      // Journaled lines go to the log all the same (best effort): a tenant reopened in this process reads no live journal.
      this.writeBack()
      fsyncSync(this.fd)
    } catch {
      // the disk is failing: the journal keeps its segments and recovery after a restart reads them
      this.journal?.retain()
    }
    this.closed = true
    try {
      closeSync(this.fd)
    } finally {
      releaseDirLock(this.dir)
    }
  }

  close(): void {
    if (this.closed) return
    if (this.journal) {
      // The journal deletes its segments once every tenant has closed: the log must hold everything, on disk.
      try {
        this.writeBack()
        fsyncSync(this.fd)
      } catch (error) {
        // a full disk: the journal keeps the lines for recovery at the next start
        this.abandon()
        throw error
      }
    }
    // the log is on disk: a snapshot a full disk refuses only costs replay time at the next open
    this.trySnapshot()
    closeSync(this.fd)
    this.closed = true
    releaseDirLock(this.dir)
  }
}
