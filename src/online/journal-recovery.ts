/**
 * Journal recovery: the acknowledged lines that dead journal segments (journal.ts) hold and the
 * tenants' logs lack are appended to those logs, each under its tenant's lock.
 */
import {closeSync, existsSync, fsyncSync, openSync, rmSync, statSync, truncateSync, writeSync} from 'node:fs'
import {join} from 'node:path'
import {InputError} from '../util/errors.js'
import {acquireDirLock, releaseDirLock} from '../util/lock.js'
import {type JournalRecord, deadSegments, readSegment} from './journal.js'
import {LOG_FILE, completeLength, readRange} from './log-file.js'

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
