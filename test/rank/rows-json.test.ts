import fc from 'fast-check'
import {describe, expect, it} from 'vitest'
import {FALLBACK, bestFirst, readFeatureRows, rerankAnswerJson} from '../../src/rank/rows-json.js'
import {Rng} from '../../src/util/rng.js'
import {readChecked, viaJsonParse, wasmReader} from './rows-reference.js'

let accepted = 0
let acceptedWasmOnly = 0
/**
 * What a reader accepts, JSON.parse reads alike: the JS reader, and the WebAssembly reader, which
 * accepts everything the JS reader does (with the same values) and more (up to 19 digits, by
 * Eisel-Lemire).
 */
function check(text: string, width: number, capacity = 10_000): void {
  const out = new Float64Array(capacity)
  const bytes = Buffer.from(text, 'utf8')
  const rows = readFeatureRows(bytes, width, out)
  const wasm = wasmReader(width)
  const wasmRows = wasm.readJsonRows(bytes, Math.floor(capacity / width))
  if (rows !== FALLBACK) expect(wasmRows, `wasm reader vs JS reader on ${text.slice(0, 200)}`).toBe(rows)
  if (wasmRows === FALLBACK) return // the caller parses it with JSON.parse: same answer by construction
  const expected = viaJsonParse(text, width)
  expect(expected, `a reader accepted what JSON.parse refuses: ${text.slice(0, 200)}`).toBeDefined()
  expect(wasmRows * width).toBe(expected!.length)
  const wasmOut = wasm.input(wasmRows)
  for (let i = 0; i < expected!.length; i++) {
    if (!Object.is(wasmOut[i], expected![i]))
      expect({i, text: text.slice(0, 300), wasm: wasmOut[i]}).toEqual({i, text: text.slice(0, 300), wasm: expected![i]})
    if (rows !== FALLBACK && !Object.is(out[i], expected![i]))
      expect({i, text: text.slice(0, 300), js: out[i]}).toEqual({i, text: text.slice(0, 300), js: expected![i]})
  }
  if (rows === FALLBACK) acceptedWasmOnly++
  else accepted++
}

const ws = fc.constantFrom('', ' ', '\n', '\t', '\r\n  ')
/** Numbers as a client would print them: shortest round-trip, fixed decimals, exponents, long digit strings. */
const numberText = fc.oneof(
  {arbitrary: fc.integer({min: -1000, max: 1000}).map((k) => String(k / 64)), weight: 6},
  fc.double().map((v) => (Number.isFinite(v) ? String(v) : 'null')),
  fc.tuple(fc.double({min: -1e6, max: 1e6, noNaN: true}), fc.integer({min: 0, max: 12})).map(([v, d]) => v.toFixed(d)),
  fc
    .tuple(
      fc.integer({min: -999999, max: 999999}),
      fc.integer({min: -30, max: 30}),
      fc.constantFrom('e', 'E', 'e+', 'E-'),
    )
    .map(([m, e, x]) => `${m}${x}${x.endsWith('-') ? Math.abs(e) : e}`),
  fc.stringMatching(/^-?(0|[1-9]\d{0,20})(\.\d{1,20})?([eE][+-]?\d{1,3})?$/),
  fc.constantFrom(
    '0',
    '-0',
    '-0.0',
    '0.0000',
    '1e22',
    '1e23',
    '123456789012345',
    '1234567890123456',
    '0.1',
    '9007199254740993',
    '1e-22',
    '4.9e-324',
    'null',
  ),
)

