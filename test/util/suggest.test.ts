import {describe, expect, it} from 'vitest'
import {closest, damerauLevenshtein, didYouMean} from '../../src/util/suggest.js'
import {InputError, escapeControls, oneLine} from '../../src/util/errors.js'
import {failureLine} from '../../src/cli/failure.js'
import {depthExceededAt, lineColumn, parseJsonText} from '../../src/util/json.js'

describe('did you mean', () => {
  it('Damerau-Levenshtein distance: known values', () => {
    expect(damerauLevenshtein('', 'abc')).toBe(3)
    expect(damerauLevenshtein('kitten', 'sitting')).toBe(3)
    expect(damerauLevenshtein('retreival', 'retrieval')).toBe(1) // one swap
    expect(damerauLevenshtein('ca', 'abc')).toBe(3) // optimal string alignment, not unrestricted
    expect(damerauLevenshtein('search', 'search')).toBe(0)
  })

  it('suggests a close word and nothing for a far one', () => {
    expect(closest('retreival', ['branin', 'retrieval', 'module'])).toBe('retrieval')
    expect(closest('serch', ['search', 'study', 'run'])).toBe('search')
    expect(closest('xyz', ['search', 'run'])).toBeUndefined()
    expect(didYouMean('bohbb', ['grid', 'random', 'bohb'])).toBe(' (did you mean "bohb"?)')
  })

  it('an InputError about a choice names the closest one', () => {
    expect(new InputError('--objective', 'one of branin, retrieval', '"retreival"').message).toBe(
      '--objective: expected one of branin, retrieval, got "retreival" (did you mean "retrieval"?)',
    )
  })
})

describe('one clean line', () => {
  it('escapes control characters and folds line breaks', () => {
    expect(escapeControls('a\u001b[2Jb\u0000\u2028')).toBe('a\\x1b[2Jb\\x00\\u2028')
    expect(oneLine('first\n  second\r\nthird')).toBe('first second third')
    expect(new InputError('f.jsonl:2', 'JSON', 'x\ny\u0007').message).toBe('f.jsonl:2: expected JSON, got x\\ny\\x07')
  })

  it('any other error is an internal error, exit 3, one line', () => {
    const {line, exitCode} = failureLine(new TypeError('x.toFixed is not a function\n    at foo'))
    expect(exitCode).toBe(3)
    expect(line).toBe(
      'internal error (a bug in kt; KT_DEBUG=1 prints the stack): TypeError: x.toFixed is not a function at foo',
    )
    expect(failureLine(new InputError('a', 'b')).exitCode).toBe(2)
  })
})

describe('the JSON reader', () => {
  it('finds nesting past the limit without recursion, skipping brackets in strings', () => {
    expect(depthExceededAt('[[["[[[["]]]', 3)).toBeUndefined()
    expect(depthExceededAt('[[[[]]]]', 3)).toBe(3)
    expect(depthExceededAt('{"a":"\\"[[[["}', 1)).toBeUndefined()
    expect(depthExceededAt('['.repeat(1_000_000))).toBe(256)
  })

  it('drops a byte-order mark; names line and column of a syntax error', () => {
    expect(parseJsonText('f.json', '\uFEFF{"a": 1}')).toEqual({a: 1})
    expect(() => parseJsonText('f.json', '{\n  "a": 1,\n  oops\n}')).toThrow(
      /^f\.json:3:3: expected valid JSON \(.*\), got "o"$/,
    )
    expect(() => parseJsonText('f.json', '{"a": ')).toThrow(
      /^f\.json:1:7: expected valid JSON \(.*\), got the end of the text$/,
    )
    expect(lineColumn('ab\ncd', 4)).toEqual({line: 2, column: 2})
  })
})
