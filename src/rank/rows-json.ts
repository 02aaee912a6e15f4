/**
 * The reranker's JSON request body `{"features": [[x, ...], ...]}` read straight from its bytes
 * into a Float64Array, without JSON.parse's generic objects and one JS array per row. On a
 * 50 x 46 body (20 KB) JSON.parse alone takes about 65 µs, more than the whole endpoint's budget.
 *
 * This is a fast path, not a second JSON parser: it accepts only the exact shape above (JSON
 * whitespace anywhere JSON allows it, numbers or null in the rows, every row `width` long), and
 * only numbers it can convert exactly like JSON.parse: at most 15 significant digits (a mantissa
 * below 10^15 < 2^53) and a decimal exponent within +-22, where mantissa x 10^e or mantissa / 10^-e is one correctly rounded float64
 * operation on exact operands (Clinger 1990, "How to read floating point numbers accurately", the
 * fast path). Anything else (other keys, escapes, 17-digit numbers, true, a short row, malformed
 * JSON) returns FALLBACK, and the caller parses the body with JSON.parse as before, so every answer,
 * error message included, is the same as without this path (property-tested against JSON.parse).
 */

/** The body is not in the fast form: parse it with JSON.parse. */
export const FALLBACK = -1

/** Most significant digits a float64 holds exactly (10^15 < 2^53). */
export const MAX_EXACT_DIGITS = 15
/** 10^22 is the largest power of ten that is exact in float64. */
export const MAX_EXACT_POW10 = 22
const POW10 = Float64Array.from({length: MAX_EXACT_POW10 + 1}, (_, k) => 10 ** k)

const SPACE = 0x20
const TAB = 0x09
const LF = 0x0a
const CR = 0x0d
const COMMA = 0x2c
const MINUS = 0x2d
const PLUS = 0x2b
const DOT = 0x2e
const ZERO = 0x30
const NINE = 0x39
const COLON = 0x3a
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const LOWER_E = 0x65
const UPPER_E = 0x45
const LOWER_N = 0x6e
const LOWER_U = 0x75
const LOWER_L = 0x6c
const KEY = Buffer.from('"features"', 'latin1')

/**
 * Where the rows of `{"features": [...]}` start (the byte after the outer `[`) and where the
 * closing brace is, or undefined when the body does not open and close that way. The last byte
 * that is not whitespace must be the closing brace: every scan of the rows stops at it at the
 * latest (it is no digit, whitespace or separator), so none needs an end-of-body test.
 */
export function rowsFrame(body: Uint8Array): {at: number; last: number} | undefined {
  let end = body.length
  let c = 0
  while (end > 0 && ((c = body[end - 1]) === SPACE || c === LF || c === CR || c === TAB)) end--
  if (end === 0 || body[end - 1] !== CLOSE_BRACE) return undefined
  const last = end - 1
  let i = 0
  // ws { ws "features" ws : ws [
  while ((c = body[i]) <= SPACE && (c === SPACE || c === LF || c === CR || c === TAB)) i++
  if (i >= last || body[i] !== OPEN_BRACE) return undefined
  i++
  while ((c = body[i]) <= SPACE && (c === SPACE || c === LF || c === CR || c === TAB)) i++
  if (i + KEY.length > last) return undefined
  for (let k = 0; k < KEY.length; k++) if (body[i + k] !== KEY[k]) return undefined
  i += KEY.length
  while ((c = body[i]) <= SPACE && (c === SPACE || c === LF || c === CR || c === TAB)) i++
  if (i >= last || body[i] !== COLON) return undefined
  i++
  while ((c = body[i]) <= SPACE && (c === SPACE || c === LF || c === CR || c === TAB)) i++
  if (i >= last || body[i] !== OPEN_BRACKET) return undefined
  return {at: i + 1, last}
}

/**
 * Reads `{"features": [[...], ...]}` from `body` into `out` (row-major, `width` values a row; null
 * becomes NaN, a missing value). Returns the number of rows, or FALLBACK (see above; also when the
 * rows do not fit in `out`).
 */
