/**
 * The one cross-process lock of kt: a lock file inside the folder it guards (an online tenant, a
 * reranker registry, a deploy target's profile history). Everything that changes what users deploy
 * takes it around its whole read-modify-write, so two commands run at once queue instead of losing
 * an update.
 *
 * <dir>/<file>   "pid start-time token" of the holder. It is created with its content in one step
 *                (written to a temp file that is then hard-linked to the lock name), so nobody ever
 *                sees it empty; an acquirer that finds it held waits up to `waitMs`.
 *
 * A lock left by a dead process (kill -9) is taken over, also when its pid was reused by another
 * process (the start time, from /proc, tells them apart). A lock file without a pid counts as held
 * by an unknown owner, never as dead. Removing a dead owner's lock happens under a second lock
 * (`<file>.takeover`), so two acquirers never both remove and re-take it.
 */
import {closeSync, fsyncSync, linkSync, openSync, readdirSync, readFileSync, rmSync, unlinkSync, writeSync} from 'node:fs'
import {basename, join} from 'node:path'
import {randomBytes} from 'node:crypto'
import {InputError} from './errors.js'

/**
 * Default wait for a lock another process holds. A command holds a lock for one read-modify-write
 * (milliseconds; the CLI's start-up is outside it), so bursts of concurrent commands queue well
 * inside this; a longer hold is a stuck or long-running process, and the error names its pid.
 */
export const LOCK_WAIT_MS = 5000
/** Pause between attempts to take a held lock: short against a hold, long enough not to spin. */
export const LOCK_POLL_MS = 5
/** Default lock file name. */
export const LOCK_FILE = 'lock'
/** Random bytes of a lock's token (collisions between acquisitions are then out of the question). */
const LOCK_TOKEN_BYTES = 8
/** proc(5): field 22 of /proc/<pid>/stat is the process start time. */
const PROC_STAT_STARTTIME_FIELD = 22

export interface LockOptions {
  /** Lock file name inside the folder (default LOCK_FILE). */
  file?: string
  /** How long to wait for a holder (default LOCK_WAIT_MS). */
  waitMs?: number
  /** What is locked, with its article, for messages: "a tenant", "a registry". */
  subject: string
  /** Which one, for the hint in messages: "tenant acme", "registry ./models". */
  name: string
}

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Blocks the thread for `ms`: the callers' APIs are synchronous, so waiting for the lock is too. */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

/**
 * When a process started (clock ticks since boot, field 22 of /proc/<pid>/stat), or undefined where
 * /proc is missing. A lock records its holder's start time, so a pid reused by another process (small
 * container pids come back often) is not mistaken for the holder.
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

/** This process's start time, read once. */
const OWN_START = processStartTime(process.pid)

/** Temp files holding this process's lock line, unique per acquisition (a process may hold several locks). */
let lockTempSeq = 0

function firstLine(error: unknown): string {
  return (error as Error).message.split('\n')[0]
}

/** Writes our lock line (pid, start time, a token unique to this acquisition) to a fresh temp file in `dir`, fsync'd. */
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
    throw new InputError(path, 'a writable folder', firstLine(error))
  }
  return path
}

/** Removes lock temp files of processes that died before removing them (kill -9, Ctrl-C while waiting). */
function removeDeadLockTemps(dir: string): void {
  for (const name of readdirSync(dir)) {
    const m = /^\.lock\.(\d+)\.\d+\.tmp$/.exec(name)
    if (m && Number(m[1]) !== process.pid && !isProcessAlive(Number(m[1]))) rmSync(join(dir, name), {force: true})
  }
}

/**
 * Removes the temp files that writeFileAtomic (src/util/fs.ts) leaves when killed between writing
 * and renaming (`.<name>.<pid>.tmp`, possibly 0 bytes), for the file `target` or every file whose
 * name matches it. Call it only while holding the lock that guards those files: then nobody else
 * is writing them, so every such temp file is stale (one of this process's own cannot be in flight
 * either, the writes being synchronous). Returns the names removed.
 */
export function removeStaleTemps(dir: string, target: string | RegExp): string[] {
  const removed: string[] = []
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return removed
  }
  for (const name of names) {
    const m = /^\.(.+)\.\d+\.tmp$/.exec(name)
    if (!m) continue
    const matches = typeof target === 'string' ? m[1] === basename(target) : target.test(m[1])
    if (matches) {
      rmSync(join(dir, name), {force: true})
      removed.push(name)
    }
  }
  return removed
}

/** Creates `path` as a hard link to the filled temp file: atomic create-with-content; false if it exists. */
function tryLink(temp: string, path: string): boolean {
  try {
    linkSync(temp, path)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw new InputError(path, 'a lock file that can be created (a folder that supports hard links)', firstLine(error))
  }
}

