/**
 * Persistence of a tenant's learner: an append-only event log plus a checksummed state snapshot.
 *
 * <dir>/<tenant>/log.jsonl   line 1 the init record, then one event per line; every line is
 *                            written with one write() and fsync'd before the event is applied,
 *                            so an acknowledged query or feedback survives a crash. With a
 *                            GroupCommit (commit.ts; the server) the line is written, applied, and
 *                            acknowledged only when the batch's fdatasync has covered it
 *                            (durable()); later events of the tenant may see it before then, which
 *                            is safe because they follow it in the same file: a later event that
 *                            is durable implies every earlier line is.
 * <dir>/<tenant>/state.json  the learner after the first `logLines` lines (`logBytes` bytes: opening
 *                            reads only the log after them), written atomically
 *                            (temp file, rename) every SNAPSHOT_EVERY_EVENTS events and on close,
 *                            followed by a line `sha256 <hex of everything before it>`.
 * <dir>/<tenant>/lock        "pid start-time token" of the process that has the tenant open. It is
 *                            created with its content in one step (written to a temp file that is
 *                            then hard-linked to `lock`), so nobody ever sees it empty; an opener
 *                            that finds it held waits up to LOCK_WAIT_MS.
 *
 * Opening loads the snapshot and replays the log lines after it. A snapshot that is missing its
 * checksum line, fails the checksum, does not parse, does not fit the space or claims more lines
 * than the log has is discarded and the learner rebuilt from the whole log (the log is the
 * truth; the snapshot only saves replay time). A torn last log line (a crash mid-write: no
 * newline at the end) is cut off; it was never acknowledged. The query counter is part of the
 * state, so scheduled decay resumes in phase after a restart.
 */
import {closeSync, existsSync, fsyncSync, linkSync, openSync, readdirSync, readFileSync, readSync, rmdirSync, rmSync, statSync, truncateSync, unlinkSync, writeSync} from 'node:fs'
import {join} from 'node:path'
import {createHash, randomBytes} from 'node:crypto'
import type {Config, ParamSpace} from '../space/types.js'
import {InputError, describeValue} from '../util/errors.js'
import {ensureDir, writeFileAtomic} from '../util/fs.js'
import type {BanditSettings} from './bandit.js'
import {TenantBandit} from './bandit.js'
import type {GroupCommit} from './commit.js'
import {type LearnerState, type QueryEvent, type TenantEvent, type TenantInit, type Verdict, TenantLearner, dimensionsFingerprint} from './tenant.js'

/** Longest tenant id: ids become folder names, and 64 fits every file system's name limit with room. */
export const MAX_TENANT_ID_LENGTH = 64
/** Tenant ids: letters, digits, dot, dash, underscore, starting with a letter or digit (so no '/', '\\', '..' or hidden names). */
export const TENANT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/
/** Events between snapshots: bounds replay after a crash to this many lines. */
export const SNAPSHOT_EVERY_EVENTS = 200
/** Format tag of the state file. */
/**
 * Format tag of the state file. 2: snapshots written before it may lack the outcomes of used queries
 * whose window was open at the snapshot (fixed in tenant.ts), so a /1 snapshot is discarded and the
 * learner rebuilt from the log.
 */
export const STATE_FORMAT = 'kt-online-state/2'

/**
 * How long opening waits for a tenant another process has open. A command holds the lock for one
 * open-apply-close (milliseconds; the CLI's start-up is outside it), so bursts of concurrent
 * commands queue well inside this; a longer hold is a stuck or long-running process, and the
 * error names its pid.
 */
export const LOCK_WAIT_MS = 5000
/** Pause between attempts to take a held lock: short against a hold, long enough not to spin. */
export const LOCK_POLL_MS = 5

const LOG_FILE = 'log.jsonl'
const STATE_FILE = 'state.json'
const LOCK_FILE = 'lock'
/** Taken (like the lock) while removing a dead owner's lock, so two openers never both remove and re-take it. */
const TAKEOVER_FILE = 'lock.takeover'
const CHECKSUM_PREFIX = 'sha256 '

