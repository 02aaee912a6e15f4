import {describe, expect, it} from 'vitest'
import {describeValue} from '../../src/util/errors.js'

describe('describeValue', () => {
  it('shows a value as its JSON text, cut at 40 characters, as before', () => {
    const values: unknown[] = [
      1,
      'abc',
      null,
      true,
      [1, 2],
      {a: 1, b: [null, 'x']},
      [Infinity],
      [undefined, () => 1],
      {u: undefined, f: () => 1, k: 2},
      new Date(0),
      'x'.repeat(100),
      Array.from({length: 500}, (_, i) => i),
      Object.fromEntries(Array.from({length: 300}, (_, i) => [`key${i}`, i])),
      {s: 'é\u0000\ud83d\ude00'.repeat(30)},
      new Float64Array([1.5, 2]),
    ]
    for (const v of values) {
      const full = JSON.stringify(v)
      expect(describeValue(v), full).toBe(full.length > 40 ? `${full.slice(0, 37)}...` : full)
    }
    expect(describeValue(undefined)).toBe('nothing')
    expect(describeValue(Number.NaN)).toBe('NaN')
  })

  it('says what a number beyond float64 became (JSON.parse reads 1e400 as Infinity; its JSON would be null)', () => {
    expect(describeValue(JSON.parse('1e400'))).toBe("Infinity (a number beyond float64's range)")
    expect(describeValue(-Infinity)).toBe("-Infinity (a number beyond float64's range)")
  })

  it('never overflows the stack, whatever the value: deep nesting, a cycle, a BigInt', () => {
    // the body of a hostile request: JSON.parse reads it, JSON.stringify of it overflows the stack
    const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`) as unknown
    expect(() => JSON.stringify(deep)).toThrow(RangeError)
    expect(describeValue(deep)).toBe(`${'['.repeat(37)}...`)
    expect(describeValue({features: deep})).toBe(`{"features":${'['.repeat(25)}...`)
    const cycle: Record<string, unknown> = {a: 1}
    cycle.self = cycle
    expect(describeValue(cycle)).toBe('{"a":1,"self":{"a":1,"self":{"a":1,"s...')
    expect(describeValue(12n)).toBe('12n')
    expect(describeValue({n: 12n})).toBe('an object')
  })
})
