/**
 * Persistence of a tenant's learner: an append-only event log plus a checksummed state snapshot.
 *
 * <dir>/<tenant>/log.jsonl   line 1 the init record, then one event per line; every line is
 *                            written with one write() and fsync'd before the event is applied,
 *                            so an acknowledged query or feedback survives a crash.
 * <dir>/<tenant>/state.json  the learner after the first `logLines` lines, written atomically
 *                            (temp file, rename) every SNAPSHOT_EVERY_EVENTS events and on close,
 *                            followed by a line `sha256 <hex of everything before it>`.
 * <dir>/<tenant>/lock        the pid of the process that has the tenant open.
 *
 * Opening loads the snapshot and replays the log lines after it. A snapshot that is missing its
 * checksum line, fails the checksum, does not parse, does not fit the space or claims more lines
 * than the log has is discarded and the learner rebuilt from the whole log (the log is the
 * truth; the snapshot only saves replay time). A torn last log line (a crash mid-write: no
 * newline at the end) is cut off; it was never acknowledged. The query counter is part of the
 * state, so scheduled decay resumes in phase after a restart.
 */
import {closeSync, existsSync, fsyncSync, openSync, readFileSync, rmSync, truncateSync, writeSync} from 'node:fs'
import {join} from 'node:path'
import {createHash} from 'node:crypto'
import type {Config, ParamSpace} from '../space/types.js'
import {InputError, describeValue} from '../util/errors.js'
import {ensureDir, writeFileAtomic} from '../util/fs.js'
import type {BanditSettings} from './bandit.js'
import {TenantBandit} from './bandit.js'
import {type LearnerState, type TenantEvent, type TenantInit, type Verdict, TenantLearner, dimensionsFingerprint} from './tenant.js'

/** Longest tenant id: ids become folder names, and 64 fits every file system's name limit with room. */
export const MAX_TENANT_ID_LENGTH = 64
/** Tenant ids: letters, digits, dot, dash, underscore, starting with a letter or digit (so no '/', '\\', '..' or hidden names). */
export const TENANT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/
/** Events between snapshots: bounds replay after a crash to this many lines. */
export const SNAPSHOT_EVERY_EVENTS = 200
/** Format tag of the state file. */
export const STATE_FORMAT = 'kt-online-state/1'

const LOG_FILE = 'log.jsonl'
const STATE_FILE = 'state.json'
const LOCK_FILE = 'lock'
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

