import {describe, expect, it} from 'vitest'
import {redactDeep, redactPasswords} from '../../src/util/redact.js'
import {failureLine} from '../../src/cli/failure.js'
import {InputError} from '../../src/util/errors.js'

describe('redactPasswords: the one rule for secrets in output', () => {
  it('replaces the password of any URL with credentials, keeps the user, host and the rest', () => {
    expect(redactPasswords('postgresql://u:SECRET@db.example:5432/kt?sslmode=require')).toBe(
      'postgresql://u:***@db.example:5432/kt?sslmode=require',
    )
    expect(redactPasswords('copied to postgres://kt:p%40ss@127.0.0.1/x and https://a:b@h/')).toBe(
      'copied to postgres://kt:***@127.0.0.1/x and https://a:***@h/',
    )
    for (const same of [
      'postgresql://u@h/db',
      'postgresql://u:PASSWORD@h/db',
      'no url: a:b@c',
      'file.sqlite',
      'http://h:8080/p',
    ])
      expect(redactPasswords(same)).toBe(same)
  })

  it('reaches every string of a --json result, keys included, without touching the input', () => {
    const input = {storage: 'postgresql://u:S@h/d', nested: [{note: 'at postgresql://u:S@h/d'}], n: 1, ok: true}
    expect(JSON.stringify(redactDeep(input))).not.toContain(':S@')
    expect(redactDeep(input)).toEqual({
      storage: 'postgresql://u:***@h/d',
      nested: [{note: 'at postgresql://u:***@h/d'}],
      n: 1,
      ok: true,
    })
    expect(input.storage).toBe('postgresql://u:S@h/d')
  })

  it('applies to failure lines, whatever error carries the URL', () => {
    expect(failureLine(new InputError('postgresql://u:S@h/d: study x', 'an existing study', 'none')).line).toBe(
      'postgresql://u:***@h/d: study x: expected an existing study, got none',
    )
    expect(failureLine(new Error('connect postgresql://u:S@h/d failed')).line).not.toContain(':S@')
  })
})
