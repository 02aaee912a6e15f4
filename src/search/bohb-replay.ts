/**
 * BOHB's replay hints: what a model-based ask stores with its trial (askHint) so that a copy told
 * the same history repeats the ask (replayAsk) cheaply and ends bit-identical to the asker.
 * - Format BOHB_HINT_FORMAT ({pick, v, s0..s3, n?, x<j>?, h}): the Rng's state after the ask (n: a
 *   spare normal) and a 53-bit check h over the format, space, fidelity and options, the trial id,
 *   a running digest of every result told before the ask (every bit, in order), the Rng's state
 *   before the candidates and after, the pick and every bit of the kept vector. The copy makes the
 *   ask's cheap draws itself (the random-fraction draw), then, instead of fitting the good KDE and
 *   drawing the candidates, encodes the stored configuration (coordinates that do not encode back
 *   exactly travel in x<j>) and takes the hint's state only if the check computed from its OWN
 *   state, results, options and that vector equals h. O(1) in the candidates. The state cannot be
 *   checked by drawing, so the check binds it to everything the copy knows: a hint of another row,
 *   study, seed, option set or result history, or damaged in any field, is not taken. What the
 *   check cannot see is another kt whose draws differ under the same format, hence the rule on
 *   BOHB_HINT_FORMAT (a golden test pins the hints).
 * - Format 1 ({pick}; a BOHB_HINT_FORMAT hint keeps pick, so an older kt replays it this way) and
 *   format 2 (format 3's fields, its check not binding the results, so its state is not trusted):
 *   the copy draws the same candidates, skips their scoring, and keeps the pick's candidate only if
 *   it decodes to the stored configuration.
 * - Anything else (no hint, an unknown format, a field of the wrong type, a failed check, a pick
 *   that does not reproduce the configuration): the ask is re-scored in full. A bad hint costs
 *   time, never exactness; the runner's replay check (same id, budget and configuration) still
 *   catches a history this optimiser would not have made.
 */
import type {Config} from '../space/index.js'
import type {Rng, RngState} from '../util/rng.js'
import type {Encoding} from './encoding.js'
import type {AskHint, TrialResult} from './types.js'

/**
 * The format of a model-based ask's replay hint that carries the generator's state (field `v`;
 * see above). A replica adopts that state without drawing, so
 * the number names the draws as well as the fields: bump it whenever what an ask draws changes
 * (candidate sampling, their number or order, the random-fraction draw). A hint of any other
 * format, or none, is not trusted for the state (test/search/bohb-golden.test.ts pins the
 * hints of this format and fails, asking for the bump, when they change).
 */
export const BOHB_HINT_FORMAT = 3

/**
 * Format 2 (an earlier kt): the same fields, but its check did not bind the
 * results the copy had been told, so a store whose results were altered would still replay every
 * hint. Such hints are replayed as format 1 (drawing the candidates from the copy's own KDEs),
 * which does see the results: slower than format 3, as exact.
 */
const UNBOUND_STATE_HINT_FORMAT = 2

/** A BOHB_HINT_FORMAT hint as replayAsk read it. */
export interface StateHint {
  readonly pick: number
  readonly after: RngState
  readonly check: number
  /** Coordinates of the kept vector that its configuration does not encode back to (x<j> fields). */
  readonly coordinates?: ReadonlyArray<readonly [number, number]>
  readonly hint?: AskHint
}

/**
 * What replayAsk may use of a stored hint, while it runs: the stored configuration and what the
 * hint offers, a pick to draw up to (format 1) or the generator's state after the ask
 * (BOHB_HINT_FORMAT), or nothing (re-score).
 */
export interface ReplayRequest {
  readonly config: Config
  readonly pick?: number
  readonly state?: StateHint
}

/** A state hint's fields besides the coordinates (x<j>); any other field makes it unknown. */
const HINT_FIELDS = new Set(['pick', 'v', 's0', 's1', 's2', 's3', 'n', 'h'])
const COORDINATE_FIELD = /^x(0|[1-9][0-9]{0,5})$/

/**
 * The hint side of one BOHB optimiser: the fingerprint of its format, space, fidelity and options,
 * the digest of the results it was told, and the count of replayed asks by how they were replayed.
 */
