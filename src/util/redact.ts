/**
 * The one redaction of secrets in kt's output: the password of any URL with credentials
 * (`postgresql://user:PASSWORD@host/db` becomes `postgresql://user:***@host/db`). Every command's
 * printed lines, --json output and failure line go through it (src/cli/base.ts, src/cli/failure.ts).
 */

/**
 * scheme://user:password@ (RFC 3986 userinfo: no '/', '@' or whitespace inside); the placeholder
 * PASSWORD that help and error texts show is left as it is.
 */
const URL_PASSWORD = /\b([A-Za-z][A-Za-z0-9+.-]*:\/\/[^:@/\s]*):(?!PASSWORD@)[^@/\s]+@/g

/** `text` with every URL password replaced by ***. */
export function redactPasswords(text: string): string {
  return text.includes('://') ? text.replace(URL_PASSWORD, '$1:***@') : text
}

/** A JSON-like value with redactPasswords applied to every string in it (keys included); a new value, the input untouched. */
export function redactDeep(value: unknown): unknown {
  if (typeof value === 'string') return redactPasswords(value)
  if (Array.isArray(value)) return value.map(redactDeep)
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[redactPasswords(k)] = redactDeep(v)
    return out
  }
  return value
}
