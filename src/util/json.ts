/**
 * The one way kt reads JSON, for every file kind (plans, datasets, LoCoMo files, profiles, models,
 * registries, reports) and every JSONL line: a UTF-8 byte-order mark is dropped (as the CSV reader
 * does), nesting deeper than MAX_JSON_DEPTH is refused before anything recursive sees the value,
 * and a syntax error names file, line and column and the character found, escaped.
 */
import {InputError, escapeControls} from './errors.js'
import {readText} from './fs.js'

/**
 * Deepest nesting of arrays and objects kt accepts: kt's own files nest about 10 levels, recursive
 * code walking a parsed value overflows V8's stack past a few thousand; 256 leaves room both sides.
 */
const MAX_JSON_DEPTH = 256

const BOM = '\uFEFF'

/** Text without a leading UTF-8 byte-order mark. */
export function stripBom(text: string): string {
  return text.startsWith(BOM) ? text.slice(1) : text
}

/**
 * Offset of the bracket that opens level `limit + 1`, or undefined when the text never nests that
 * deep. One pass, no recursion: brackets inside strings are skipped, escapes respected.
 */
export function depthExceededAt(text: string, limit = MAX_JSON_DEPTH): number | undefined {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c)
        i++ // backslash: skip the escaped character
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return i
    } else if (c === 0x5d || c === 0x7d) depth--
  }
  return undefined
}

/** 1-based line and column of a character offset. */
export function lineColumn(text: string, offset: number): {line: number; column: number} {
  let line = 1
  let lineStart = 0
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++
      lineStart = i + 1
    }
  }
  return {line, column: offset - lineStart + 1}
}

export interface JsonReadOptions {
  /** Line of the file on which `text` starts (JSONL: each line is parsed alone). Default 1. */
  readonly firstLine?: number
  /** What the text should be, for the error message (default "valid JSON"). */
  readonly expected?: string
}

/**
 * Parses JSON text read from `file`. Errors are one-line InputErrors: `file:line:column: expected
 * valid JSON (the parser's reason), got '}'`, or the depth limit's own message.
 */
export function parseJsonText(file: string, text: string, options: JsonReadOptions = {}): unknown {
  const body = stripBom(text)
  const at = (offset: number): string => {
    const {line, column} = lineColumn(body, offset)
    return `${file}:${line + (options.firstLine ?? 1) - 1}:${column}`
  }
  const deep = depthExceededAt(body)
  if (deep !== undefined)
    throw new InputError(
      at(deep),
      `JSON nested at most ${MAX_JSON_DEPTH} levels deep`,
      `level ${MAX_JSON_DEPTH + 1} here`,
    )
  try {
    return JSON.parse(body)
  } catch (error) {
    const message = (error as Error).message
    const position = /at position (\d+)/.exec(message)
    const offset = position ? Number(position[1]) : firstBadOffset(body)
    const expected = `${options.expected ?? 'valid JSON'} (${reasonOf(message)})`
    throw new InputError(
      at(offset),
      expected,
      offset >= body.length ? 'the end of the text' : describeChar(body, offset),
    )
  }
}

/** Reads and parses a JSON file: the one JSON reader of every kt file kind. */
export function readJsonFile(path: string, options: Omit<JsonReadOptions, 'firstLine'> = {}): unknown {
  return parseJsonText(path, readText(path), options)
}

/** V8's reason without its position and without the quoted snippet of the input it appends. */
function reasonOf(message: string): string {
  const reason = message
    .split('\n')[0]
    .replace(/,\s*".*$/s, '')
    .replace(/\s*(in JSON\s*)?at position \d+.*$/, '')
    .replace(/\s*\(line \d+ column \d+\)/, '')
    .trim()
  return escapeControls(reason || 'not JSON')
}

function describeChar(text: string, offset: number): string {
  const code = text.codePointAt(offset)!
  return JSON.stringify(String.fromCodePoint(code)).replace(
    /[\u007f-\u009f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )
}

/**
 * Where text stops being JSON when V8 does not say: the shortest prefix that fails for a reason
 * other than ending early ends at the first bad character. Only runs on the error path.
 */
export function firstBadOffset(text: string): number {
  const badAt = (n: number): boolean => {
    try {
      JSON.parse(text.slice(0, n))
      return false
    } catch (error) {
      const message = (error as Error).message
      const position = /at position (\d+)/.exec(message)
      // an error at the very end of the prefix only says the prefix ended early
      return position ? Number(position[1]) < n : !/end of JSON input|Unterminated string/.test(message)
    }
  }
  if (!badAt(text.length)) return text.length
  let lo = 1
  let hi = text.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (badAt(mid)) hi = mid
    else lo = mid + 1
  }
  return lo - 1
}