export class ReplayHints {
  /**
   * A running, order-sensitive digest of every tell (trial id, the asks before it, status, loss and
   * objective values, every bit), O(1) per tell: what a state hint's check binds the results to.
   * Results draw nothing from the generator, so without it a copy told other results would still
   * adopt the hints' states (and reproduce every stored trial) where re-scoring would not.
   */
  private readonly told = new Hash53(0)
  /**
   * Replayed model-based asks: restored from their hint's state without drawing, drawn up to the
   * hint's pick without scoring (format 1), or re-scored in full (a hint that was missing in
   * form, of an unknown format, or did not reproduce its configuration).
   */
  readonly replayCounts = {restored: 0, drawn: 0, rejected: 0}

  /** @param fingerprint what a state hint's check covers besides the ask: the format, space, fidelity and options. */
  constructor(private readonly fingerprint: number) {}

  /** Folds one tell into the digest of results (`told`), as observe() would read it and every bit of it. */
  noteTell(trialId: number, asked: number, result: TrialResult): void {
    const h = this.told
    h.word(trialId)
    h.word(asked)
    if (result.status !== 'ok') {
      h.word(0)
      return
    }
    h.word(1)
    if (result.loss === undefined) h.word(0)
    else {
      h.word(1)
      h.double(result.loss)
    }
    if (result.values === undefined) h.word(-1)
    else {
      h.word(result.values.length)
      for (const v of result.values) h.double(v)
    }
  }

  /**
   * What replayAsk may use of a stored hint: a format 1 hint ({pick} alone, as every kt before
   * BOHB_HINT_FORMAT stored) its pick; a BOHB_HINT_FORMAT hint whose fields all have their types
   * its state (checked against the ask when it is replayed); anything else nothing.
   */
  read(hint: unknown, config: Config, numSamples: number, size: number): ReplayRequest | undefined {
    if (typeof hint !== 'object' || hint === null) return undefined
    const h = hint as Record<string, unknown>
    const pick = h.pick
    if (!(typeof pick === 'number' && Number.isInteger(pick) && pick >= 0 && pick < numSamples)) return undefined
    // format 1, and format 2 whose check does not bind the results: replayed by drawing
    if (h.v === undefined || h.v === UNBOUND_STATE_HINT_FORMAT) return {config, pick}
    if (h.v !== BOHB_HINT_FORMAT) return undefined
    const word = (x: unknown): x is number => typeof x === 'number' && (x | 0) === x
    const {s0, s1, s2, s3, n, h: check} = h
    if (
      !word(s0) ||
      !word(s1) ||
      !word(s2) ||
      !word(s3) ||
      !(n === undefined || (typeof n === 'number' && Number.isFinite(n)))
    )
      return undefined
    if (!(typeof check === 'number' && Number.isSafeInteger(check) && check >= 0)) return undefined
    let coordinates: Array<[number, number]> | undefined
    for (const key in h) {
      if (HINT_FIELDS.has(key)) continue
      const j = COORDINATE_FIELD.test(key) ? Number(key.slice(1)) : -1
      const x = h[key]
      if (!(j >= 0 && j < size && typeof x === 'number' && Number.isFinite(x))) return undefined
      ;(coordinates ??= []).push([j, x])
    }
    return {config, state: {pick, after: {s0, s1, s2, s3, spareNormal: n}, check, coordinates, hint: hint as AskHint}}
  }

  /**
   * The hint of a model-based ask that drew its candidates from `before` and keeps `vector`: the
   * generator's state now and a check binding it to the ask (check). A vector that its own
   * configuration does not encode back to bit for bit gets a format 1 hint (the pick alone): a
   * replica could not rebuild it from the stored configuration.
   */
  stateHint(
    rng: Rng,
    encoding: Encoding,
    trialId: number,
    pick: number,
    before: RngState,
    vector: Float64Array,
  ): AskHint {
    const after = rng.snapshot()
    const hint: Record<string, number> = {
      pick,
      v: BOHB_HINT_FORMAT,
      s0: after.s0,
      s1: after.s1,
      s2: after.s2,
      s3: after.s3,
    }
    if (after.spareNormal !== undefined) hint.n = after.spareNormal
    // Coordinates the configuration does not encode back to exactly (a simplex group's, now and
    // then) travel in the hint; a -0 would not survive JSON, so its ask keeps the pick alone.
    const again = encoding.encode(encoding.decode(vector))
    for (let j = 0; j < vector.length; j++) {
      if (Object.is(again[j], vector[j])) continue
      if (Object.is(vector[j], -0)) return {pick}
      hint[`x${j}`] = vector[j]
    }
    hint.h = this.check(trialId, pick, before, after, vector)
    return hint
  }

