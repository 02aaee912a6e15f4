/**
 * Persistence of a tenant's learner: an append-only event log plus a checksummed state snapshot.
 *
 * <dir>/<tenant>/log.jsonl   line 1 the init record, then one event per line; every line is
 *                            written with one write() and fsync'd before the event is applied,
 *                            so an acknowledged query or feedback survives a crash. Each line ends
 *                            with a checksum chained to the previous line's (LOG_FORMAT). With a
 *                            GroupCommit (commit.ts; the server) the line is written, applied, and
 *                            acknowledged only when the batch's fdatasync has covered it
 *                            (durable()); later events of the tenant may see it before then, which
 *                            is safe because they follow it in the same file: a later event that
 *                            is durable implies every earlier line is.
 * <dir>/<tenant>/state.json  the learner after the first `logLines` lines (`logBytes` bytes: opening
 *                            replays only the log after them, and hashes the part before to check
 *                            its chain ends at the snapshot's `chain`), written atomically
 *                            (temp file, rename) every SNAPSHOT_EVERY_EVENTS events and on close,
 *                            followed by a line `sha256 <hex of everything before it>`. Under a
 *                            journal (the server) also not before the log has grown by the last
 *                            snapshot's size: a snapshot holds every query of the open windows
 *                            (the label window: an hour of traffic), so at a few hundred events it would cost more
 *                            than the log itself; this way snapshots cost at most as much to write
 *                            as the log, and replay after a crash reads at most about one snapshot's
 *                            worth of log beyond the snapshot.
 * <dir>/<tenant>/lock        "pid start-time token" of the process that has the tenant open: the
 *                            lock every kt store shares (src/util/lock.ts); an opener that finds it
 *                            held waits up to LOCK_WAIT_MS. Under it, temp files of state.json
 *                            that a kill left behind (.state.json.<pid>.tmp) are removed.
 *
 * Opening loads the snapshot and replays the log lines after it. A snapshot that is missing its
 * checksum line, fails the checksum, does not parse or does not fit the space is discarded and the
 * learner rebuilt from the whole log (the log is the truth; the snapshot only saves replay time).
 * A checksummed snapshot that covers more bytes than the log holds is damage (snapshot() syncs the
 * log first), refused in one line naming the log. A torn last log line (a crash mid-write: no
 * newline at the end) is cut off; it was never acknowledged. A log line that does not match its
 * chained checksum (a byte changed after it was written, before or after the snapshot's position)
 * stops the open with one line naming it: the log cannot be trusted and kt does not guess. The query counter is part of the
 * state, so scheduled decay resumes in phase after a restart.
 */
import {
  closeSync,
  existsSync,
  fdatasync,
  fdatasyncSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readFileSync,
  readSync,
  rmdirSync,
  rmSync,
  statSync,
  truncateSync,
  writeSync,
} from 'node:fs'
import {join} from 'node:path'
import {createHash} from 'node:crypto'
import type {Config, ParamSpace} from '../space/types.js'
import {InputError, describeValue} from '../util/errors.js'
import {ensureDir, fsyncDir, writeFileAtomic} from '../util/fs.js'
import {acquireDirLock, releaseDirLock, removeStaleTemps, LOCK_WAIT_MS as DEFAULT_LOCK_WAIT_MS} from '../util/lock.js'

/** Re-exported for callers that check lock owners (tests). */
export {processStartTime} from '../util/proc.js'
import type {BanditSettings} from './bandit.js'
import {TenantBandit} from './bandit.js'
import type {GroupCommit} from './commit.js'
import {
  type Journal,
  type JournalClient,
  type JournalRecord,
  deadRecordsFor,
  deadSegments,
  readSegment,
  hasJournal,
} from './journal.js'
import {
  type LearnerState,
  type QueryEvent,
  type TenantEvent,
  type PriorOrigin,
  type TenantInit,
  type Verdict,
  TenantLearner,
  dimensionsFingerprint,
} from './tenant.js'

