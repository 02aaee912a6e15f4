import {didYouMean} from './suggest.js'

/**
 * Errors a user caused. Each renders as one line that names where (file, line, field) and what
 * was expected; the CLI prints it and exits with code 2.
 */
export class InputError extends Error {
  readonly exitCode = 2

  constructor(
    readonly where: string,
    readonly expected: string,
    readonly got?: string,
  ) {
    super(
      escapeControls(
        `${where}: expected ${expected}${got === undefined ? '' : `, got ${got}${choiceSuggestion(expected, got)}`}`,
      ),
    )
    this.name = 'InputError'
  }
}

/** For "expected one of a, b, c, got x": the listed choice closest to x, as ` (did you mean "b"?)`. */
function choiceSuggestion(expected: string, got: string): string {
  const list = /^one of (.+)$/.exec(expected)
  if (!list) return ''
  const unquote = (t: string): string => t.trim().replace(/^"(.*)"$/, '$1')
  return didYouMean(unquote(got), list[1].split(', ').map(unquote))
}

/**
 * Exit codes (README "Errors"): 0 pass, 1 an acceptance criterion failed, 2 bad input, 3 kt itself
 * failed (a bug: KT_DEBUG=1 prints the stack).
 */
export const EXIT_INPUT = 2
export const EXIT_INTERNAL = 3

/**
 * Control characters (C0, DEL, C1, line and paragraph separators) as visible escapes, so text
 * from a user's file can never break an error line or drive the terminal (ESC sequences).
 */
export function escapeControls(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => {
    if (c === '\n') return '\\n'
    if (c === '\r') return '\\r'
    if (c === '\t') return '\\t'
    const code = c.charCodeAt(0)
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`
  })
}

/** A message as one printable line: line breaks between parts become spaces, other controls escapes. */
export function oneLine(message: string): string {
  return escapeControls(message.replace(/\s*[\r\n]+\s*/g, ' ').trim())
}

/** Characters of an offending value an error message shows (longer values end in "..."). */
const DESCRIBE_CHARS = 40

/**
 * Short, printable description of an offending value for error messages: its JSON text, cut at
 * DESCRIBE_CHARS. Safe for any value (deep nesting, a cycle, a BigInt): clipForJson first cuts it
 * to what those characters can show.
 */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing'
  if (typeof value === 'number' && Number.isNaN(value)) return 'NaN'
  // JSON.parse reads 1e400 as Infinity, which JSON.stringify would show as null
  if (value === Infinity || value === -Infinity) return `${value} (a number beyond float64's range)`
  let text: string | undefined
  try {
    text = JSON.stringify(clipForJson(value, DESCRIBE_CHARS + 1))
  } catch {
    text = undefined
  }
  if (text === undefined)
    return typeof value === 'bigint'
      ? `${value}n`
      : typeof value === 'object' && value !== null
        ? Array.isArray(value)
          ? 'an array'
          : 'an object'
        : String(value)
  return text.length > DESCRIBE_CHARS ? `${text.slice(0, DESCRIBE_CHARS - 3)}...` : text
}

/**
 * A copy of `value` whose JSON text starts with the same `chars` characters as the value's own:
 * every element, entry, character and nesting level takes at least one character of JSON, so
 * arrays keep their first `chars` elements, objects their first `chars` entries that JSON shows,
 * strings their first `chars` characters, and nesting stops at `chars` levels (a cycle too).
 */
function clipForJson(value: unknown, chars: number, depth = 0): unknown {
  if (typeof value === 'string') return value.length > chars ? value.slice(0, chars) : value
  if (typeof value !== 'object' || value === null) return value
  if (depth >= chars) return null
  const withJson = value as {toJSON?: unknown}
  if (typeof withJson.toJSON === 'function')
    return clipForJson((withJson.toJSON as () => unknown).call(value), chars, depth)
  if (Array.isArray(value)) {
    const out: unknown[] = []
    for (let i = 0; i < value.length && i < chars; i++) out.push(clipForJson(value[i], chars, depth + 1))
    return out
  }
  const out: Record<string, unknown> = {}
  let kept = 0
  for (const key in value) {
    if (kept >= chars) break
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue
    const v = (value as Record<string, unknown>)[key]
    // JSON leaves these entries out: they take no characters
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue
    out[key] = clipForJson(v, chars, depth + 1)
    kept++
  }
  return out
}

/** Exit code of a failed acceptance criterion (a run whose validation failed, a deploy the gate refused). */
export const EXIT_CRITERION = 1
/** Exit code of a run stopped by Ctrl-C or SIGTERM (128 + SIGINT, as shells report it). */
export const EXIT_INTERRUPTED = 130

/**
 * An acceptance criterion failed (a study whose validation failed, a deploy the gate refused): the
 * CLI prints it as one line and exits with code 1, so CI can tell it from bad input (2).
 */
export class AcceptanceError extends Error {
  readonly exitCode = EXIT_CRITERION
  override readonly name = 'AcceptanceError'

  constructor(message: string) {
    super(oneLine(message))
  }
}

/** A run stopped by the user (Ctrl-C) that cannot report as usual: one line, exit 130, not a failure of kt. */
export class InterruptedError extends Error {
  readonly exitCode = EXIT_INTERRUPTED
  override readonly name = 'InterruptedError'

  constructor(message: string) {
    super(oneLine(message))
  }
}