  /**
   * A replica's side of a state hint: the stored configuration's vector (with the coordinates the
   * hint carries), with the generator set to the hint's state, if the hint's check holds for this
   * replica's own state before the ask, its own options and that vector; undefined (nothing
   * changed) otherwise.
   */
  restore(
    rng: Rng,
    encoding: Encoding,
    trialId: number,
    state: StateHint,
    config: Config,
    before: RngState,
  ): Float64Array | undefined {
    let vector: Float64Array
    try {
      vector = encoding.encode(config, 'replayed configuration', true)
    } catch {
      return undefined
    }
    if (state.coordinates) for (const [j, x] of state.coordinates) vector[j] = x
    if (this.check(trialId, state.pick, before, state.after, vector) !== state.check) return undefined
    rng.restore(state.after)
    return vector
  }

  /**
   * 53 bits binding a state hint to its ask: the hint's format, space, fidelity and options
   * (fingerprint), the trial id, the digest of every result told so far (told), the generator's
   * state before and after the candidates, the pick and every bit of the kept vector. A replica
   * adopts the state only when its own values give the same check, so a hint of another row,
   * study, seed, option set or result history, or damaged in any field, is not taken (a chance of
   * 2^-53 for a random change).
   */
  private check(trialId: number, pick: number, before: RngState, after: RngState, vector: Float64Array): number {
    const h = new Hash53(this.fingerprint)
    h.word(trialId)
    const told = this.told.digest()
    h.word(told >>> 0)
    h.word(Math.floor(told / 4294967296))
    h.word(pick)
    for (const s of [before, after]) {
      h.word(s.s0)
      h.word(s.s1)
      h.word(s.s2)
      h.word(s.s3)
      if (s.spareNormal === undefined) h.word(0)
      else {
        h.word(1)
        h.double(s.spareNormal)
      }
    }
    for (let j = 0; j < vector.length; j++) h.double(vector[j])
    return h.digest()
  }
}

const doubleBits = new Float64Array(1)
const doubleWords = new Int32Array(doubleBits.buffer)

/**
 * Two 32-bit lanes fed int32 words, folded into 53 bits by cyrb53's finaliser (bryc, public
 * domain). cyrb53's own update (h = imul(h ^ w, k)) moves a difference only towards the high bits,
 * so for whole 32-bit words an even number of sign flips (say, negated losses) cancelled out; each
 * lane here mixes every word into all bits (lane 1: MurmurHash3's x86_32 block step, Appleby,
 * public domain; lane 2: multiply, then xorshift), and every step is a bijection of the lane, so
 * two histories that differ in one word always differ in the state.
 */
class Hash53 {
  private h1: number
  private h2: number

  constructor(seed: number) {
    this.h1 = 0xdeadbeef ^ (seed | 0)
    this.h2 = 0x41c6ce57 ^ ((seed / 4294967296) | 0)
  }

  word(w: number): void {
    let k = Math.imul(w, 0xcc9e2d51)
    k = Math.imul((k << 15) | (k >>> 17), 0x1b873593)
    const h1 = this.h1 ^ k
    this.h1 = (Math.imul((h1 << 13) | (h1 >>> 19), 5) + 0xe6546b64) | 0
    const h2 = Math.imul(this.h2 ^ w, 1597334677)
    this.h2 = h2 ^ (h2 >>> 15)
  }

  /** Every bit of a double (so -0 and 0 differ). */
  double(x: number): void {
    doubleBits[0] = x
    this.word(doubleWords[0])
    this.word(doubleWords[1])
  }

  digest(): number {
    let h1 = this.h1
    let h2 = this.h2
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
    return 4294967296 * (2097151 & h2) + (h1 >>> 0)
  }
}

/** A string's Hash53 digest (one word per UTF-16 code unit). */
export function hashText(text: string): number {
  const h = new Hash53(0)
  for (let i = 0; i < text.length; i++) h.word(text.charCodeAt(i))
  return h.digest()
}

/** Whether `stored` holds every value of `decoded` (it may hold more: parameters fixed outside the search). */
export function sameConfig(decoded: Config, stored: Config): boolean {
  for (const k in decoded) if (decoded[k] !== stored[k]) return false
  return true
}
