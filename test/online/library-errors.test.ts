import {describe, expect, it} from 'vitest'
import {readFileSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {kt, tempDir} from './helpers.js'
import {openTenant, OnlineError, type TenantSpec} from '../../src/online/index.js'
import {MAX_PRIOR_STRENGTH} from '../../src/online/prior.js'

/** The OnlineError `fn` throws (or rejects with); fails the test for anything else. */
async function refusal(fn: () => unknown): Promise<OnlineError> {
  try {
    await fn()
  } catch (error) {
    expect(error, String(error)).toBeInstanceOf(OnlineError)
    return error as OnlineError
  }
  throw new Error('expected a refusal, got none')
}

describe('kt/online library: every refusal is an OnlineError with a code (README "As a library")', () => {
  it('a bad spec, an unusable folder and a closed tenant are OnlineErrors, each with its code', async () => {
    const dir = tempDir()
    try {
      const levels = await refusal(() => openTenant({dir, tenant: 'a', create: {levels: 99}}))
      expect(levels.code).toBe('bad_request')
      expect(levels.message).toMatch(/levels: expected an integer in 2\.\.\d+, got 99/)
      expect((await refusal(() => openTenant({dir, tenant: '../x'}))).code).toBe('bad_request')
      // a folder that cannot be made (a file stands where it should be): the disk, not the request
      writeFileSync(join(dir, 'file'), 'x')
      const storage = await refusal(() => openTenant({dir: join(dir, 'file'), tenant: 'a', create: {}}))
      expect(storage.code).toBe('storage_failed')
      expect(storage.retry).toBe(false)

      const tenant = openTenant({dir, tenant: 'a', create: {levels: 2}})
      await tenant.choose({})
      await tenant.close()
      await tenant.close() // twice is harmless
      expect((await refusal(() => tenant.choose({}))).code).toBe('tenant_closed')
      expect((await refusal(() => tenant.feedback({query_id: '1', used: true}))).code).toBe('tenant_closed')
      expect((await refusal(() => tenant.status())).code).toBe('tenant_closed')
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })

  it('a tenant log changed on disk is state_damaged (the message names the file for the operator)', async () => {
    const dir = tempDir()
    try {
      const tenant = openTenant({dir, tenant: 'a', create: {levels: 2, seed: 42}})
      await tenant.choose({})
      await tenant.close()
      const log = join(dir, 'a', 'log.jsonl')
      const text = readFileSync(log, 'utf8')
      expect(text).toContain('"seed":42')
      writeFileSync(log, text.replace('"seed":42', '"seed":43'))
      const damaged = await refusal(() => openTenant({dir, tenant: 'a'}))
      expect(damaged.code).toBe('state_damaged')
      expect(damaged.message).toContain(log)
      expect(damaged.message).toMatch(/chained checksum/)
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })

  it('refuses a prior strength beyond MAX_PRIOR_STRENGTH, an empty tuned list, and says a seed of 1e400 is Infinity', async () => {
    const dir = tempDir()
    try {
      const spec = (s: TenantSpec) => refusal(() => openTenant({dir, tenant: 'a', create: s}))
      const huge = await spec({prior_strength: 1e308})
      expect(huge.code).toBe('bad_request')
      expect(huge.message).toMatch(
        new RegExp(`prior_strength: expected an integer in 0\\.\\.${MAX_PRIOR_STRENGTH} .*, got 1e\\+308`),
      )
      expect((await spec({prior_strength: MAX_PRIOR_STRENGTH + 1})).message).toMatch(/prior_strength/)
      expect((await spec({tuned: []})).message).toMatch(
        /tuned: expected a non-empty array of parameter names, got \[\]/,
      )
      expect((await spec({seed: JSON.parse('1e400') as number})).message).toMatch(
        /seed: expected an integer in 0\.\.2\^32-1, got Infinity \(a number beyond float64's range\)/,
      )
      // the bound itself is accepted
      const strong = openTenant({dir, tenant: 'b', create: {prior_strength: MAX_PRIOR_STRENGTH}})
      expect(strong.status().settings.prior_strength).toBe(MAX_PRIOR_STRENGTH)
      await strong.close()
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })

  it('kt online init --prior-strength 10^20: one line naming the flag, exit 2', () => {
    const dir = tempDir()
    try {
      const r = kt(['online', 'init', '--tenant', 'a', '--dir', dir, '--prior-strength', '100000000000000000000'])
      expect(r.status, r.stderr).toBe(2)
      expect(r.stderr.trim().split('\n')).toHaveLength(1)
      expect(r.stderr).toMatch(/--prior-strength: expected an integer in 0\.\.100000000/)
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
