/**
 * Where a reply stops being JSON, as a byte offset into the reply (UTF-8), so a failed trial can
 * say "not JSON at byte 17" instead of V8's message, which omits the position for some errors.
 */

import {firstBadOffset} from '../util/json.js'

/** Parses `text` as JSON, or returns the byte offset of the first byte that cannot be JSON. */
export function parseJsonOrOffset(
  text: string,
): {ok: true; value: unknown} | {ok: false; offset: number; message: string} {
  try {
    return {ok: true, value: JSON.parse(text)}
  } catch (error) {
    const message = (error as Error).message.split('\n')[0]
    const at = /position (\d+)/.exec(message)
    const chars = at ? Number(at[1]) : firstBadOffset(text)
    return {ok: false, offset: Buffer.byteLength(text.slice(0, chars), 'utf8'), message}
  }
}