/** Throws InputError unless `tenant` is a safe tenant id. */
export function validateTenantId(tenant: string): void {
  if (typeof tenant !== 'string' || tenant.length === 0) throw new InputError('tenant id', 'a non-empty id', describeValue(tenant))
  if (tenant.length > MAX_TENANT_ID_LENGTH) throw new InputError('tenant id', `at most ${MAX_TENANT_ID_LENGTH} characters`, `${tenant.length} characters`)
  if (!TENANT_ID_PATTERN.test(tenant))
    throw new InputError('tenant id', 'letters, digits, ".", "-" or "_", starting with a letter or digit (no path separators)', describeValue(tenant))
}

export interface CreateOptions {
  space: ParamSpace
  profile: Config
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
}

/** What opening found. */
export interface OpenReport {
  /** Log lines replayed after the snapshot. */
  replayed: number
  /** Why the snapshot was discarded and the state rebuilt from the log, or null. */
  rebuilt: string | null
  /** Bytes of a torn last log line that were cut off. */
  tornBytes: number
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

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Blocks the thread for `ms`: the store's API is synchronous, so waiting for the lock is too. */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

/** Temp files holding this process's lock line, unique per open (a process may open several tenants). */
let lockTempSeq = 0

/**
 * When a process started (clock ticks since boot, field 22 of /proc/<pid>/stat), or undefined where
 * /proc is missing. A lock records its owner's start time, so a pid reused by another process (small
 * container pids come back often) is not mistaken for the owner.
 */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command name (which may hold spaces and parentheses) start at field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return fields[PROC_STAT_STARTTIME_FIELD - 3]
  } catch {
    return undefined
  }
}
/** proc(5): field 22 of /proc/<pid>/stat is the process start time. */
const PROC_STAT_STARTTIME_FIELD = 22

/** This process's start time, read once. */
const OWN_START = processStartTime(process.pid)

/** Writes our lock line (pid, start time, a token unique to this open) to a fresh temp file in `dir`, fsync'd. */
function writeLockTemp(dir: string, token: string): string {
  const path = join(dir, `.lock.${process.pid}.${++lockTempSeq}.tmp`)
  try {
    const fd = openSync(path, 'w')
    try {
      writeSync(fd, `${process.pid} ${OWN_START ?? '-'} ${token}\n`)
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
  } catch (error) {
    rmSync(path, {force: true})
    throw new InputError(path, 'a writable tenant folder', (error as Error).message.split('\n')[0])
  }
  return path
}

/** Removes lock temp files of processes that died before removing them (kill -9, Ctrl-C while waiting). */
function removeDeadTemps(dir: string): void {
  for (const name of readdirSync(dir)) {
    const m = /^\.lock\.(\d+)\.\d+\.tmp$/.exec(name)
    if (m && Number(m[1]) !== process.pid && !isProcessAlive(Number(m[1]))) rmSync(join(dir, name), {force: true})
  }
}

/** Creates `path` as a hard link to the filled temp file: atomic create-with-content; false if it exists. */
function tryLink(temp: string, path: string): boolean {
  try {
    linkSync(temp, path)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw new InputError(path, 'a lock file that can be created (a folder that supports hard links)', (error as Error).message.split('\n')[0])
  }
}

/** No lock file (released while we looked). */
const LOCK_GONE = 'gone'
/** A lock file without a pid: an unknown owner (e.g. an older kt that crashed between creating and writing it). */
const LOCK_UNKNOWN = 'unknown'

/** A lock's owner: its line as written, the pid, and (locks since kt-online locks v2) start time and token. */
interface LockOwner {
  line: string
  pid: number
  start?: string
  token?: string
}

/** Who holds a lock file: its owner, LOCK_UNKNOWN or LOCK_GONE. Accepts the older "pid" lines. */
function lockOwner(path: string): LockOwner | typeof LOCK_UNKNOWN | typeof LOCK_GONE {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return LOCK_GONE
    throw new InputError(path, 'a readable lock file', (error as Error).message.split('\n')[0])
  }
  const m = /^([1-9][0-9]*)(?: (\S+) ([0-9a-f]+))?\n?$/.exec(text)
  if (!m) return LOCK_UNKNOWN
  return {line: text, pid: Number(m[1]), start: m[2] === undefined || m[2] === '-' ? undefined : m[2], token: m[3]}
}

