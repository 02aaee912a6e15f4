/**
 * A tenant's state file (state.json): the learner after the first `logLines` lines of its log
 * (`logBytes` bytes, ending at checksum `chain`), then a line `sha256 <hex of everything before
 * it>`. Written atomically (temp file, rename); store.ts says when.
 */
import {readFileSync, statSync} from 'node:fs'
import {join} from 'node:path'
import {setImmediate as nextTurn} from 'node:timers/promises'
import {InputError, describeValue} from '../util/errors.js'
import {writeFileAtomic} from '../util/fs.js'
import {NEWLINE, readRange, sha256} from './log-file.js'
import type {LearnerState} from './tenant.js'

export const STATE_FILE = 'state.json'
/**
 * Format tag of the state file. 2: snapshots written before it may lack the outcomes of used queries
 * whose window was open at the snapshot (fixed in tenant.ts), so a /1 snapshot is discarded and the
 * learner rebuilt from the log. 3: the snapshot records `chain`, the log's chained checksum at the
 * end of the part it covers (see LOG_FORMAT), so a byte changed in that part is noticed on open; a
 * /2 snapshot is discarded and the learner rebuilt from the log (which verifies every line).
 */
const STATE_FORMAT = 'kt-online-state/3'
const CHECKSUM_PREFIX = 'sha256 '
/**
 * Remembered queries serialised per turn of the event loop by writeStateInTurns: about 2 ms of
 * JSON.stringify at the 2 µs a query measured (docs/measurements.md, "Snapshots off the request path").
 */
const SNAPSHOT_SLICE_QUERIES = 1000

/** The log position a state file covers. */
export interface LogPosition {
  logLines: number
  logBytes: number
  chain: string | null
}

/** The state file's JSON in pieces: everything but the remembered queries, then those SNAPSHOT_SLICE_QUERIES at a time. */
function* stateParts(initLine: string, at: LogPosition, state: LearnerState): Generator<string> {
  const {pending, ...rest} = state
  const head = JSON.stringify({format: STATE_FORMAT, init: sha256(initLine), ...at, learner: rest})
  yield `${head.slice(0, -2)},"pending":[`
  for (let i = 0; i < pending.length; i += SNAPSHOT_SLICE_QUERIES)
    yield `${i > 0 ? ',' : ''}${JSON.stringify(pending.slice(i, i + SNAPSHOT_SLICE_QUERIES)).slice(1, -1)}`
  yield ']}}\n'
}

/**
 * Writes the state file from its JSON pieces; returns the JSON's size. Not flushed (durable: false):
 * a snapshot a power loss tears or loses fails its checksum and is rebuilt from the log, which the
 * caller synced first.
 */
export function writeState(dir: string, parts: string[]): number {
  const body = parts.join('')
  writeFileAtomic(join(dir, STATE_FILE), `${body}${CHECKSUM_PREFIX}${sha256(body)}\n`, undefined, {durable: false})
  return body.length
}

/** The state file's JSON pieces for `state` at `at`, made now. */
export function stateNow(initLine: string, at: LogPosition, state: LearnerState): string[] {
  return [...stateParts(initLine, at, state)]
}

/** The same pieces, one per turn of the event loop: requests are served in between. */
export async function stateInTurns(initLine: string, at: LogPosition, state: LearnerState): Promise<string[]> {
  const parts: string[] = []
  for (const part of stateParts(initLine, at, state)) {
    parts.push(part)
    await nextTurn()
  }
  return parts
}

/** The parsed state file, or why it cannot be used. */
export function readStateFile(
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
  if (parsed.format !== STATE_FORMAT) return `state file format ${describeValue(parsed.format)} is not ${STATE_FORMAT}`
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
  if (readRange(logPath, logBytes! - 1, logBytes!)[0] !== NEWLINE) return 'state file does not end at a line of the log'
  if (!parsed.learner) return 'state file has no learner'
  if (parsed.chain !== null && typeof parsed.chain !== 'string') return 'state file has no log checksum'
  return {logLines: logLines!, logBytes: logBytes!, chain: parsed.chain, learner: parsed.learner}
}
