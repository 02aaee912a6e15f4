/**
 * Reading the journal's segments (journal.ts has the format): which are dead, their frames and
 * records, checked against their checksums. Recovery (store.ts) and the Journal use these.
 */
import {readdirSync, readFileSync, rmSync} from 'node:fs'
import {join} from 'node:path'
import {crc32} from 'node:zlib'
import {InputError} from '../util/errors.js'
import {isProcessAlive, processStartTime} from '../util/proc.js'
import {TENANT_ID_PATTERN} from './tenant-id.js'

/** Folder of the journal segments inside the tenants' folder (tenant ids cannot start with a dot). */
export const JOURNAL_DIR = '.journal'
/** "KTJ1" read as a little-endian u32. */
export const FRAME_MAGIC = 0x314a544b
/** magic, length, crc32. */
export const FRAME_HEADER_BYTES = 12
export const SEGMENT_SUFFIX = '.wal'
const SEGMENT_NAME = /^(\d+)-(\d+|-)-(\d+)\.wal$/

/** One journaled event: the tenant, the byte offset of the line in the tenant's log, the line (with its newline). */
export interface JournalRecord {
  tenant: string
  offset: number
  line: string
  /** `<segment>:<byte>` of the frame, for error messages. */
  at: string
}

/** This process's start time, as segment names record it ('-' where /proc is missing). */
export const OWN_START = processStartTime(process.pid) ?? '-'

/** Whether the process that wrote a segment named `name` still runs (a reused pid with another start time does not count). */
function segmentOwnerAlive(name: string): boolean {
  const m = SEGMENT_NAME.exec(name)
  if (!m) return true
  const pid = Number(m[1])
  if (pid === process.pid) return m[2] === OWN_START
  if (!isProcessAlive(pid)) return false
  return m[2] === '-' || processStartTime(pid) === undefined || processStartTime(pid) === m[2]
}

/** Segments in `dir`'s journal whose writer is dead, oldest first (by name: pid order does not matter, the records carry their offsets). */
export function deadSegments(dir: string): string[] {
  const journalDir = join(dir, JOURNAL_DIR)
  let names: string[]
  try {
    names = readdirSync(journalDir)
  } catch {
    return []
  }
  return names
    .filter((n) => SEGMENT_NAME.test(n) && !segmentOwnerAlive(n))
    .sort()
    .map((n) => join(journalDir, n))
}

/** Removes segment temp files (`.tmp`) whose writer died while preparing them. */
export function removeDeadSegmentTemps(dir: string): void {
  const journalDir = join(dir, JOURNAL_DIR)
  let names: string[]
  try {
    names = readdirSync(journalDir)
  } catch {
    return
  }
  for (const n of names)
    if (n.endsWith(`${SEGMENT_SUFFIX}.tmp`) && !segmentOwnerAlive(n.slice(0, -'.tmp'.length)))
      rmSync(join(journalDir, n), {force: true})
}

/** crc32 of a frame's length field and payload. */
export function frameCrc(frame: Buffer, payloadEnd: number): number {
  return crc32(frame.subarray(FRAME_HEADER_BYTES, payloadEnd), crc32(frame.subarray(4, 8)))
}

/** Whether a whole intact frame starts at `p`. */
function intactFrameAt(data: Buffer, p: number): boolean {
  if (p + FRAME_HEADER_BYTES > data.length || data.readUInt32LE(p) !== FRAME_MAGIC) return false
  const length = data.readUInt32LE(p + 4)
  const end = p + FRAME_HEADER_BYTES + length
  if (end > data.length) return false
  return (
    crc32(data.subarray(p + FRAME_HEADER_BYTES, end), crc32(data.subarray(p + 4, p + 8))) === data.readUInt32LE(p + 8)
  )
}

/** First non-zero byte at or after `from`, or -1. */
function firstNonZero(data: Buffer, from: number): number {
  for (let i = from; i < data.length; i++) if (data[i] !== 0) return i
  return -1
}

/** An intact frame starting after `from`, or -1 (a search for the magic, then a checksum test). */
function laterIntactFrame(data: Buffer, from: number): number {
  const magic = Buffer.alloc(4)
  magic.writeUInt32LE(FRAME_MAGIC)
  for (let p = data.indexOf(magic, from); p >= 0; p = data.indexOf(magic, p + 1)) if (intactFrameAt(data, p)) return p
  return -1
}

export interface SegmentContents {
  records: JournalRecord[]
  frames: number
  /** Byte where a torn last frame starts (a batch never acknowledged), or null. */
  tornAt: number | null
}

/** Reads a segment's records; a changed byte is a one-line InputError naming the segment and the byte (see the file comment). */
export function readSegment(path: string, data: Buffer = readFileSync(path)): SegmentContents {
  const records: JournalRecord[] = []
  let p = 0
  let frames = 0
  const damaged = (at: number, what: string): InputError =>
    new InputError(
      `${path}:${at}`,
      'journal frames that match their checksums',
      `${what}: a byte of the journal was changed after it was written (kt does not guess; restore the tenants from a backup)`,
    )
  while (p + FRAME_HEADER_BYTES <= data.length) {
    const magic = data.readUInt32LE(p)
    const length = data.readUInt32LE(p + 4)
    if (magic === 0 && length === 0 && data.readUInt32LE(p + 8) === 0) {
      // The unused rest of the segment: all zeros, or a frame's header was zeroed.
      const stray = firstNonZero(data, p)
      if (stray >= 0) throw damaged(p, `a zero frame header followed by data at byte ${stray}`)
      return {records, frames, tornAt: null}
    }
    if (!intactFrameAt(data, p)) {
      const later = laterIntactFrame(data, p + 1)
      if (later >= 0) throw damaged(p, `a frame that fails its checksum followed by an intact frame at byte ${later}`)
      return {records, frames, tornAt: p}
    }
    const end = p + FRAME_HEADER_BYTES + length
    const payload = data.subarray(p + FRAME_HEADER_BYTES, end).toString('utf8')
    const at = `${path}:${p}`
    let start = 0
    while (start < payload.length) {
      const nl = payload.indexOf('\n', start)
      if (nl < 0) throw damaged(p, 'a frame whose payload does not end in a newline')
      const s1 = payload.indexOf(' ', start)
      const s2 = s1 < 0 ? -1 : payload.indexOf(' ', s1 + 1)
      if (s1 < 0 || s2 < 0 || s2 > nl) throw damaged(p, 'a record without tenant and offset')
      const tenant = payload.slice(start, s1)
      const offset = Number(payload.slice(s1 + 1, s2))
      if (!TENANT_ID_PATTERN.test(tenant) || !Number.isSafeInteger(offset) || offset < 0)
        throw damaged(p, 'a record with a bad tenant id or offset')
      records.push({tenant, offset, line: payload.slice(s2 + 1, nl + 1), at})
      start = nl + 1
    }
    frames++
    p = end
  }
  return {records, frames, tornAt: null}
}

/** The records of `tenant` in every dead segment of `dir`, in offset order (duplicates kept: the caller checks they agree). */
export function deadRecordsFor(dir: string, tenant: string): JournalRecord[] {
  const out: JournalRecord[] = []
  for (const path of deadSegments(dir)) for (const r of readSegment(path).records) if (r.tenant === tenant) out.push(r)
  return out.sort((a, b) => a.offset - b.offset)
}