describe('readFeatureRows', () => {
  it('reads exactly what JSON.parse reads, or falls back (random bodies of client-printed numbers)', () => {
    accepted = 0
    fc.assert(
      fc.property(
        fc.integer({min: 1, max: 5}),
        fc.integer({min: 1, max: 6}),
        fc.array(numberText, {minLength: 30, maxLength: 30}),
        ws,
        ws,
        ws,
        (width, count, numbers, w1, w2, w3) => {
          const rows = Array.from(
            {length: count},
            (_, r) =>
              `[${w1}${Array.from({length: width}, (_, f) => numbers[(r * width + f) % numbers.length]).join(`${w2},${w3}`)}${w2}]`,
          )
          check(`${w1}{${w2}"features"${w3}:${w1}[${rows.join(`${w3},${w1}`)}]${w2}}${w3}`, width)
        },
      ),
      {numRuns: 1500, seed: 42},
    )
    // the property must exercise the fast paths, not only the fallback
    expect(accepted).toBeGreaterThan(300)
    expect(acceptedWasmOnly).toBeGreaterThan(100)
  })

  it('never accepts a body JSON.parse refuses or reads differently (random corruptions)', () => {
    accepted = 0
    const base = '{"features": [[1.5, -0, null], [2e3, 0.125, -7]]}'
    fc.assert(
      fc.property(
        fc.integer({min: 0, max: base.length - 1}),
        fc.constantFrom(
          '',
          '0',
          '-',
          '.',
          'e',
          ',',
          ']',
          '[',
          '"',
          '}',
          ' ',
          'x',
          'nul',
          '01',
          '+1',
          '1.',
          '.5',
          'true',
        ),
        fc.integer({min: 0, max: 2}),
        (at, insert, drop) => {
          check(base.slice(0, at) + insert + base.slice(at + drop), 3)
        },
      ),
      {numRuns: 2000, seed: 42},
    )
    expect(accepted).toBeGreaterThan(100)
  })

  it('reads full-precision doubles (shortest round-trip, up to 17 digits, any exponent) exactly like JSON.parse in the WebAssembly reader', () => {
    acceptedWasmOnly = 0
    const anyDouble = fc.double({noNaN: true, noDefaultInfinity: true}).map((v) => String(v))
    const digitString = fc
      .tuple(fc.stringMatching(/^[1-9]\d{0,18}$/), fc.integer({min: -360, max: 330}))
      .map(([d, e]) => `${d}e${e}`)
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            anyDouble,
            digitString,
            fc.constantFrom(
              '9007199254740993',
              '2.2250738585072014e-308',
              '1.7976931348623157e308',
              '4.9e-324',
              '1e23',
              '0.30000000000000004',
              '4503599627370496.5',
            ),
          ),
          {minLength: 12, maxLength: 12},
        ),
        (numbers) => {
          check(
            `{"features":[[${numbers.slice(0, 4).join(',')}],[${numbers.slice(4, 8).join(',')}],[${numbers.slice(8).join(',')}]]}`,
            4,
          )
        },
      ),
      {numRuns: 3000, seed: 42},
    )
    expect(acceptedWasmOnly).toBeGreaterThan(300)
  })

  it('reads the common form exactly and falls back on everything outside it', () => {
    const out = new Float64Array(100)
    expect(readFeatureRows(Buffer.from('{"features":[[1,2.5,null],[-0,1e-3,123456.789]]}'), 3, out)).toBe(2)
    expect(Array.from(out.subarray(0, 6))).toEqual([1, 2.5, Number.NaN, -0, 0.001, 123456.789])
    for (const text of [
      '{"features":[[1,2]]}', // short row (width 3)
      '{"features":[]}', // no rows: JSON.parse path answers 400
      '{"features":[[1,2,3]],"model":"x"}', // another key
      '{"model":"x","features":[[1,2,3]]}',
      '{"feat\\u0075res":[[1,2,3]]}', // an escaped key
      '{"features":[[1,2,3.14159265358979323]]}', // 18 significant digits
      '{"features":[[1,2,1e400]]}',
      '{"features":[[1,2,true]]}',
      '{"features":[[1,2,3]]} x',
      '\ufeff{"features":[[1,2,3]]}',
    ])
      expect(readFeatureRows(Buffer.from(text), 3, out), text).toBe(FALLBACK)
    expect(readFeatureRows(Buffer.from('{"features":[[1,2,3],[4,5,6]]}'), 3, new Float64Array(5))).toBe(FALLBACK) // rows beyond the buffer
  })
})

