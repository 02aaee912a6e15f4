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
    super(`${printable(where)}: expected ${expected.replace(/\s*\n\s*/g, ' ')}${got === undefined ? '' : `, got ${printable(got)}`}`)
    this.name = 'InputError'
  }
}

/** Control, line-separator and bidi characters (user data in an error must stay on one visible line). */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/g

/** Text with every control, line-separator or bidi character written as a \uXXXX escape. */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** Short, printable description of an offending value for error messages. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing'
  if (typeof value === 'number' && Number.isNaN(value)) return 'NaN'
  // JSON escapes C0 controls but not C1, U+2028/2029 (line breaks to many readers) or bidi overrides
  const text = JSON.stringify(value) === undefined ? undefined : printable(JSON.stringify(value))
  if (text === undefined) return String(value)
  return text.length > 40 ? `${text.slice(0, 37)}...` : text
}

/**
 * An acceptance criterion failed (a study whose validation failed, a deploy the gate refused): the
 * CLI prints it as one line and exits with code 1, so CI can tell it from bad input (2).
 */
export class AcceptanceError extends Error {
  readonly exitCode = 1

  constructor(message: string) {
    super(message.replace(/\s*\n\s*/g, ' '))
    this.name = 'AcceptanceError'
  }
}
