/**
 * kt's JSON style: every key kt writes (--json output, files) is snake_case. Internal TypeScript
 * names stay camelCase; the views that leave the process go through these helpers.
 */

/** `budgetUsed` -> `budget_used`; a key that is not a lowerCamelCase identifier is kept as is. */
export function snakeCase(key: string): string {
  return /^[a-z][a-z0-9]*([A-Z][a-z0-9]*)+$/.test(key) ? key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : key
}

/**
 * A copy of `value` whose object keys are snake_case, at every depth. Only for kt's own records:
 * maps keyed by user data (tenant names, parameter names a user chose) must not pass through it.
 */
export function snakeKeys(value: unknown): unknown {
  return snakeKeysOfRecord(value, [])
}

/**
 * Keys whose values are keyed by names a user or a parameter space chose (a configuration's
 * parameters, metrics by name, per-type overrides): their own keys are kept as they are.
 */
const VERBATIM_KEYS: readonly string[] = ['config', 'metrics', 'values', 'overrides', 'fixed', 'base']

/** snakeKeys, except below VERBATIM_KEYS (and `verbatim`), whose contents are copied unchanged. */
export function snakeKeysOfRecord(value: unknown, verbatim: readonly string[] = VERBATIM_KEYS): unknown {
  if (Array.isArray(value)) return value.map((v) => snakeKeysOfRecord(v, verbatim))
  if (value === null || typeof value !== 'object') return value
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value as Record<string, unknown>))
    out[snakeCase(k)] = verbatim.includes(k) ? v : snakeKeysOfRecord(v, verbatim)
  return out
}
