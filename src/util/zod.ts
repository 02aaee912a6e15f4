import type {z} from 'zod'
import {InputError, describeValue} from './errors.js'

/** "a.b[2].c" for a zod issue path ("(top level)" for the root). */
function issuePath(issue: z.ZodIssue): string {
  return issue.path.length
    ? issue.path
        .map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`))
        .join('')
        .replace(/^\./, '')
    : '(top level)'
}

/** What a zod issue expected, as the phrase after "expected" in a one-line error. */
function describeExpected(issue: z.ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return issue.received === 'undefined' ? `${issue.expected} (the field is missing)` : issue.expected
    case 'invalid_enum_value':
    case 'invalid_union_discriminator':
      return `one of ${issue.options.map((o) => JSON.stringify(o)).join(', ')}`
    case 'invalid_literal':
      return JSON.stringify(issue.expected)
    case 'too_small':
      if (issue.type === 'array') return `at least ${issue.minimum} items`
      if (issue.type === 'string')
        return issue.minimum === 1 ? 'a non-empty string' : `at least ${issue.minimum} characters`
      return `a number ${issue.inclusive ? '>=' : '>'} ${issue.minimum}`
    case 'too_big':
      return issue.type === 'array'
        ? `at most ${issue.maximum} items`
        : `a number ${issue.inclusive ? '<=' : '<'} ${issue.maximum}`
    case 'unrecognized_keys':
      return `no unknown fields (${issue.keys.join(', ')})`
    case 'not_finite':
      return 'a finite number'
    case 'invalid_string':
    case 'custom':
      return issue.message
    default:
      return issue.message.toLowerCase()
  }
}

/** Parses with a zod schema; the first problem becomes a one-line InputError naming file and field. */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown, file: string): T {
  const result = schema.safeParse(value)
  if (result.success) return result.data
  const issue = result.error.issues[0]
  const got = issue.path.reduce<unknown>((v, key) => (v as Record<string | number, unknown> | undefined)?.[key], value)
  throw new InputError(`${file}: ${issuePath(issue)}`, describeExpected(issue), describeValue(got))
}