describe('the /rerank answer', () => {
  it('orders best first (ties by index, NaN last) like a comparator sort, by insertion for small counts and by sort for large ones', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom(0, -0, 1, 1, -1, Number.NaN, Number.POSITIVE_INFINITY), fc.double()), {
          maxLength: 150,
        }),
        (values) => {
          const scores = Float64Array.from(values)
          const expected = Array.from({length: values.length}, (_, i) => i)
          const key = (i: number): number => (Number.isNaN(scores[i]) ? Number.NEGATIVE_INFINITY : scores[i])
          // reference: an explicit stable sort on (NaN-last score, index)
          expected.sort((a, b) =>
            Number.isNaN(scores[a]) !== Number.isNaN(scores[b])
              ? Number.isNaN(scores[a])
                ? 1
                : -1
              : key(b) > key(a)
                ? 1
                : key(b) < key(a)
                  ? -1
                  : a - b,
          )
          expect(Array.from(bestFirst(scores, new Int32Array(values.length)))).toEqual(expected)
        },
      ),
      {numRuns: 500, seed: 42},
    )
  })

  it('prints exactly what JSON.stringify prints', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.array(fc.oneof(fc.constantFrom(-0, Number.NaN, Number.POSITIVE_INFINITY, 1e21, 1e-7), fc.double()), {
          maxLength: 60,
        }),
        (version, values) => {
          const scores = Float64Array.from(values)
          const order = bestFirst(scores, new Int32Array(values.length))
          expect(rerankAnswerJson(version, scores, order)).toBe(
            JSON.stringify({model: version, scores: Array.from(scores), order: Array.from(order)}),
          )
        },
      ),
      {numRuns: 300, seed: 42},
    )
  })
})

