/**
 * A tenant's event log on disk (log.jsonl): its lines, their chained checksums (LOG_FORMAT), and
 * the checks replay applies to each line. TenantStore (store.ts) writes and replays it; journal
 * recovery (journal-recovery.ts) appends to it.
 */
import {closeSync, openSync, readSync, statSync, truncateSync} from 'node:fs'
import {createHash} from 'node:crypto'
import {InputError, describeValue} from '../util/errors.js'
import type {QueryEvent, TenantEvent} from './tenant.js'

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

export const LOG_FILE = 'log.jsonl'
export const NEWLINE = 0x0a
/** Bytes read at a time while looking for the end of a line. */
const READ_CHUNK = 65536

/** Bytes [from, to) of a file. */
export function readRange(path: string, from: number, to: number): Buffer {
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
export function readFirstLine(path: string): string {
  const size = statSync(path).size
  let text = Buffer.alloc(0)
  for (let from = 0; from < size; from += READ_CHUNK) {
    text = Buffer.concat([text, readRange(path, from, Math.min(size, from + READ_CHUNK))])
    const nl = text.indexOf(NEWLINE)
    if (nl >= 0) return text.subarray(0, nl).toString('utf8')
  }
  throw new InputError(path, 'an init record on line 1', size === 0 ? 'an empty log' : 'no complete first line')
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

/** The chained checksum of a line whose JSON without `c` is `body`, after a line whose checksum was `previous`. */
export function chainChecksum(previous: string, body: string): string {
  // one update of one string: each update is a crossing into native code
  return createHash('sha256').update(`${previous}\n${body}`).digest('hex').slice(0, CHAIN_HEX_CHARS)
}

/** A log line in format 2: `body` (a JSON object) with its chained checksum as the last field. */
export function chainedLine(previous: string, body: string): {line: string; chain: string} {
  const chain = chainChecksum(previous, body)
  return {line: `${body.slice(0, -1)},"c":"${chain}"}`, chain}
}

const CHAIN_SUFFIX = new RegExp(`,"c":"([0-9a-f]{${CHAIN_HEX_CHARS}})"}$`)

/**
 * Checks one format-2 log line against the previous line's checksum and returns its own checksum
 * and its JSON without `c`; a mismatch is a one-line InputError naming the file and line.
 */
export function verifyChained(line: string, previous: string, at: string): {chain: string; body: string} {
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

/** Bytes of a log up to and including its last newline (a torn last line excluded). */
export function completeLength(logPath: string, size: number): number {
  for (let to = size; to > 0;) {
    const from = Math.max(0, to - READ_CHUNK)
    const part = readRange(logPath, from, to)
    const nl = part.lastIndexOf(NEWLINE)
    if (nl >= 0) return from + nl + 1
    to = from
  }
  return 0
}

/**
 * Verifies the chain over the log lines after `from` up to byte loaded.logBytes and returns the
 * checksum of the last (undefined if that is not line loaded.logLines); a line that does not
 * match is a one-line InputError naming it.
 */
export function verifyCovered(
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

/**
 * Replays the log after `covered`, a torn last line (a crash mid-write: never acknowledged) cut off
 * first: each line checked against its chained checksum (unless `chain` is null: format 1) and
 * parsed, then handed to `apply` with where it is. Returns the lines and bytes replayed, the bytes
 * cut off and the last line's checksum.
 */
export function replayLog(
  logPath: string,
  covered: {lines: number; bytes: number},
  chain: string | null,
  apply: (event: TenantEvent, at: string) => void,
): {lines: number; bytes: number; tornBytes: number; chain: string | null} {
  const tail = readRange(logPath, covered.bytes, statSync(logPath).size)
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
    if (chain !== null) ({chain, body: text} = verifyChained(text, chain, at))
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (error) {
      throw new InputError(at, 'one JSON event per line', (error as Error).message.split('\n')[0])
    }
    apply(parseEvent(value, at), at)
  }
  return {lines: lines.length, bytes: end, tornBytes, chain}
}
