/**
 * LoCoMo evidence ids name turns as "D<session>:<turn>". A few published ids are malformed:
 * several ids in one string ("D8:6; D9:17"), a stray colon ("D:11:26"), a zero-padded turn
 * ("D30:05"). These are repaired; what still names no turn is counted by the loader.
 */

/** The canonical dia_id form. */
const CANONICAL = /^D(\d+):(\d+)$/

/** Lenient form: "D", optional separators, session digits, a separator, turn digits. */
const LENIENT = /^D\s*[:\-_ ]?\s*(\d+)\s*[:\-_. ]\s*(\d+)$/i

/** Separators between several ids packed in one evidence string. */
const MULTI_SEPARATOR = /[;,]|\s+(?=D)/i

export interface NormalisedEvidence {
  /** Canonical ids ("D8:6"), possibly several from one string. */
  readonly ids: string[]
  /** True when the input was not already canonical (it was repaired). */
  readonly repaired: boolean
  /** Pieces that could not be read as an id at all. */
  readonly unreadable: string[]
}

/** Canonical id of one piece, or undefined. Leading zeros are dropped ("D30:05" -> "D30:5"). */
export function canonicalDiaId(piece: string): string | undefined {
  const m = LENIENT.exec(piece.trim())
  if (!m) return undefined
  return `D${Number(m[1])}:${Number(m[2])}`
}

/** Normalises one evidence string into zero or more canonical ids. */
export function normaliseEvidence(raw: string): NormalisedEvidence {
  const trimmed = raw.trim()
  if (CANONICAL.test(trimmed) && canonicalDiaId(trimmed) === trimmed)
    return {ids: [trimmed], repaired: false, unreadable: []}
  const ids: string[] = []
  const unreadable: string[] = []
  for (const piece of trimmed.split(MULTI_SEPARATOR)) {
    if (piece.trim() === '') continue
    const id = canonicalDiaId(piece)
    if (id === undefined) unreadable.push(piece.trim())
    else ids.push(id)
  }
  return {ids, repaired: true, unreadable}
}