/** Tokens of the locks this process holds (whatever path they were opened by). */
const heldTokens = new Set<string>()

/**
 * Whether a lock's owner still runs: its pid is alive and, where both start times are known, is the
 * same process (not a later one that got the pid). A lock naming our own pid that this process
 * does not hold, without a start time to tell, was left by a dead earlier process with our pid.
 */
function ownerAlive(owner: LockOwner): boolean {
  if (owner.pid === process.pid) return owner.token !== undefined && heldTokens.has(owner.token)
  if (!isProcessAlive(owner.pid)) return false
  if (owner.start === undefined) return true
  const now = processStartTime(owner.pid)
  return now === undefined || now === owner.start
}

/**
 * Removes a lock whose owner is dead, holding the takeover lock: it re-reads the lock there, so a
 * lock someone re-took in between is left alone. False if another opener is taking over.
 */
function removeDeadLock(temp: string, lockPath: string, takeoverPath: string, dead: LockOwner): boolean {
  if (!tryLink(temp, takeoverPath)) return false
  try {
    const now = lockOwner(lockPath)
    if (typeof now !== 'object' || now.line !== dead.line || ownerAlive(now)) return false
    unlinkSync(lockPath)
    return true
  } finally {
    unlinkSync(takeoverPath)
  }
}

/** The one-line error for a lock that stayed held for the whole wait. */
function heldError(lockPath: string, takeoverPath: string, tenant: string, owner: LockOwner | typeof LOCK_UNKNOWN, waitMs: number): InputError {
  const expected = `a tenant nobody else has open (waited ${waitMs} ms)`
  if (owner === LOCK_UNKNOWN) return new InputError(lockPath, expected, `held by an unknown owner (a lock file without a pid; if no process uses tenant ${tenant}, remove ${lockPath})`)
  if (!ownerAlive(owner)) return new InputError(takeoverPath, expected, `a takeover of dead pid ${owner.pid}'s lock that never finished (if no process uses tenant ${tenant}, remove ${takeoverPath})`)
  const unsure = owner.start === undefined ? ` (a lock without a start time: if pid ${owner.pid} is not a kt process, remove ${lockPath})` : ''
  return new InputError(lockPath, expected, `held by pid ${owner.pid}${unsure}`)
}

/**
 * Takes the tenant's lock, waiting up to `waitMs` while another live process holds it, and taking
 * over a lock left by a dead process (or by a dead earlier process whose pid was reused). A lock
 * file without a pid counts as held, never as dead. The lock line names the pid, its start time
 * and a token for this open, so a second open of the same tenant by this process is recognised
 * whatever path it is opened by.
 */
function acquireLock(dir: string, tenant: string, waitMs: number): void {
  const lockPath = join(dir, LOCK_FILE)
  const takeoverPath = join(dir, TAKEOVER_FILE)
  removeDeadTemps(dir)
  const token = randomBytes(LOCK_TOKEN_BYTES).toString('hex')
  const temp = writeLockTemp(dir, token)
  try {
    const deadline = Date.now() + waitMs
    for (;;) {
      if (tryLink(temp, lockPath)) {
        heldTokens.add(token)
        return
      }
      const owner = lockOwner(lockPath)
      if (owner === LOCK_GONE) continue // released between our link and our read: try again at once
      if (owner !== LOCK_UNKNOWN && owner.token !== undefined && heldTokens.has(owner.token)) throw new InputError(lockPath, 'a tenant nobody else has open', 'already open in this process')
      if (owner !== LOCK_UNKNOWN && !ownerAlive(owner) && removeDeadLock(temp, lockPath, takeoverPath, owner)) continue
      if (Date.now() >= deadline) throw heldError(lockPath, takeoverPath, tenant, owner, waitMs)
      sleepSync(LOCK_POLL_MS)
    }
  } finally {
    rmSync(temp, {force: true})
  }
}
/** Random bytes of a lock's token (collisions between opens are then out of the question). */
const LOCK_TOKEN_BYTES = 8

