/**
 * Seeded pseudo-random numbers. Everything random in kt draws from an Rng built from an explicit
 * seed, so the same seed and inputs give the same report.
 *
 * Generator: xoshiro128** (Blackman & Vigna, 2018), state seeded through splitmix32 so that
 * nearby integer seeds give unrelated streams.
 */
/** The one default seed of every kt command and library entry (`--seed`). */
export const DEFAULT_SEED = 42

/** A copy of an Rng's state (Rng.snapshot). */
export interface RngState {
  readonly s0: number
  readonly s1: number
  readonly s2: number
  readonly s3: number
  readonly spareNormal: number | undefined
}

export class Rng {
  private s0: number
  private s1: number
  private s2: number
  private s3: number
  /** The second normal of the last polar draw, valid while hasSpare (a plain double: V8 stores it unboxed). */
  private spare = 0
  private hasSpare = false

  constructor(seed: number) {
    let x = (Math.trunc(seed) ^ 0x9e3779b9) >>> 0
    const next = (): number => {
      // splitmix32
      x = (x + 0x9e3779b9) >>> 0
      let z = x
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
      return (z ^ (z >>> 16)) >>> 0
    }
    this.s0 = next() | 0
    this.s1 = next() | 0
    this.s2 = next() | 0
    this.s3 = next() | 0
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1
  }

  /** The state from four draws of `source` (never all zero), no spare normal: a stream reseeded without allocating. */
  reseed(source: {nextU32(): number}): this {
    this.s0 = source.nextU32() | 0
    this.s1 = source.nextU32() | 0
    this.s2 = source.nextU32() | 0
    this.s3 = source.nextU32() | 0
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1
    this.hasSpare = false
    return this
  }

  /**
   * A uniform 32-bit unsigned integer. The state words are int32 (`| 0`, shifts, imul), which V8
   * keeps as small integers, not boxed doubles (test/util/rng.test.ts pins the sequence).
   */
  nextU32(): number {
    const s1 = this.s1
    const m = Math.imul(s1, 5)
    const result = Math.imul((m << 7) | (m >>> 25), 9)
    const t = s1 << 9
    const s2 = this.s2 ^ this.s0
    const s3 = this.s3 ^ s1
    this.s1 = s1 ^ s2
    this.s0 ^= s3
    this.s2 = s2 ^ t
    this.s3 = (s3 << 11) | (s3 >>> 21)
    return result >>> 0
  }

  /** The generator's whole state (a copy), to go back to with restore(). */
  snapshot(): RngState {
    return {s0: this.s0, s1: this.s1, s2: this.s2, s3: this.s3, spareNormal: this.hasSpare ? this.spare : undefined}
  }

  /** Goes back to a state snapshot() took: the same draws follow as followed it then. */
  restore(state: RngState): void {
    this.s0 = state.s0
    this.s1 = state.s1
    this.s2 = state.s2
    this.s3 = state.s3
    this.hasSpare = state.spareNormal !== undefined
    this.spare = state.spareNormal ?? 0
  }

  /** Uniform in [0, 1) with 53 random bits. */
  next(): number {
    const hi = this.nextU32() >>> 5 // 27 bits
    const lo = this.nextU32() >>> 6 // 26 bits
    return (hi * 67108864 + lo) / 9007199254740992
  }

  uniform(low: number, high: number): number {
    return low + (high - low) * this.next()
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n)
  }

  /** Standard normal (Marsaglia polar method). */
  normal(mean = 0, sd = 1): number {
    if (this.hasSpare) {
      this.hasSpare = false
      return mean + sd * this.spare
    }
    let u: number, v: number, s: number
    do {
      u = 2 * this.next() - 1
      v = 2 * this.next() - 1
      s = u * u + v * v
    } while (s >= 1 || s === 0)
    const f = Math.sqrt((-2 * Math.log(s)) / s)
    this.spare = v * f
    this.hasSpare = true
    return mean + sd * u * f
  }

  /** Gamma(shape, 1) by Marsaglia & Tsang (2000); shape < 1 via the boost x * U^(1/shape). */
  gamma(shape: number): number {
    if (!(shape > 0)) throw new RangeError(`gamma shape must be > 0, got ${shape}`)
    if (shape < 1) return this.gamma(shape + 1) * Math.pow(this.next(), 1 / shape)
    const d = shape - 1 / 3
    const c = 1 / Math.sqrt(9 * d)
    for (;;) {
      let x: number, v: number
      do {
        x = this.normal()
        v = 1 + c * x
      } while (v <= 0)
      v = v * v * v
      const u = this.next()
      if (u < 1 - 0.0331 * x * x * x * x) return d * v
      if (Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v
    }
  }

  beta(a: number, b: number): number {
    const x = this.gamma(a)
    const y = this.gamma(b)
    return x / (x + y)
  }

  /** A draw from Dirichlet(alpha), written into `out` if given. */
  dirichlet(alpha: ArrayLike<number>, out: Float64Array = new Float64Array(alpha.length)): Float64Array {
    let sum = 0
    for (let i = 0; i < alpha.length; i++) {
      out[i] = this.gamma(alpha[i])
      sum += out[i]
    }
    for (let i = 0; i < alpha.length; i++) out[i] /= sum
    return out
  }

  /** Fisher-Yates shuffle in place. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1)
      const t = items[i]
      items[i] = items[j]
      items[j] = t
    }
    return items
  }

  /** A child generator whose stream depends on this seed and a label, for independent sub-streams. */
  fork(label: string): Rng {
    return new Rng((this.nextU32() ^ hashString(label)) >>> 0)
  }
}

/** FNV-1a 32-bit hash of a string (Fowler, Noll, Vo). */
export function hashString(text: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h >>> 0
}
