import fc from 'fast-check'
import {describe, expect, it} from 'vitest'
import {Rng} from '../../src/util/rng.js'
import {readChecked, readCheckedAgainstGeneral, type Reader} from './rows-reference.js'

/**
 * The long rows reader (WebAssembly SIMD + Eisel-Lemire, src/rank/wasm.ts readLong): full-precision
 * doubles read exactly as JSON.parse reads them, bit for bit, or left to the general reader.
 */

const read = readChecked

/** `count` rows of `width` values from `numbers` (cycled), after `pad` spaces (which move them against the reader's 16- and 64-byte blocks). */
function body(numbers: string[], width: number, count: number, pad = 0, sep = ','): string {
  const rows = Array.from(
    {length: count},
    (_, r) => `[${Array.from({length: width}, (_, f) => numbers[(r * width + f) % numbers.length]).join(sep)}]`,
  )
  return `{"features":${' '.repeat(pad)}[${rows.join(sep)}]}`
}

const bits = new Float64Array(1)
const words = new BigUint64Array(bits.buffer)
/** The double with these 64 bits. */
const fromBits = (b: bigint): number => {
  words[0] = BigInt.asUintN(64, b)
  return bits[0]
}

/** The 64 bits of a double. */
const toBits = (x: number): bigint => {
  bits[0] = x
  return words[0]
}

/** The exact decimal text of n x 2^e (n a positive BigInt), as digits with a '.' where needed. */
function exactDecimal(n: bigint, e: number): string {
  if (e >= 0) return String(n << BigInt(e))
  const digits = String(n * 5n ** BigInt(-e))
  const point = digits.length + e
  return point > 0 ? `${digits.slice(0, point)}.${digits.slice(point)}` : `0.${'0'.repeat(-point)}${digits}`
}

/** Significands of normal doubles: 2^52 <= m < 2^53. */
const significand = fc.bigInt({min: 1n << 52n, max: (1n << 53n) - 1n})

/** Full-precision numbers as clients print them, and the cases where correct rounding is hard. */
const longNumber = fc.oneof(
  // String(x) of any double: random bit patterns (subnormals, huge and tiny exponents, both signs)
  {
    arbitrary: fc
      .bigInt({min: 0n, max: (1n << 64n) - 1n})
      .map((b) => fromBits(b))
      .filter(Number.isFinite)
      .map(String),
    weight: 6,
  },
  // what a client sends most: uniform [0, 1) and [-1, 1) at full precision
  {arbitrary: fc.double({min: 0, max: 1, noNaN: true}).map(String), weight: 4},
  {arbitrary: fc.double({min: -1, max: 1, noNaN: true}).map(String), weight: 2},
  // 17 to 19 significant digits with a '.' anywhere and exponents of both signs, e/E, +/-
  {
    arbitrary: fc
      .tuple(
        fc.stringMatching(/^[1-9]\d{16,18}$/),
        fc.integer({min: 0, max: 19}),
        fc.constantFrom('', 'e', 'E', 'e+', 'e-', 'E-'),
        fc.integer({min: 0, max: 330}),
        fc.boolean(),
      )
      .map(([digits, at, marker, exponent, minus]) => {
        const point = at === 0 || at >= digits.length ? digits : `${digits.slice(0, at)}.${digits.slice(at)}`
        return `${minus ? '-' : ''}${point}${marker === '' ? '' : `${marker}${exponent}`}`
      }),
    weight: 4,
  },
  // exactly halfway between two doubles (round to even), and one unit in the last place either side
  {
    arbitrary: fc
      .tuple(significand, fc.integer({min: -6, max: 11}), fc.constantFrom(-1n, 0n, 1n))
      .map(([m, e, nudge]) => {
        const text = exactDecimal(2n * m + 1n, e - 1)
        if (nudge === 0n) return text
        // the same digits with the last one moved by one: just off halfway
        const last = Number(text[text.length - 1])
        const moved = Math.min(9, Math.max(0, last + Number(nudge)))
        return text.slice(0, -1) + String(moved)
      }),
    weight: 3,
  },
  // the doubles next to powers of ten, and powers of ten written long
  {
    arbitrary: fc
      .tuple(fc.integer({min: -320, max: 308}), fc.constantFrom(-1n, 0n, 1n))
      .map(([k, step]) => String(fromBits(toBits(Number(`1e${k}`)) + step))),
    weight: 2,
  },
  {
    arbitrary: fc
      .tuple(fc.integer({min: 1, max: 18}), fc.integer({min: -30, max: 30}))
      .map(([zeros, k]) => `1${'0'.repeat(zeros)}e${k}`),
    weight: 1,
  },
  // leading zeros of a fraction (0.00000123...: up to 6 as String prints, more as %f would)
  {
    arbitrary: fc
      .tuple(fc.integer({min: 1, max: 12}), fc.stringMatching(/^[1-9]\d{15,16}$/))
      .map(([zeros, digits]) => `0.${'0'.repeat(zeros)}${digits}`),
    weight: 2,
  },
  {
    arbitrary: fc.constantFrom(
      '9007199254740993',
      '9007199254740992.5',
      '4503599627370496.5',
      '1e23',
      '8.98846567431158e307',
      '1.7976931348623157e308',
      '1.7976931348623158e308',
      '1.7976931348623159e308',
      '2.2250738585072014e-308',
      '2.2250738585072011e-308',
      '4.9e-324',
      '0.30000000000000004',
      '-0.0',
      '0.000',
      '0e999',
      '-0E-5',
      '1.2345678901234567e-7',
      '1.2345678901234567e-07',
      '123456789012345678e-5',
      '9999999999999999999',
      '10000000000000000000',
      '0.1',
      '7',
    ),
    weight: 2,
  },
)