/** Longest tenant id: ids become folder names, and 64 fits every file system's name limit with room. */
export const MAX_TENANT_ID_LENGTH = 64
/** Tenant ids: letters, digits, dot, dash, underscore, starting with a letter or digit (so no '/', '\\', '..' or hidden names). */
export const TENANT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/
/** Events between snapshots: bounds replay after a crash to this many lines. */
const SNAPSHOT_EVERY_EVENTS = 200
/** Format tag of the state file. */
/**
 * Format tag of the state file. 2: snapshots written before it may lack the outcomes of used queries
 * whose window was open at the snapshot (fixed in tenant.ts), so a /1 snapshot is discarded and the
 * learner rebuilt from the log.
 */
const STATE_FORMAT = 'kt-online-state/3'
/**
 * 3: the snapshot records `chain`, the log's chained checksum at the end of the part it covers (see
 * LOG_FORMAT), so a byte changed in that part is noticed on open; a /2 snapshot is discarded and the
 * learner rebuilt from the log (which verifies every line).
 */

/**
 * Log format (the init record's `v`). 2: every line ends with `"c":"<hex>"`, the first
 * CHAIN_HEX_CHARS of sha256(previous line's c + this line without its c), the init line's previous
 * c being empty. Each line's checksum thus covers every line before it: a byte flipped anywhere is
 * noticed at its line, also in the part a snapshot covers (opening hashes that part without
 * replaying it). Format 1 logs (no checksums) are still read, and appended to in format 1.
 */
export const LOG_FORMAT = 2
/** 64 bits of sha256 per line: a random corruption goes unnoticed with probability 2^-64, for 16 bytes a line. */
const CHAIN_HEX_CHARS = 16

/** How long opening waits for a tenant another process has open (the shared lock's default wait). */
const LOCK_WAIT_MS = DEFAULT_LOCK_WAIT_MS

const LOG_FILE = 'log.jsonl'
const STATE_FILE = 'state.json'
const CHECKSUM_PREFIX = 'sha256 '

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