/** Removes the tenant's lock if this process holds it. */
function releaseLock(dir: string): void {
  const lockPath = join(dir, LOCK_FILE)
  const owner = lockOwner(lockPath)
  if (typeof owner !== 'object' || owner.token === undefined || !heldTokens.delete(owner.token)) return
  rmSync(lockPath, {force: true})
}

/** Removes a folder this open created, unless something else has appeared in it meanwhile. */
function removeIfEmpty(dir: string): void {
  try {
    rmdirSync(dir)
  } catch {
    // not empty (another opener's files) or already gone: leave it
  }
}

function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/** Checks the shape of a logged event; errors name the file and line. */
function parseEvent(value: unknown, where: string): TenantEvent {
  const v = value as Record<string, unknown>
  const num = (field: string): number => {
    if (typeof v[field] !== 'number' || !Number.isFinite(v[field])) throw new InputError(`${where}: ${field}`, 'a finite number', describeValue(v[field]))
    return v[field] as number
  }
  const str = (field: string): string => {
    if (typeof v[field] !== 'string') throw new InputError(`${where}: ${field}`, 'a string', describeValue(v[field]))
    return v[field] as string
  }
  if (typeof v !== 'object' || v === null) throw new InputError(where, 'an event object', describeValue(value))
  switch (v.e) {
    case 'q': {
      if (!Array.isArray(v.arms)) throw new InputError(`${where}: arms`, 'an array of arm indices', describeValue(v.arms))
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
    default:
      throw new InputError(`${where}: e`, 'q, used, label or tick', describeValue(v.e))
  }
}

export class TenantStore {
  private fd: number
  private sinceSnapshot = 0
  private closed = false
  /** Durability of the last logged event under group commit. */
  private lastCommit: Promise<void> | undefined
  /** Set when a log sync failed: what was applied in memory may not be on disk, so the store takes nothing more. */
  failed: Error | undefined
  private groupCommit: GroupCommit | undefined

  private constructor(
    readonly dir: string,
    readonly learner: TenantLearner,
    private readonly initLine: string,
    /** Lines and bytes in the log (the init line included). */
    private log: {lines: number; bytes: number},
    readonly openReport: OpenReport,
    private readonly snapshotEvery: number,
  ) {
    this.fd = openSync(join(dir, LOG_FILE), 'a')
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
      if (existsSync(logPath)) throw new InputError(logPath, `no existing tenant ${options.tenant}`, 'a tenant with that id')
      // Checks settings, profile and tuned parameters before anything is created: a failed init leaves no folder behind.
      bandit = new TenantBandit(c.space, c.profile, c.settings)
      madeDir = !existsSync(dir)
      ensureDir(dir)
    } else if (!existsSync(logPath)) throw new InputError(logPath, `an existing tenant ${options.tenant} (create it with kt online init)`, 'no such tenant')
    try {
      acquireLock(dir, options.tenant, options.lockWaitMs ?? LOCK_WAIT_MS)
      let madeLog = false
      try {
        if (c) {
          // Another init may have created the tenant while this one waited for the lock.
          if (existsSync(logPath)) throw new InputError(logPath, `no existing tenant ${options.tenant}`, 'a tenant with that id')
          TenantStore.writeInit(dir, options.tenant, c, bandit!)
          madeLog = true
        }
        return TenantStore.load(dir, options)
      } catch (error) {
        if (madeLog) rmSync(logPath, {force: true})
        releaseLock(dir)
        throw error
      }
    } catch (error) {
      if (madeDir) removeIfEmpty(dir)
      throw error
    }
  }

  /** Writes the init record as a new log; a log it fails to complete is removed again. */
  private static writeInit(dir: string, tenant: string, c: CreateOptions, bandit: TenantBandit): void {
    const init: TenantInit = {e: 'init', v: 1, tenant, space: c.space.id, dims: dimensionsFingerprint(bandit), profile: c.profile, settings: c.settings, seed: c.seed}
    const logPath = join(dir, LOG_FILE)
    const fd = openSync(logPath, 'wx')
    try {
      writeSync(fd, `${JSON.stringify(init)}\n`)
      fsyncSync(fd)
    } catch (error) {
      rmSync(logPath, {force: true})
      throw error
    } finally {
      closeSync(fd)
    }
    fsyncDir(dir)
  }

  private static load(dir: string, options: OpenOptions): TenantStore {
    const logPath = join(dir, LOG_FILE)
    const initLine = readFirstLine(logPath)
    let init: TenantInit
    try {
      init = JSON.parse(initLine) as TenantInit
    } catch (error) {
      throw new InputError(`${logPath}:1`, 'one JSON event per line', (error as Error).message.split('\n')[0])
    }
    const where = `${logPath}:1`
    if (init?.e !== 'init' || init.v !== 1) throw new InputError(where, 'an init record of format 1', describeValue(init?.e))
    if (init.tenant !== options.tenant) throw new InputError(`${where}: tenant`, JSON.stringify(options.tenant), describeValue(init.tenant))
    const space = options.create?.space ?? options.resolveSpace?.(init.space)
    if (!space || space.id !== init.space) throw new InputError(`${where}: space`, 'a known parameter space', describeValue(init.space))
    let learner = new TenantLearner(init, space)
    if (dimensionsFingerprint(learner.bandit) !== init.dims)
      throw new InputError(`${where}: dims`, `the bins of space ${space.id} as the tenant was created with`, 'a changed space (create a new tenant)')

    // The snapshot says how many lines and bytes of the log it covers; only the rest is read.
    let covered = {lines: 1, bytes: Buffer.byteLength(initLine) + 1}
    let rebuilt: string | null = null
    const statePath = join(dir, STATE_FILE)
    if (existsSync(statePath)) {
      const loaded = TenantStore.readState(statePath, initLine, logPath)
      if (typeof loaded === 'string') rebuilt = loaded
      else {
        try {
          learner.load(loaded.learner)
          covered = {lines: loaded.logLines, bytes: loaded.logBytes}
        } catch (error) {
          rebuilt = `state does not fit the tenant (${(error as Error).message})`
        }
      }
      if (rebuilt !== null) learner = new TenantLearner(init, space)
    }

    const size = statSync(logPath).size
    const tail = readRange(logPath, covered.bytes, size)
    const end = tail.lastIndexOf(NEWLINE) + 1
    const tornBytes = tail.length - end
    if (tornBytes > 0) truncateSync(logPath, covered.bytes + end)
    const lines = end === 0 ? [] : tail.subarray(0, end - 1).toString('utf8').split('\n')
    for (let i = 0; i < lines.length; i++) {
      const at = `${logPath}:${covered.lines + i + 1}`
      let value: unknown
      try {
        value = JSON.parse(lines[i])
      } catch (error) {
        throw new InputError(at, 'one JSON event per line', (error as Error).message.split('\n')[0])
      }
      const event = parseEvent(value, at)
      if (event.e === 'q') {
        learner.bandit.checkArms(event.arms, at)
        const next = learner.queries + 1
        if (event.id !== next) throw new InputError(`${at}: id`, `query id ${next} (query events number the queries 1, 2, 3, ... in log order)`, `${event.id} (a duplicate or out-of-order query event)`)
      }
      learner.apply(event)
    }
    const report: OpenReport = {replayed: lines.length, rebuilt, tornBytes}
    const store = new TenantStore(dir, learner, initLine, {lines: covered.lines + lines.length, bytes: covered.bytes + end}, report, options.snapshotEvery ?? SNAPSHOT_EVERY_EVENTS)
    if (report.replayed > 0 || report.rebuilt !== null) store.snapshot()
    store.groupCommit = options.groupCommit
    return store
  }

  /** The parsed snapshot, or why it cannot be used. */
  private static readState(path: string, initLine: string, logPath: string): {logLines: number; logBytes: number; learner: LearnerState} | string {
    const text = readFileSync(path, 'utf8')
    const cut = text.lastIndexOf(`\n${CHECKSUM_PREFIX}`)
    if (cut < 0 || !text.endsWith('\n')) return 'state file truncated (no checksum line)'
    const body = text.slice(0, cut + 1)
    const sum = text.slice(cut + 1 + CHECKSUM_PREFIX.length, -1)
    if (sha256(body) !== sum) return 'state file checksum mismatch'
    let parsed: {format?: string; init?: string; logLines?: number; logBytes?: number; learner?: LearnerState}
    try {
      parsed = JSON.parse(body)
    } catch {
      return 'state file does not parse'
    }
    if (parsed.format !== STATE_FORMAT) return `state file format ${describeValue(parsed.format)} is not ${STATE_FORMAT}`
    if (parsed.init !== sha256(initLine)) return 'state file belongs to another log'
    const {logLines, logBytes} = parsed
    if (!Number.isInteger(logLines) || logLines! < 1 || !Number.isInteger(logBytes) || logBytes! <= Buffer.byteLength(initLine)) return 'state file has no valid log position'
    // The covered part must end at a line boundary inside the log.
    if (logBytes! > statSync(logPath).size || readRange(logPath, logBytes! - 1, logBytes!)[0] !== NEWLINE) return 'state file is ahead of the log'
    if (!parsed.learner) return 'state file has no learner'
    return {logLines: logLines!, logBytes: logBytes!, learner: parsed.learner}
  }

  /** Logs (fsync'd) and applies one event. */
  private record(event: TenantEvent): Verdict {
    if (this.closed) throw new Error('tenant store is closed')
    if (this.failed) throw this.failed
    const line = `${JSON.stringify(event)}\n`
    writeSync(this.fd, line)
    this.syncLog()
    this.log = {lines: this.log.lines + 1, bytes: this.log.bytes + Buffer.byteLength(line)}
    const verdict = this.learner.apply(event)
    if (++this.sinceSnapshot >= this.snapshotEvery) this.snapshot()
    return verdict
  }

  /** Makes the log durable now (fsync), or under group commit joins the next batch (see durable()). */
  private syncLog(): void {
    if (!this.groupCommit) {
      fsyncSync(this.fd)
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
    return {queryId: id, arms, config: this.learner.configOf(arms)}
  }

  /** Implicit feedback: a node retrieved by query `queryId` was used at `now`. */
  used(queryId: string, now: number): Verdict {
    return this.record({e: 'used', id: String(queryId), t: now})
  }

  /** Explicit feedback: graded relevance `grade` (0..levels-1) for query `queryId`. */
  label(queryId: string, grade: number, now: number): Verdict {
    return this.record({e: 'label', id: String(queryId), t: now, grade})
  }

  /** Writes the snapshot of everything logged so far (atomically, with its checksum). */
  snapshot(): void {
    const body = `${JSON.stringify({format: STATE_FORMAT, init: sha256(this.initLine), logLines: this.log.lines, logBytes: this.log.bytes, learner: this.learner.save()})}\n`
    writeFileAtomic(join(this.dir, STATE_FILE), `${body}${CHECKSUM_PREFIX}${sha256(body)}\n`)
    this.sinceSnapshot = 0
  }

  /**
   * Closes without a snapshot, after a failed log sync: memory may hold events the disk lost, so
   * the next open rebuilds from what the log really holds.
   */
  abandon(): void {
    if (this.closed) return
    this.closed = true
    try {
      closeSync(this.fd)
    } finally {
      releaseLock(this.dir)
    }
  }

  close(): void {
    if (this.closed) return
    this.snapshot()
    closeSync(this.fd)
    this.closed = true
    releaseLock(this.dir)
  }
}
