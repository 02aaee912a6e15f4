/**
 * Where a reply stops being JSON, as a byte offset into the reply (UTF-8), so a failed trial can
 * say "not JSON at byte 17" instead of V8's message, which omits the position for some errors.
 */

/** Parses `text` as JSON, or returns the byte offset of the first byte that cannot be JSON. */
export function parseJsonOrOffset(text: string): {ok: true; value: unknown} | {ok: false; offset: number; message: string} {
  try {
    return {ok: true, value: JSON.parse(text)}
  } catch (error) {
    const message = (error as Error).message.split('\n')[0]
    const at = /position (\d+)/.exec(message)
    const chars = at ? Number(at[1]) : firstBadChar(text)
    return {ok: false, offset: Buffer.byteLength(text.slice(0, chars), 'utf8'), message}
  }
}

/**
 * The smallest prefix that fails for a reason other than ending early is the one ending at the
 * first bad character (every shorter prefix is either valid JSON or a valid start of JSON). An
 * input that only ever ends early is bad at its end.
 */
function firstBadChar(text: string): number {
  const badAt = (n: number): boolean => {
    try {
      JSON.parse(text.slice(0, n))
      return false
    } catch (error) {
      return !/end of JSON input/.test((error as Error).message)
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