/** Throws InputError unless `tenant` is a safe tenant id. */
export function validateTenantId(tenant: string): void {
  if (typeof tenant !== 'string' || tenant.length === 0)
    throw new InputError('tenant id', 'a non-empty id', describeValue(tenant))
  if (tenant.length > MAX_TENANT_ID_LENGTH)
    throw new InputError('tenant id', `at most ${MAX_TENANT_ID_LENGTH} characters`, `${tenant.length} characters`)
  if (!TENANT_ID_PATTERN.test(tenant))
    throw new InputError(
      'tenant id',
      'letters, digits, ".", "-" or "_", starting with a letter or digit (no path separators)',
      describeValue(tenant),
    )
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

const NEWLINE = 0x0a
/** Bytes read at a time while looking for the end of the init line. */
const READ_CHUNK = 65536

/** Bytes [from, to) of a file. */
function readRange(path: string, from: number, to: number): Buffer {
  const buffer = Buffer.alloc(Math.max(0, to - from))
  const fd = openSync(path, 'r')
  try {
    let done = 0
    while (done < buffer.length) {
      const n = readSync(fd, buffer, done, buffer.length - done, from + done)
      if (n === 0) break
      done += n
    }
    return buffer.subarray(0, done)
  } finally {
    closeSync(fd)
  }
}

/** The log's first line (the init record), without its newline. */
function readFirstLine(path: string): string {
  const size = statSync(path).size
  let text = Buffer.alloc(0)
  for (let from = 0; from < size; from += READ_CHUNK) {
    text = Buffer.concat([text, readRange(path, from, Math.min(size, from + READ_CHUNK))])
    const nl = text.indexOf(NEWLINE)
    if (nl >= 0) return text.subarray(0, nl).toString('utf8')
  }
  throw new InputError(path, 'an init record on line 1', size === 0 ? 'an empty log' : 'no complete first line')
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

/** The chained checksum of a line whose JSON without `c` is `body`, after a line whose checksum was `previous`. */
export function chainChecksum(previous: string, body: string): string {
  // one update of one string: each update is a crossing into native code
  return createHash('sha256').update(`${previous}\n${body}`).digest('hex').slice(0, CHAIN_HEX_CHARS)
}

/** A log line in format 2: `body` (a JSON object) with its chained checksum as the last field. */
function chainedLine(previous: string, body: string): {line: string; chain: string} {
  const chain = chainChecksum(previous, body)
  return {line: `${body.slice(0, -1)},"c":"${chain}"}`, chain}
}

const CHAIN_SUFFIX = new RegExp(`,"c":"([0-9a-f]{${CHAIN_HEX_CHARS}})"}$`)

/**
 * Checks one format-2 log line against the previous line's checksum and returns its own checksum
 * and its JSON without `c`; a mismatch is a one-line InputError naming the file and line.
 */
function verifyChained(line: string, previous: string, at: string): {chain: string; body: string} {
  const m = CHAIN_SUFFIX.exec(line)
  if (!m)
    throw new InputError(
      at,
      `a log line ending in its checksum ,"c":"<${CHAIN_HEX_CHARS} hex digits>"} (log format ${LOG_FORMAT})`,
      'none',
    )
  const body = `${line.slice(0, m.index)}}`
  if (chainChecksum(previous, body) !== m[1]) {
    throw new InputError(
      at,
      'a log line matching its chained checksum',
      'a mismatch: this line or one before it was changed after it was written (the log is the record of every event; restore it from a backup)',
    )
  }
  return {chain: m[1], body}
}

/** Removes a folder this open created, unless something else has appeared in it meanwhile. */
function removeIfEmpty(dir: string): void {
  try {
    rmdirSync(dir)
  } catch {
    // not empty (another opener's files) or already gone: leave it
  }
}

/** Checks the shape of a logged event; errors name the file and line. */
function parseEvent(value: unknown, where: string): TenantEvent {
  const v = value as Record<string, unknown>
  const num = (field: string): number => {
    if (typeof v[field] !== 'number' || !Number.isFinite(v[field]))
      throw new InputError(`${where}: ${field}`, 'a finite number', describeValue(v[field]))
    return v[field] as number
  }
  const str = (field: string): string => {
    if (typeof v[field] !== 'string') throw new InputError(`${where}: ${field}`, 'a string', describeValue(v[field]))
    return v[field] as string
  }
  if (typeof v !== 'object' || v === null) throw new InputError(where, 'an event object', describeValue(value))
  switch (v.e) {
    case 'q': {
      if (!Array.isArray(v.arms))
        throw new InputError(`${where}: arms`, 'an array of arm indices', describeValue(v.arms))
      const q: QueryEvent = {e: 'q', id: num('id'), t: num('t'), arms: v.arms as number[]}
      if (v.ty !== undefined) q.ty = str('ty')
      if (v.qid !== undefined) q.qid = str('qid')
      return q
    }
    case 'used':
      return {e: 'used', id: str('id'), t: num('t')}
    case 'label':
      return {e: 'label', id: str('id'), t: num('t'), grade: num('grade')}
    case 'tick':
      return {e: 'tick', t: num('t')}
    case 'forget': {
      const n = num('n')
      if (!Number.isInteger(n) || n < 1) throw new InputError(`${where}: n`, 'a positive integer', describeValue(n))
      return {e: 'forget', t: num('t'), n}
    }
    default:
      throw new InputError(`${where}: e`, 'q, used, label, tick or forget', describeValue(v.e))
  }
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
  /** A journaled store's snapshot is due and will run once the current request has been handled. */
  private snapshotScheduled = false
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
      const loaded = TenantStore.readState(statePath, initLine, logPath)
      if (typeof loaded === 'string') rebuilt = loaded
      else {
        // The covered part is hashed, not replayed: a byte changed in it breaks the chain at its line.
        const coveredChain = chained ? TenantStore.verifyCovered(logPath, covered, loaded, chain!) : null
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

    const size = statSync(logPath).size
    const tail = readRange(logPath, covered.bytes, size)
    const end = tail.lastIndexOf(NEWLINE) + 1
    const tornBytes = tail.length - end
    if (tornBytes > 0) truncateSync(logPath, covered.bytes + end)
    const lines =
      end === 0
        ? []
        : tail
            .subarray(0, end - 1)
            .toString('utf8')
            .split('\n')
    for (let i = 0; i < lines.length; i++) {
      const at = `${logPath}:${covered.lines + i + 1}`
      let text = lines[i]
      if (chain !== null) {
        const verified = verifyChained(text, chain, at)
        chain = verified.chain
        text = verified.body
      }
      let value: unknown
      try {
        value = JSON.parse(text)
      } catch (error) {
        throw new InputError(at, 'one JSON event per line', (error as Error).message.split('\n')[0])
      }
      const event = parseEvent(value, at)
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
    }
    const report: OpenReport = {replayed: lines.length, rebuilt, tornBytes, journaled}
    const store = new TenantStore(
      dir,
      learner,
      initLine,
      {lines: covered.lines + lines.length, bytes: covered.bytes + end},
      chain,
      report,
      options.snapshotEvery ?? SNAPSHOT_EVERY_EVENTS,
    )
    // the log holds everything: a snapshot a full disk refuses only costs replay time at the next open
    if (report.replayed > 0 || report.rebuilt !== null) store.trySnapshot()
    store.groupCommit = options.journal ? undefined : options.groupCommit
    store.journal = options.journal
    return store
  }

  /**
   * Verifies the chain over the log lines after `from` up to byte loaded.logBytes and returns the
   * checksum of the last (undefined if that is not line loaded.logLines); a line that does not
   * match is a one-line InputError naming it.
   */
  private static verifyCovered(
    logPath: string,
    from: {lines: number; bytes: number},
    loaded: {logLines: number; logBytes: number},
    initChain: string,
  ): string | undefined {
    const part = readRange(logPath, from.bytes, loaded.logBytes)
    let chain = initChain
    let start = 0
    let line = from.lines
    while (start < part.length) {
      const nl = part.indexOf(NEWLINE, start)
      chain = verifyChained(part.subarray(start, nl).toString('utf8'), chain, `${logPath}:${++line}`).chain
      start = nl + 1
    }
    return line === loaded.logLines ? chain : undefined
  }

  /** The parsed snapshot, or why it cannot be used. */
  private static readState(
    path: string,
    initLine: string,
    logPath: string,
  ): {logLines: number; logBytes: number; chain: string | null; learner: LearnerState} | string {
    if (!statSync(path).isFile())
      throw new InputError(
        path,
        'a state file (a regular file kt writes; remove what is there)',
        'a folder or other non-file',
      )
    let text: string
    try {
      text = readFileSync(path, 'utf8')
    } catch (error) {
      throw new InputError(
        path,
        'a readable state file',
        (error as NodeJS.ErrnoException).code ?? (error as Error).message.split('\n')[0],
      )
    }
    const cut = text.lastIndexOf(`\n${CHECKSUM_PREFIX}`)
    if (cut < 0 || !text.endsWith('\n')) return 'state file truncated (no checksum line)'
    const body = text.slice(0, cut + 1)
    const sum = text.slice(cut + 1 + CHECKSUM_PREFIX.length, -1)
    if (sha256(body) !== sum) return 'state file checksum mismatch'
    let parsed: {
      format?: string
      init?: string
      logLines?: number
      logBytes?: number
      chain?: string | null
      learner?: LearnerState
    }
    try {
      parsed = JSON.parse(body)
    } catch {
      return 'state file does not parse'
    }
    if (parsed.format !== STATE_FORMAT)
      return `state file format ${describeValue(parsed.format)} is not ${STATE_FORMAT}`
    if (parsed.init !== sha256(initLine)) return 'state file belongs to another log'
    const {logLines, logBytes} = parsed
    if (
      !Number.isInteger(logLines) ||
      logLines! < 1 ||
      !Number.isInteger(logBytes) ||
      logBytes! <= Buffer.byteLength(initLine)
    )
      return 'state file has no valid log position'
    // A checksummed snapshot ahead of its log is damage, not a crash: snapshot() fdatasyncs the log
    // before it writes state.json, and with a journal the lines it counts come back from the
    // journal before this check. Rebuilding from the shorter log would drop acknowledged events
    // and hand their query ids out again, so kt refuses (the operator restores the log).
    const size = statSync(logPath).size
    if (logBytes! > size)
      throw new InputError(
        logPath,
        `at least ${logBytes} bytes (${path} covers ${logLines} lines of it)`,
        `${size} bytes: ${logBytes! - size} bytes of acknowledged events are missing from the log (restore it from a backup)`,
      )
    // The covered part must end at a line boundary inside the log.
    if (readRange(logPath, logBytes! - 1, logBytes!)[0] !== NEWLINE)
      return 'state file does not end at a line of the log'
    if (!parsed.learner) return 'state file has no learner'
    if (parsed.chain !== null && typeof parsed.chain !== 'string') return 'state file has no log checksum'
    return {logLines: logLines!, logBytes: logBytes!, chain: parsed.chain, learner: parsed.learner}
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
      // the event is durable (or will be) whatever becomes of the snapshot: a failed one never fails the request
      if (this.journal) this.scheduleSnapshot()
      else this.trySnapshot()
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

  /** A journaled store's snapshot, run after the request that made it due (once per turn of the event loop). */
  private scheduleSnapshot(): void {
    if (this.snapshotScheduled) return
    this.snapshotScheduled = true
    setImmediate(() => {
      this.snapshotScheduled = false
      if (!this.closed && !this.failed) this.trySnapshot()
    })
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

  /** Writes the snapshot of everything logged so far (atomically, with its checksum). */
  snapshot(): void {
    // The snapshot covers what the log file holds: journaled lines go there first, and reach the
    // disk before state.json can (a snapshot ahead of its log is refused as damage on open).
    this.writeBack()
    fdatasyncSync(this.fd)
    const body = `${JSON.stringify({format: STATE_FORMAT, init: sha256(this.initLine), logLines: this.log.lines, logBytes: this.log.bytes, chain: this.chain, learner: this.learner.save()})}\n`
    // not flushed (durable: false): a snapshot a power loss tears or loses fails its checksum and is
    // rebuilt from the log, which was synced above; two fsyncs less on the request path
    writeFileAtomic(join(this.dir, STATE_FILE), `${body}${CHECKSUM_PREFIX}${sha256(body)}\n`, undefined, {
      durable: false,
    })
    this.sinceSnapshot = 0
    this.snapshotAt = {logBytes: this.log.bytes, size: body.length}
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

/**
 * Appends to a tenant's log the journaled lines (from dead journal segments) it lacks; returns how
 * many. A line the log already holds must be identical; a journaled line beyond the log's end
 * (a gap) or a different line at the same place is a one-line InputError: the log lost lines the
 * journal acknowledged, or they disagree, and kt does not guess. A torn last line is cut first.
 */
export function catchUpLog(logPath: string, records: JournalRecord[]): number {
  if (records.length === 0) return 0
  const size = statSync(logPath).size
  // Bytes of complete lines: a torn last line (a kill mid-write) is not part of the log.
  const base = completeLength(logPath, size)
  let end = base
  const append: string[] = []
  const appended = new Map<number, string>()
  const disagree = (r: JournalRecord): InputError =>
    new InputError(
      `${logPath}: byte ${r.offset}`,
      `the line journal ${r.at} holds there`,
      'a different line (the log and the journal disagree)',
    )
  for (const r of records) {
    const rEnd = r.offset + Buffer.byteLength(r.line)
    if (r.offset < base) {
      // the log holds this place already: the same line must be there
      if (rEnd > base || readRange(logPath, r.offset, rEnd).toString('utf8') !== r.line) throw disagree(r)
    } else if (r.offset < end) {
      // appended by this call already (two dead segments hold it)
      if (appended.get(r.offset) !== r.line) throw disagree(r)
    } else if (r.offset === end) {
      append.push(r.line)
      appended.set(r.offset, r.line)
      end = rEnd
    } else {
      throw new InputError(
        logPath,
        `a log of at least ${r.offset} bytes (journal ${r.at} holds the line after them)`,
        `${end} bytes: acknowledged events are missing from both the log and the journal`,
      )
    }
  }
  if (append.length === 0) return 0
  if (base < size) truncateSync(logPath, base)
  const fd = openSync(logPath, 'a')
  try {
    const text = Buffer.from(append.join(''), 'utf8')
    for (let w = 0; w < text.length;) w += writeSync(fd, text, w, text.length - w)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  return append.length
}

/** Bytes of a log up to and including its last newline (a torn last line excluded). */
function completeLength(logPath: string, size: number): number {
  for (let to = size; to > 0;) {
    const from = Math.max(0, to - READ_CHUNK)
    const part = readRange(logPath, from, to)
    const nl = part.lastIndexOf(NEWLINE)
    if (nl >= 0) return from + nl + 1
    to = from
  }
  return 0
}

export interface JournalRecovery {
  /** Dead segments read. */
  segments: number
  /** Lines appended to tenant logs. */
  appended: number
  tenants: number
  /** Tenants another live process had open (it caught them up when it opened them); their segments stay. */
  busy: string[]
  /** Segments deleted (every tenant in them caught up). */
  removed: number
  /** Segments whose last frame was torn (a batch never acknowledged). */
  torn: number
  /**
   * Acknowledged records of tenants whose log no longer exists (the folder was removed): not
   * applied, and gone with their segments, so the caller says so (one log line).
   */
  orphaned: Array<{tenant: string; records: number}>
}

/**
 * Applies every dead journal segment of `dir` to the tenants' logs, each under its tenant's lock,
 * then deletes the segments (kept if a tenant was busy). Run by the server before it opens its own
 * journal; TenantStore.open does the same for its one tenant, so a CLI after a server crash reads
 * the acknowledged events too.
 */
export function recoverJournals(dir: string): JournalRecovery {
  const segments = deadSegments(dir)
  const report: JournalRecovery = {
    segments: segments.length,
    appended: 0,
    tenants: 0,
    busy: [],
    removed: 0,
    torn: 0,
    orphaned: [],
  }
  if (segments.length === 0) return report
  const byTenant = new Map<string, JournalRecord[]>()
  for (const path of segments) {
    const contents = readSegment(path)
    if (contents.tornAt !== null) report.torn++
    for (const r of contents.records) {
      let list = byTenant.get(r.tenant)
      if (!list) byTenant.set(r.tenant, (list = []))
      list.push(r)
    }
  }
  for (const [tenant, records] of byTenant) {
    const tenantDir = join(dir, tenant)
    const logPath = join(tenantDir, LOG_FILE)
    if (!existsSync(logPath)) {
      // the tenant's folder was removed after these were acknowledged: nothing to apply them to
      report.orphaned.push({tenant, records: records.length})
      continue
    }
    try {
      acquireDirLock(tenantDir, {waitMs: 0, expected: 'a tenant nobody else has open', subject: `tenant ${tenant}`})
    } catch {
      report.busy.push(tenant)
      continue
    }
    try {
      report.appended += catchUpLog(
        logPath,
        records.sort((a, b) => a.offset - b.offset),
      )
      report.tenants++
    } finally {
      releaseDirLock(tenantDir)
    }
  }
  if (report.busy.length === 0) {
    for (const path of segments) rmSync(path, {force: true})
    report.removed = segments.length
  }
  return report
}
