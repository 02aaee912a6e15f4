/**
 * The one lock every store of kt shares (online tenants, deployment histories, model registries):
 * a file `<dir>/lock` holding "pid start-time token" of its holder, created with its content in
 * one step (a temp file hard-linked to `lock`), so nobody ever sees it empty. A dead holder
 * (kill -9; pid and start time tell it from a process that reused the pid) is taken over under
 * `lock.takeover`; a lock file without a pid counts as held. Waiters poll up to their wait, then
 * fail in one line naming the pid. The token is unique per acquisition, so this process taking
 * the same lock twice (by another spelling of the path) is refused instead of deadlocking.
 * Synchronous, as the stores are.
 */
import {linkSync, readdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync} from 'node:fs'
import {basename, join} from 'node:path'
import {randomBytes} from 'node:crypto'
import {InputError} from './errors.js'
import {isProcessAlive, processStartTime, sleepSync} from './proc.js'

/**
 * Default wait for a lock another process holds: stores hold it for one open-apply-close
 * (milliseconds), so bursts of concurrent commands queue well inside this.
 */
export const LOCK_WAIT_MS = 5000
/** Pause between attempts to take a held lock: short against a hold, long enough not to spin. */
const LOCK_POLL_MS = 5

const LOCK_FILE = 'lock'
/** Taken (like the lock) while removing a dead owner's lock, so two waiters never both remove and re-take it. */
const TAKEOVER_FILE = 'lock.takeover'

export interface DirLockOptions {
  /** How long to wait while another live process holds the lock (default LOCK_WAIT_MS). */
  readonly waitMs?: number
  /** What holding the lock means, as the "expected" of the one-line error: e.g. "a tenant nobody else has open". */
  readonly expected: string
  /** What the lock protects, for the hint "if no process uses <subject>, remove <file>": e.g. "tenant acme". */
  readonly subject: string
}

/** Numbers this process's lock temp files (it may hold several locks). */
let lockTempSeq = 0

/** This process's start time, read once. */
const OWN_START = processStartTime(process.pid)

