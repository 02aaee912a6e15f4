/**
 * A tenant acknowledged as created survives a power loss (review S#6): the new folder's entry in the
 * tenants' folder is flushed, not only the log and the tenant's own folder.
 */
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it, vi} from 'vitest'

// every fsync, with the path its fd was opened on (test/helpers/fs-calls.ts)
vi.mock('node:fs', async (importOriginal) =>
  (await import('../helpers/fs-calls.js')).recordingFs(await importOriginal()),
)

const {fsCalls} = await import('../helpers/fs-calls.js')
const {openTenant} = await import('../../src/online/library.js')

describe('creating a tenant', () => {
  it('flushes the log, the tenant folder and then the tenants folder that names it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-create-durable-'))
    try {
      fsCalls.length = 0
      const t = openTenant({dir, tenant: 'acme', create: {seed: 1}})
      const created = fsCalls.filter((c) => c.startsWith('fsync ')).map((c) => c.slice('fsync '.length))
      await t.close()
      const log = created.indexOf(join(dir, 'acme', 'log.jsonl'))
      const folder = created.indexOf(join(dir, 'acme'))
      const parent = created.indexOf(dir)
      expect(log).toBeGreaterThanOrEqual(0)
      expect(folder).toBeGreaterThan(log)
      expect(parent, `fsyncs: ${created.join(', ')}`).toBeGreaterThan(folder)
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