describe('the compact rows reader (WebAssembly SIMD, the form JSON.stringify prints)', () => {
  const checkWasm = readChecked
  /** Numbers as JSON.stringify prints them, 1 to 17 digits, signs, leading zeros of a fraction, exponents (which the compact reader leaves to the general one). */
  const compactNumber = fc.oneof(
    {
      arbitrary: fc
        .tuple(fc.integer({min: -99999999, max: 99999999}), fc.integer({min: 0, max: 9}))
        .map(([m, d]) => String(m / 10 ** d)),
      weight: 12,
    },
    {
      arbitrary: fc
        .tuple(fc.double({min: -1e6, max: 1e6, noNaN: true}), fc.integer({min: 0, max: 10}))
        .map(([v, d]) => String(Number(v.toFixed(d)))),
      weight: 12,
    },
    {arbitrary: fc.stringMatching(/^-?(0|[1-9]\d{0,15})(\.\d{1,15})?$/), weight: 1},
    {arbitrary: fc.double({noNaN: true, noDefaultInfinity: true}).map(String), weight: 1},
    {
      arbitrary: fc.constantFrom(
        '0',
        '-0',
        '0.5',
        '-0.5',
        '1',
        '123456789012345',
        '1234567890123456',
        '0.00000001',
        '12345678.9',
        '1234567.8',
        '9.99999999',
        '-99999999',
        '0.12345678901234',
        '-0.1234567890123',
      ),
      weight: 2,
    },
  )

  it('reads compact bodies exactly like JSON.parse at every alignment, width and length (1 to 17 digits, signs, block boundaries, the body end)', () => {
    const seen = {compact: 0, long: 0, general: 0, fallback: 0}
    fc.assert(
      fc.property(
        fc.integer({min: 1, max: 9}),
        fc.integer({min: 1, max: 7}),
        fc.array(compactNumber, {minLength: 1, maxLength: 63}),
        fc.integer({min: 0, max: 70}),
        (width, count, numbers, pad) => {
          const rows = Array.from(
            {length: count},
            (_, r) => `[${Array.from({length: width}, (_, f) => numbers[(r * width + f) % numbers.length]).join(',')}]`,
          )
          // whitespace before the rows moves them against the reader's 16- and 64-byte blocks
          seen[checkWasm(`{"features":${' '.repeat(pad)}[${rows.join(',')}]}`, width)]++
        },
      ),
      {numRuns: 2500, seed: 42},
    )
    expect(seen.compact).toBeGreaterThan(500)
    expect(seen.general).toBeGreaterThan(200)
  })

  it('takes the compact reader for client-printed bodies (6 decimals, negatives, short values, more than 8 separators in a 64-byte block)', () => {
    const rng = new Rng(3)
    for (const [width, value] of [
      [46, () => String(Number(rng.next().toFixed(6)))],
      [46, () => String(Number((2 * rng.next() - 1).toFixed(6)))],
      [5, () => String(Math.floor(rng.next() * 10))],
      [3, () => String(Number((1000 * rng.next()).toFixed(8)))],
      [7, () => (rng.next() < 0.5 ? '-0' : '0')],
    ] as const) {
      for (const count of [1, 2, 50, 64]) {
        const text = `{"features":[${Array.from({length: count}, () => `[${Array.from({length: width}, value).join(',')}]`).join(',')}]}`
        expect(checkWasm(text, width), text.slice(0, 100)).toBe('compact')
      }
    }
  })

  it('never accepts a compact body JSON.parse refuses or reads differently (random corruptions, separators left behind by a longer body)', () => {
    const seen = {compact: 0, long: 0, general: 0, fallback: 0}
    const base = '{"features":[[1.5,-0,0.25,7],[20,0.125,-7.5,-0.001],[3,4,5,6]]}'
    const long = `{"features":[${Array.from({length: 40}, () => '[1,2,3,4]').join(',')}]}`
    fc.assert(
      fc.property(
        fc.integer({min: 0, max: base.length - 1}),
        fc.constantFrom(
          '',
          '0',
          '-',
          '.',
          'e',
          'E1',
          ',',
          ']',
          '[',
          '"',
          '}',
          ' ',
          '\u0000',
          'x',
          'nul',
          '01',
          '-01',
          '00',
          '+1',
          '1.',
          '.5',
          '1.2.3',
          '--1',
          '9999999999999999',
          '0.',
          'true',
          '[1,2,3,4]',
          '],[',
        ),
        fc.integer({min: 0, max: 3}),
        (at, insert, drop) => {
          checkWasm(long, 4)
          seen[checkWasm(base.slice(0, at) + insert + base.slice(at + drop), 4)]++
        },
      ),
      {numRuns: 3000, seed: 42},
    )
    expect(seen.compact).toBeGreaterThan(100)
    expect(seen.fallback).toBeGreaterThan(1000)
  })

  it('reads whitespace before values and rows (", " as Python prints, newlines, up to 16 bytes and more) exactly like JSON.parse', () => {
    const seen = {compact: 0, long: 0, general: 0, fallback: 0}
    let withWhitespace = 0
    const gap = fc.constantFrom(
      '',
      '',
      ' ',
      ' ',
      '\n',
      '\t',
      '\r\n',
      ' '.repeat(15),
      ' '.repeat(16),
      ' '.repeat(17),
      '\u000b',
      '\u0000',
      '\u00a0',
    )
    fc.assert(
      fc.property(
        fc.integer({min: 1, max: 6}),
        fc.integer({min: 1, max: 5}),
        fc.array(compactNumber, {minLength: 1, maxLength: 30}),
        fc.array(gap, {minLength: 1, maxLength: 40}),
        fc.integer({min: 0, max: 64}),
        (width, count, numbers, gaps, pad) => {
          let g = 0
          const ws = (): string => gaps[g++ % gaps.length]
          const rows = Array.from(
            {length: count},
            (_, r) =>
              `${ws()}[${Array.from({length: width}, (_, f) => ws() + numbers[(r * width + f) % numbers.length]).join(',')}]`,
          )
          const text = `{"features": ${' '.repeat(pad)}[${rows.join(',')}]}`
          const reader = checkWasm(text, width)
          seen[reader]++
          if (reader === 'compact' && /\[\s|,\s/.test(text)) withWhitespace++
        },
      ),
      {numRuns: 2500, seed: 42},
    )
    expect(withWhitespace).toBeGreaterThan(150)
    expect(seen.general).toBeGreaterThan(300)
    const rng = new Rng(4)
    const python = `{"features": [${Array.from({length: 50}, () => `[${Array.from({length: 46}, () => String(Number(rng.next().toFixed(6)))).join(', ')}]`).join(', ')}]}`
    expect(checkWasm(python, 46)).toBe('compact')
  })

  it('answers rows beyond maxRows, a short or long row, and no rows as the general reader does', () => {
    const body = JSON.stringify({
      features: [
        [1, 2],
        [3, 4],
        [5, 6],
      ],
    })
    expect(checkWasm(body, 2, 3)).toBe('compact')
    expect(checkWasm(body, 2, 2)).toBe('fallback')
    for (const text of [
      '{"features":[[1,2],[3]]}',
      '{"features":[[1,2],[3,4,5]]}',
      '{"features":[]}',
      '{"features":[[]]}',
      '{"features":[[1,2]],"x":1}',
      '{"features":[[1,2]]]}',
      '{"features":[[1,2],]}',
    ])
      expect(checkWasm(text, 2), text).toBe('fallback')
  })
})