/** Writes our lock line (pid, start time, a token unique to this acquisition) to a fresh temp file in `dir`, fsync'd. */
function writeLockTemp(dir: string, token: string): string {
  const path = join(dir, `.lock.${process.pid}.${++lockTempSeq}.tmp`)
  try {
    writeFileSync(path, `${process.pid} ${OWN_START ?? '-'} ${token}\n`, {flush: true})
  } catch (error) {
    rmSync(path, {force: true})
    throw new InputError(path, 'a writable folder for the lock', (error as Error).message.split('\n')[0])
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

/** Creates `path` as a hard link to the filled temp file (atomic create-with-content); false if it exists. */
function tryLink(temp: string, path: string): boolean {
  try {
    linkSync(temp, path)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw new InputError(
      path,
      'a lock file that can be created (a folder that supports hard links)',
      (error as Error).message.split('\n')[0],
    )
  }
}

/** No lock file (released while we looked). */
const LOCK_GONE = 'gone'
/** A lock file without a pid: an unknown owner (e.g. an older kt that crashed between creating and writing it). */
const LOCK_UNKNOWN = 'unknown'

/** A lock's owner: its line as written, the pid, and (all but the oldest "pid" lines) start time and token. */
interface LockOwner {
  line: string
  pid: number
  start?: string
  token?: string
}

/** Who holds a lock file: its owner (older "pid" lines too), LOCK_UNKNOWN or LOCK_GONE. */
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

/** Tokens of the locks this process holds (whatever path they were taken by). */
const heldTokens = new Set<string>()

/**
 * Whether a lock's owner still runs: its pid is alive and, where both start times are known, the
 * same process. A lock naming our pid that we do not hold was left by a dead earlier process.
 */
function ownerAlive(owner: LockOwner): boolean {
  if (owner.pid === process.pid) return owner.token !== undefined && heldTokens.has(owner.token)
  if (!isProcessAlive(owner.pid)) return false
  if (owner.start === undefined) return true
  const now = processStartTime(owner.pid)
  return now === undefined || now === owner.start
}

/** Removes a dead owner's lock under the takeover lock (re-read there); false if another waiter is taking over. */
function removeDeadLock(temp: string, lockPath: string, takeoverPath: string, dead: LockOwner): boolean {
  if (!tryLink(temp, takeoverPath) && !(removeDeadTakeover(takeoverPath) && tryLink(temp, takeoverPath))) return false
  try {
    const now = lockOwner(lockPath)
    if (typeof now !== 'object' || now.line !== dead.line || ownerAlive(now)) return false
    unlinkSync(lockPath)
    return true
  } finally {
    unlinkSync(takeoverPath)
  }
}

/**
 * Removes a takeover lock whose owner died inside removeDeadLock (else no opener could ever take
 * the lock again). It is moved aside by rename, which only one remover can do; if what was moved
 * is not the dead owner's line (a live process re-took it between our read and the rename), it is
 * put back. True if the dead takeover lock is gone. Residual race: three processes recovering the
 * same dead lock at once.
 */
function removeDeadTakeover(takeoverPath: string): boolean {
  const owner = lockOwner(takeoverPath)
  if (owner === LOCK_GONE) return true
  if (typeof owner !== 'object' || ownerAlive(owner)) return false
  const aside = `${takeoverPath}.${process.pid}.${randomBytes(LOCK_TOKEN_BYTES).toString('hex')}.dead`
  try {
    renameSync(takeoverPath, aside)
  } catch {
    return true // another remover moved it first
  }
  const moved = lockOwner(aside)
  let restored = false
  if (typeof moved === 'object' && moved.line !== owner.line) {
    try {
      linkSync(aside, takeoverPath)
      restored = true
    } catch {
      // a new takeover lock exists already: leave it
    }
  }
  rmSync(aside, {force: true})
  return !restored
}

/** The one-line error for a lock that stayed held for the whole wait. */
function heldError(
  lockPath: string,
  takeoverPath: string,
  options: DirLockOptions,
  owner: LockOwner | typeof LOCK_UNKNOWN,
  waitMs: number,
): InputError {
  const expected = `${options.expected} (waited ${waitMs} ms)`
  if (owner === LOCK_UNKNOWN)
    return new InputError(
      lockPath,
      expected,
      `held by an unknown owner (a lock file without a pid; if no process uses ${options.subject}, remove ${lockPath})`,
    )
  if (!ownerAlive(owner))
    return new InputError(
      takeoverPath,
      expected,
      `a takeover of dead pid ${owner.pid}'s lock that never finished (if no process uses ${options.subject}, remove ${takeoverPath})`,
    )
  const unsure =
    owner.start === undefined
      ? ` (a lock without a start time: if pid ${owner.pid} is not a kt process, remove ${lockPath})`
      : ''
  return new InputError(lockPath, expected, `held by pid ${owner.pid}${unsure}`)
}

/** Random bytes of a lock's token (no two acquisitions collide). */
const LOCK_TOKEN_BYTES = 8

/** Takes `<dir>/lock` (the folder must exist), waiting up to `waitMs` for a live holder, taking over a dead one's. */
export function acquireDirLock(dir: string, options: DirLockOptions): void {
  const lockPath = join(dir, LOCK_FILE)
  const takeoverPath = join(dir, TAKEOVER_FILE)
  const waitMs = options.waitMs ?? LOCK_WAIT_MS
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
      if (owner !== LOCK_UNKNOWN && owner.token !== undefined && heldTokens.has(owner.token))
        throw new InputError(lockPath, options.expected, 'already open in this process')
      if (owner !== LOCK_UNKNOWN && !ownerAlive(owner) && removeDeadLock(temp, lockPath, takeoverPath, owner)) continue
      if (Date.now() >= deadline) throw heldError(lockPath, takeoverPath, options, owner, waitMs)
      sleepSync(LOCK_POLL_MS)
    }
  } finally {
    rmSync(temp, {force: true})
  }
}

/** Removes `<dir>/lock` if this process holds it. */
export function releaseDirLock(dir: string): void {
  const lockPath = join(dir, LOCK_FILE)
  const owner = lockOwner(lockPath)
  if (typeof owner !== 'object' || owner.token === undefined || !heldTokens.delete(owner.token)) return
  rmSync(lockPath, {force: true})
}

/** Runs `fn` holding `<dir>/lock`; the lock is released however `fn` ends. */
export function withDirLock<T>(dir: string, options: DirLockOptions, fn: () => T): T {
  acquireDirLock(dir, options)
  try {
    return fn()
  } finally {
    releaseDirLock(dir)
  }
}

/**
 * Removes the temp files writeFileAtomic (src/util/fs.ts) leaves when killed before its rename
 * (`.<name>.<pid>.tmp`) of the file `target`, or of every file whose name matches it; returns the
 * names removed. Only under the lock that guards those files: then every such file is stale.
 */
export function removeStaleTemps(dir: string, target: string | RegExp): string[] {
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return []
  }
  const matches = (name: string) => (typeof target === 'string' ? name === basename(target) : target.test(name))
  const removed = names.filter((name) => {
    const m = /^\.(.+)\.\d+\.tmp$/.exec(name)
    return m !== null && matches(m[1])
  })
  for (const name of removed) rmSync(join(dir, name), {force: true})
  return removed
}