describe('the long rows reader (full-precision doubles, WebAssembly SIMD + Eisel-Lemire)', () => {
  it('reads full-precision doubles bit for bit like JSON.parse at every alignment (random bit patterns, halfway cases, powers of ten, 17-19 digits, exponents), or leaves them to the general reader', () => {
    const seen: Record<Reader, number> = {compact: 0, long: 0, general: 0, fallback: 0}
    let halfway = 0
    fc.assert(
      fc.property(
        fc.integer({min: 1, max: 9}),
        fc.integer({min: 1, max: 5}),
        fc.array(longNumber, {minLength: 1, maxLength: 40}),
        fc.integer({min: 0, max: 70}),
        (width, count, numbers, pad) => {
          // the first value decides which reader tries (a short one goes to the compact reader): make it long
          const first = '0.12345678901234568'
          seen[read(body([first, ...numbers], width, count, pad), width)]++
        },
      ),
      {numRuns: 2500, seed: 42},
    )
    // a body of nothing but halfway values next to each other, each read on its own
    fc.assert(
      fc.property(
        fc.array(fc.tuple(significand, fc.integer({min: -4, max: 11})), {minLength: 4, maxLength: 4}),
        (cases) => {
          const numbers = cases
            .map(([m, e]) => exactDecimal(2n * m + 1n, e - 1))
            .filter((t) => t.replace(/^0\.0*|\./g, '').length <= 19)
          if (numbers.length === 0) return
          const reader = read(body(['0.12345678901234568', ...numbers], numbers.length + 1, 1), numbers.length + 1)
          expect(reader).toBe('long')
          halfway++
        },
      ),
      {numRuns: 1000, seed: 42},
    )
    expect(seen.long).toBeGreaterThan(900)
    expect(seen.general + seen.fallback).toBeGreaterThan(100)
    expect(halfway).toBeGreaterThan(500)
  })

  it('takes the long reader for JSON.stringify and Python bodies of full-precision doubles (50 x 46, with ", " and exponents)', () => {
    const rng = new Rng(5)
    const values = (): number[][] =>
      Array.from({length: 50}, () =>
        Array.from({length: 46}, () => rng.next() * (rng.next() < 0.1 ? 1e-7 : 1) * (rng.next() < 0.3 ? -1 : 1)),
      )
    for (let k = 0; k < 5; k++) {
      const rows = values()
      expect(read(JSON.stringify({features: rows}), 46)).toBe('long')
      // Python's json.dumps: ", " separators, repr's two-digit exponents (1.2345678901234567e-08)
      const python = `{"features": [${rows.map((row) => `[${row.map((v) => String(v).replace(/e([+-])(\d)$/, 'e$10$2')).join(', ')}]`).join(', ')}]}`
      expect(read(python, 46)).toBe('long')
    }
  })

  it('never accepts a long body JSON.parse refuses or reads differently (random corruptions)', () => {
    const seen: Record<Reader, number> = {compact: 0, long: 0, general: 0, fallback: 0}
    const base =
      '{"features":[[0.12345678901234568,-0.9876543210987654,1.2345678901234567e-7,3],[12345.678901234567,-0,0.000012345678901234567,4.5E+21]]}'
    fc.assert(
      fc.property(
        fc.integer({min: 0, max: base.length - 1}),
        fc.constantFrom(
          '',
          '0',
          '00',
          '-',
          '+',
          '.',
          '..',
          'e',
          'E',
          'e+',
          'e-',
          'E1',
          ',',
          ']',
          '[',
          '"',
          '}',
          ' ',
          '\u0000',
          'x',
          'null',
          '01',
          '-01',
          '1.',
          '.5',
          '1.2.3',
          '--1',
          '1e5e5',
          '9999999999999999999999',
          '1234567890.123456789012',
          '0.',
          'true',
          '],[',
          '\t',
        ),
        fc.integer({min: 0, max: 3}),
        (at, insert, drop) => {
          seen[read(base.slice(0, at) + insert + base.slice(at + drop), 4)]++
        },
      ),
      {numRuns: 3000, seed: 42},
    )
    expect(seen.long).toBeGreaterThan(100)
    expect(seen.fallback).toBeGreaterThan(1000)
  })

  it('reads whitespace runs of any length before values exactly (a run of 16 or more once made the SIMD readers jump into a long value and read its tail)', () => {
    const seen: Record<Reader, number> = {compact: 0, long: 0, general: 0, fallback: 0}
    fc.assert(
      fc.property(
        fc.constantFrom('1', '0.12345678901234568'),
        fc.array(fc.tuple(fc.integer({min: 0, max: 40}), longNumber), {minLength: 1, maxLength: 8}),
        (first, values) => {
          const text = `{"features":[[${first},${values.map(([gap, v]) => ' '.repeat(gap) + v).join(',')}]]}`
          seen[read(text, values.length + 1)]++
        },
      ),
      {numRuns: 1500, seed: 42},
    )
    expect(seen.compact + seen.long).toBeGreaterThan(40)
  })

  it('leaves to the general reader what it cannot read exactly: more than 19 digits, subnormal and infinite results, values longer than 31 bytes', () => {
    const wide = (value: string): string => body(['0.12345678901234568', value], 2, 1)
    for (const value of [
      '0.12345678901234567891',
      '4.9e-324',
      '2.225073858507201e-308',
      '1e400',
      '1.7976931348623159e308',
      '0.00000000000000000000000000001234',
      '1e-400',
      'nul',
      'nulll',
      'Null',
      'nulL',
      '-null',
      'null0',
      'nan',
      'NaN',
    ])
      expect(read(wide(value), 2), value).not.toBe('long')
    for (const value of [
      '0.1234567890123456789',
      '1.7976931348623157e308',
      '2.2250738585072014e-308',
      '1e-300',
      '0e-400',
      '-0.0000e+0',
      'null',
      '1234567890123456.7',
      '-123456789012345678.9',
      '12345678901234567.25',
    ])
      expect(read(wide(value), 2), value).toBe('long')
  })

  it('reads null (a missing value) as the general reader does, to the bit (its NaN), anywhere in a full-precision body, leading nulls included', () => {
    const seen: Record<Reader, number> = {compact: 0, long: 0, general: 0, fallback: 0}
    const value = fc.oneof({arbitrary: longNumber, weight: 3}, {arbitrary: fc.constant('null'), weight: 2})
    fc.assert(
      fc.property(
        fc.integer({min: 1, max: 9}),
        fc.integer({min: 1, max: 4}),
        fc.integer({min: 0, max: 3}),
        fc.array(value, {minLength: 1, maxLength: 30}),
        fc.integer({min: 0, max: 40}),
        fc.constantFrom(',', ', ', ',\n  '),
        (width, count, nulls, numbers, pad, sep) => {
          // up to `nulls` nulls first: the reader is chosen by the first value that is not null
          const values = [...Array.from({length: nulls}, () => 'null'), '0.12345678901234568', ...numbers]
          seen[readCheckedAgainstGeneral(body(values, width, count, pad, sep), width)]++
        },
      ),
      {numRuns: 1500, seed: 42},
    )
    expect(seen.long).toBeGreaterThan(700)
    // rows of nothing but null, and null last in a row and in the body
    expect(
      readCheckedAgainstGeneral(
        '{"features":[[0.12345678901234568,null],[null,null],[null,-1.2345678901234567e-8]]}',
        2,
      ),
    ).toBe('long')
    expect(readCheckedAgainstGeneral('{"features":[[null, 0.12345678901234568, null]]}', 3)).toBe('long')
  })
})