/** Takes the tenant's lock file, taking over one left by a dead process. */
function acquireLock(path: string): void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx')
      writeSync(fd, `${process.pid}\n`)
      closeSync(fd)
      return
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new InputError(path, 'a writable lock file', (error as Error).message.split('\n')[0])
      const pid = Number(readFileSync(path, 'utf8').trim())
      if (Number.isInteger(pid) && pid > 0 && isProcessAlive(pid)) throw new InputError(path, 'a tenant nobody else has open', pid === process.pid ? 'already open in this process' : `held by pid ${pid}`)
      rmSync(path, {force: true})
    }
  }
  throw new InputError(path, 'a lock file that can be taken', 'another process keeps creating it')
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
      return {e: 'q', id: num('id'), t: num('t'), arms: v.arms as number[]}
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

  private constructor(
    readonly dir: string,
    readonly learner: TenantLearner,
    private readonly initLine: string,
    /** Lines in the log (the init line included). */
    private logLines: number,
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
    if (options.create) {
      if (existsSync(logPath)) throw new InputError(logPath, `no existing tenant ${options.tenant}`, 'a tenant with that id')
      ensureDir(dir)
    } else if (!existsSync(logPath)) throw new InputError(logPath, `an existing tenant ${options.tenant} (create it with kt online init)`, 'no such tenant')
    const lockPath = join(dir, LOCK_FILE)
    acquireLock(lockPath)
    try {
      if (options.create) TenantStore.writeInit(dir, options.tenant, options.create)
      return TenantStore.load(dir, options)
    } catch (error) {
      rmSync(lockPath, {force: true})
      throw error
    }
  }

  private static writeInit(dir: string, tenant: string, c: CreateOptions): void {
    const bandit = new TenantBandit(c.space, c.profile, c.settings)
    const init: TenantInit = {e: 'init', v: 1, tenant, space: c.space.id, dims: dimensionsFingerprint(bandit), profile: c.profile, settings: c.settings, seed: c.seed}
    const fd = openSync(join(dir, LOG_FILE), 'wx')
    try {
      writeSync(fd, `${JSON.stringify(init)}\n`)
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    fsyncDir(dir)
  }

  private static load(dir: string, options: OpenOptions): TenantStore {
    const logPath = join(dir, LOG_FILE)
    let text = readFileSync(logPath, 'utf8')
    let tornBytes = 0
    const end = text.lastIndexOf('\n') + 1
    if (end < text.length) {
      tornBytes = Buffer.byteLength(text.slice(end))
      text = text.slice(0, end)
      truncateSync(logPath, Buffer.byteLength(text))
    }
    const lines = text.split('\n').slice(0, -1)
    if (lines.length === 0) throw new InputError(logPath, 'an init record on line 1', 'an empty log')
    const parseLine = (i: number): unknown => {
      try {
        return JSON.parse(lines[i])
      } catch (error) {
        throw new InputError(`${logPath}:${i + 1}`, 'one JSON event per line', (error as Error).message.split('\n')[0])
      }
    }
    const init = parseLine(0) as TenantInit
    const where = `${logPath}:1`
    if (init?.e !== 'init' || init.v !== 1) throw new InputError(where, 'an init record of format 1', describeValue(init?.e))
    if (init.tenant !== options.tenant) throw new InputError(`${where}: tenant`, JSON.stringify(options.tenant), describeValue(init.tenant))
    const space = options.create?.space ?? options.resolveSpace?.(init.space)
    if (!space || space.id !== init.space) throw new InputError(`${where}: space`, 'a known parameter space', describeValue(init.space))
    const learner = new TenantLearner(init, space)
    if (dimensionsFingerprint(learner.bandit) !== init.dims)
      throw new InputError(`${where}: dims`, `the bins of space ${space.id} as the tenant was created with`, 'a changed space (create a new tenant)')

    const initLine = lines[0]
    let start = 1
    let rebuilt: string | null = null
    const statePath = join(dir, STATE_FILE)
    if (existsSync(statePath)) {
      const loaded = TenantStore.readState(statePath, initLine, lines.length)
      if (typeof loaded === 'string') rebuilt = loaded
      else {
        try {
          learner.load(loaded.learner)
          start = loaded.logLines
        } catch (error) {
          rebuilt = `state does not fit the tenant (${(error as Error).message})`
        }
      }
      if (rebuilt !== null) {
        const fresh = new TenantLearner(init, space)
        return TenantStore.replayInto(dir, fresh, lines, 1, logPath, {rebuilt, tornBytes}, options, initLine)
      }
    }
    return TenantStore.replayInto(dir, learner, lines, start, logPath, {rebuilt, tornBytes}, options, initLine)
  }

  private static replayInto(dir: string, learner: TenantLearner, lines: string[], start: number, logPath: string, found: {rebuilt: string | null; tornBytes: number}, options: OpenOptions, initLine: string): TenantStore {
    for (let i = start; i < lines.length; i++) {
      const where = `${logPath}:${i + 1}`
      let value: unknown
      try {
        value = JSON.parse(lines[i])
      } catch (error) {
        throw new InputError(where, 'one JSON event per line', (error as Error).message.split('\n')[0])
      }
      const event = parseEvent(value, where)
      if (event.e === 'q') learner.bandit.checkArms(event.arms, where)
      learner.apply(event)
    }
    const report: OpenReport = {replayed: lines.length - start, rebuilt: found.rebuilt, tornBytes: found.tornBytes}
    const store = new TenantStore(dir, learner, initLine, lines.length, report, options.snapshotEvery ?? SNAPSHOT_EVERY_EVENTS)
    if (report.replayed > 0 || report.rebuilt !== null) store.snapshot()
    return store
  }

  /** The parsed snapshot, or why it cannot be used. */
  private static readState(path: string, initLine: string, logLines: number): {logLines: number; learner: LearnerState} | string {
    const text = readFileSync(path, 'utf8')
    const cut = text.lastIndexOf(`\n${CHECKSUM_PREFIX}`)
    if (cut < 0 || !text.endsWith('\n')) return 'state file truncated (no checksum line)'
    const body = text.slice(0, cut + 1)
    const sum = text.slice(cut + 1 + CHECKSUM_PREFIX.length, -1)
    if (sha256(body) !== sum) return 'state file checksum mismatch'
    let parsed: {format?: string; init?: string; logLines?: number; learner?: LearnerState}
    try {
      parsed = JSON.parse(body)
    } catch {
      return 'state file does not parse'
    }
    if (parsed.format !== STATE_FORMAT) return `state file format ${describeValue(parsed.format)} is not ${STATE_FORMAT}`
    if (parsed.init !== sha256(initLine)) return 'state file belongs to another log'
    if (!Number.isInteger(parsed.logLines) || parsed.logLines! < 1 || parsed.logLines! > logLines) return 'state file is ahead of the log'
    if (!parsed.learner) return 'state file has no learner'
    return {logLines: parsed.logLines!, learner: parsed.learner}
  }

  /** Logs (fsync'd) and applies one event. */
  private record(event: TenantEvent): Verdict {
    if (this.closed) throw new Error('tenant store is closed')
    writeSync(this.fd, `${JSON.stringify(event)}\n`)
    fsyncSync(this.fd)
    this.logLines++
    const verdict = this.learner.apply(event)
    if (++this.sinceSnapshot >= this.snapshotEvery) this.snapshot()
    return verdict
  }

  /** Closes implicit windows that ended before `now` (logged as a tick so replay does the same); true if any closed. */
  tick(now: number): boolean {
    if (!this.learner.wouldExpire(now)) return false
    this.record({e: 'tick', t: now})
    return true
  }

  /** Samples a configuration for a new query and records it; the query id is what feedback names. */
  choose(now: number): {queryId: number; arms: number[]; config: Config} {
    this.tick(now)
    const {id, arms} = this.learner.sampleNext()
    this.record({e: 'q', id, t: now, arms})
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
    const body = `${JSON.stringify({format: STATE_FORMAT, init: sha256(this.initLine), logLines: this.logLines, learner: this.learner.save()})}\n`
    writeFileAtomic(join(this.dir, STATE_FILE), `${body}${CHECKSUM_PREFIX}${sha256(body)}\n`)
    this.sinceSnapshot = 0
  }

  close(): void {
    if (this.closed) return
    this.snapshot()
    closeSync(this.fd)
    this.closed = true
    rmSync(join(this.dir, LOCK_FILE), {force: true})
  }
}