export function readFeatureRows(body: Uint8Array, width: number, out: Float64Array): number {
  const frame = rowsFrame(body)
  if (frame === undefined) return FALLBACK
  const last = frame.last
  let i = frame.at
  let c = 0
  let n = 0
  let rows = 0
  const capacity = out.length
  for (;;) {
    while ((c = body[i]) <= SPACE && (c === SPACE || c === LF || c === CR || c === TAB)) i++
    if (i >= last || body[i] !== OPEN_BRACKET) return FALLBACK
    i++
    if ((rows + 1) * width > capacity) return FALLBACK
    for (let f = 0; f < width; f++) {
      while ((c = body[i]) <= SPACE && (c === SPACE || c === LF || c === CR || c === TAB)) i++
      if (i >= last) return FALLBACK
      c = body[i]
      if (c === LOWER_N) {
        if (i + 4 > last || body[i + 1] !== LOWER_U || body[i + 2] !== LOWER_L || body[i + 3] !== LOWER_L)
          return FALLBACK
        i += 4
        out[n++] = Number.NaN
      } else {
        const negative = c === MINUS
        if (negative) {
          i++
          if (i >= last) return FALLBACK
          c = body[i]
        }
        if (c < ZERO || c > NINE) return FALLBACK
        let mantissa = 0
        let digits = 0
        let exponent = 0
        if (c === ZERO) {
          // JSON: a leading 0 stands alone
          i++
          c = body[i]
          if (c >= ZERO && c <= NINE) return FALLBACK
        } else {
          while (c >= ZERO && c <= NINE) {
            mantissa = mantissa * 10 + (c - ZERO)
            digits++
            i++
            c = body[i]
          }
        }
        if (c === DOT) {
          i++
          c = body[i]
          if (c < ZERO || c > NINE) return FALLBACK
          while (c >= ZERO && c <= NINE) {
            mantissa = mantissa * 10 + (c - ZERO)
            // leading zeros of the fraction are not significant
            if (mantissa !== 0) digits++
            exponent--
            i++
            c = body[i]
          }
        }
        if (c === LOWER_E || c === UPPER_E) {
          i++
          c = body[i]
          let sign = 1
          if (c === PLUS || c === MINUS) {
            if (c === MINUS) sign = -1
            i++
            c = body[i]
          }
          if (c < ZERO || c > NINE) return FALLBACK
          let e = 0
          while (c >= ZERO && c <= NINE) {
            // beyond this no exact fast path exists anyway; keep e small and finite
            if (e < 10_000) e = e * 10 + (c - ZERO)
            i++
            c = body[i]
          }
          exponent += sign * e
        }
        if (digits > MAX_EXACT_DIGITS) return FALLBACK
        let value: number
        if (mantissa === 0) value = 0
        else if (exponent >= 0 && exponent <= MAX_EXACT_POW10) value = mantissa * POW10[exponent]
        else if (exponent < 0 && exponent >= -MAX_EXACT_POW10) value = mantissa / POW10[-exponent]
        else return FALLBACK
        out[n++] = negative ? -value : value
      }
      while ((c = body[i]) <= SPACE && (c === SPACE || c === LF || c === CR || c === TAB)) i++
      if (i >= last) return FALLBACK
      c = body[i++]
      if (f < width - 1 ? c !== COMMA : c !== CLOSE_BRACKET) return FALLBACK
    }
    rows++
    while ((c = body[i]) <= SPACE && (c === SPACE || c === LF || c === CR || c === TAB)) i++
    if (i >= last) return FALLBACK
    c = body[i++]
    if (c === CLOSE_BRACKET) break
    if (c !== COMMA) return FALLBACK
  }
  while ((c = body[i]) <= SPACE && (c === SPACE || c === LF || c === CR || c === TAB)) i++
  return i === last ? rows : FALLBACK
}

/** Up to this many candidates are ordered by insertion sort (no comparator calls); more by Array.prototype.sort. */
const INSERTION_SORT_MAX = 64

/**
 * Candidate indices best first: higher score first, equal scores in index order, NaN scores (a
 * base term over a missing value) last in index order.
 */
export function bestFirst(scores: Float64Array, order: Int32Array): Int32Array {
  const count = scores.length
  if (count > INSERTION_SORT_MAX) {
    const sorted = Array.from({length: count}, (_, i) => i).sort((a, b) => {
      const x = scores[a]
      const y = scores[b]
      if (x !== x || y !== y) return x !== x ? (y !== y ? a - b : 1) : -1
      return y - x || a - b
    })
    for (let i = 0; i < count; i++) order[i] = sorted[i]
    return order.subarray(0, count)
  }
  // stable insertion sort: an index moves up only past strictly lower scores (NaN counts lowest)
  for (let i = 0; i < count; i++) {
    const s = scores[i]
    let j = i
    if (s === s) {
      while (j > 0) {
        const t = scores[order[j - 1]]
        if (t === t && t >= s) break
        order[j] = order[j - 1]
        j--
      }
    }
    order[j] = i
  }
  return order.subarray(0, count)
}

/**
 * The POST /rerank answer `{"model": VERSION, "scores": [...], "order": [...]}` as JSON text, built
 * without the intermediate arrays and object: the scores as `printedScores` (the module's printing,
 * WasmEnsemble.printScores: the same values, up to 17 digits), or else the same text JSON.stringify
 * gives (a number prints as String(n); NaN and infinities as null).
 */
export function rerankAnswerJson(
  version: string,
  scores: Float64Array,
  order: Int32Array,
  printedScores?: string,
): string {
  let text = `{"model":${JSON.stringify(version)},"scores":[`
  if (printedScores !== undefined) text += printedScores
  else {
    for (let i = 0; i < scores.length; i++) {
      const s = scores[i]
      text += (i === 0 ? '' : ',') + (Number.isFinite(s) ? String(s) : 'null')
    }
  }
  text += '],"order":['
  for (let i = 0; i < order.length; i++) text += (i === 0 ? '' : ',') + order[i]
  return text + ']}'
}
