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
    super(`${where}: expected ${expected}${got === undefined ? '' : `, got ${got}`}`)
    this.name = 'InputError'
  }
}

/** Short, printable description of an offending value for error messages. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing'
  if (typeof value === 'number' && Number.isNaN(value)) return 'NaN'
  const text = JSON.stringify(value)
  if (text === undefined) return String(value)
  return text.length > 40 ? `${text.slice(0, 37)}...` : text
}
