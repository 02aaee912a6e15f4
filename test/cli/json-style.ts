/** Whether a JSON key follows kt's style (snake_case; digits, `@`, `.` and `-` allowed in data-like keys). */
export function isSnakeKey(key: string): boolean {
  return !/[A-Z]/.test(key)
}

/** Paths of keys in a JSON value that break kt's snake_case style. */
export function nonSnakeKeys(value: unknown, path = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((v) => nonSnakeKeys(v, `${path}[]`))
  if (value === null || typeof value !== 'object') return []
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => [
    ...(isSnakeKey(k) ? [] : [`${path}.${k}`]),
    ...nonSnakeKeys(v, `${path}.${k}`),
  ])
}