/** No lock file (released while we looked). */
const LOCK_GONE = 'gone'
/** A lock file without a pid: an unknown holder (e.g. an older kt that crashed between creating and writing it). */
const LOCK_UNKNOWN = 'unknown'

/** A lock's holder: its line as written, the pid, and (locks since kt-online locks v2) start time and token. */
interface LockOwner {
  line: string
  pid: number
  start?: string
  token?: string
}

/** Who holds a lock file: its holder, LOCK_UNKNOWN or LOCK_GONE. Accepts the older "pid" lines. */
function lockOwner(path: string): LockOwner | typeof LOCK_UNKNOWN | typeof LOCK_GONE {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return LOCK_GONE
    throw new InputError(path, 'a readable lock file', firstLine(error))
  }
  const m = /^([1-9][0-9]*)(?: (\S+) ([0-9a-f]+))?\n?$/.exec(text)
  if (!m) return LOCK_UNKNOWN
  return {line: text, pid: Number(m[1]), start: m[2] === undefined || m[2] === '-' ? undefined : m[2], token: m[3]}
}

/** Tokens of the locks this process holds (whatever path they were taken by). */
const heldTokens = new Set<string>()

/**
 * Whether a lock's holder still runs: its pid is alive and, where both start times are known, is the
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
 * Removes a lock whose holder is dead, holding the takeover lock: it re-reads the lock there, so a
 * lock someone re-took in between is left alone. False if another acquirer is taking over.
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
function heldError(lockPath: string, takeoverPath: string, o: LockOptions, owner: LockOwner | typeof LOCK_UNKNOWN, waitMs: number): InputError {
  const expected = `${o.subject} nobody else has open (waited ${waitMs} ms)`
  if (owner === LOCK_UNKNOWN) return new InputError(lockPath, expected, `held by an unknown owner (a lock file without a pid; if no process uses ${o.name}, remove ${lockPath})`)
  if (!ownerAlive(owner)) return new InputError(takeoverPath, expected, `a takeover of dead pid ${owner.pid}'s lock that never finished (if no process uses ${o.name}, remove ${takeoverPath})`)
  const unsure = owner.start === undefined ? ` (a lock without a start time: if pid ${owner.pid} is not a kt process, remove ${lockPath})` : ''
  return new InputError(lockPath, expected, `held by pid ${owner.pid}${unsure}`)
}

/** A held lock; release() is idempotent and only removes the lock file if it is still ours. */
export class DirLock {
  private released = false

  private constructor(
    readonly dir: string,
    readonly path: string,
    private readonly token: string,
  ) {}

  /**
   * Takes the lock of folder `dir` (which must exist), waiting up to `waitMs` while another live
   * process holds it and taking over a lock left by a dead process. A second acquisition of a lock
   * this process already holds (by whatever path spelling) is refused at once: waiting would deadlock.
   */
  static acquire(dir: string, options: LockOptions): DirLock {
    const file = options.file ?? LOCK_FILE
    const waitMs = options.waitMs ?? LOCK_WAIT_MS
    const lockPath = join(dir, file)
    const takeoverPath = join(dir, `${file}.takeover`)
    try {
      removeDeadLockTemps(dir)
    } catch (error) {
      throw new InputError(dir, 'a readable folder', firstLine(error))
    }
    const token = randomBytes(LOCK_TOKEN_BYTES).toString('hex')
    const temp = writeLockTemp(dir, token)
    try {
      const deadline = Date.now() + waitMs
      for (;;) {
        if (tryLink(temp, lockPath)) {
          heldTokens.add(token)
          return new DirLock(dir, lockPath, token)
        }
        const owner = lockOwner(lockPath)
        if (owner === LOCK_GONE) continue // released between our link and our read: try again at once
        if (owner !== LOCK_UNKNOWN && owner.token !== undefined && heldTokens.has(owner.token)) {
          throw new InputError(lockPath, `${options.subject} nobody else has open`, 'already open in this process')
        }
        if (owner !== LOCK_UNKNOWN && !ownerAlive(owner) && removeDeadLock(temp, lockPath, takeoverPath, owner)) continue
        if (Date.now() >= deadline) throw heldError(lockPath, takeoverPath, options, owner, waitMs)
        sleepSync(LOCK_POLL_MS)
      }
    } finally {
      rmSync(temp, {force: true})
    }
  }

  release(): void {
    if (this.released) return
    this.released = true
    heldTokens.delete(this.token)
    const owner = lockOwner(this.path)
    if (typeof owner === 'object' && owner.token === this.token) rmSync(this.path, {force: true})
  }
}

/** Runs `fn` holding the lock of `dir`, releasing it however `fn` ends. */
export function withDirLock<T>(dir: string, options: LockOptions, fn: () => T): T {
  const lock = DirLock.acquire(dir, options)
  try {
    return fn()
  } finally {
    lock.release()
  }
}
