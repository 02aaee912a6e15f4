/**
 * A tenant acknowledged as created survives a power loss (review S#6): the new folder's entry in the
 * tenants' folder is flushed, not only the log and the tenant's own folder.
 */
import {mkdtempSync, rmSync} from 'node:fs'
import * as fs from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it, vi} from 'vitest'

// every fsync, with the path its fd was opened on
const fsyncs: string[] = []
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>()
  const names = new Map<number, string>()
  return {
    ...real,
    openSync: (path: fs.PathLike, ...rest: never[]) => {
      const fd = (real.openSync as (...a: unknown[]) => number)(path, ...rest)
      names.set(fd, String(path))
      return fd
    },
    fsyncSync: (fd: number) => {
      fsyncs.push(names.get(fd) ?? '?')
      return real.fsyncSync(fd)
    },
  }
})

const {openTenant} = await import('../../src/online/library.js')

describe('creating a tenant', () => {
  it('flushes the log, the tenant folder and then the tenants folder that names it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-create-durable-'))
    try {
      fsyncs.length = 0
      const t = openTenant({dir, tenant: 'acme', create: {seed: 1}})
      const created = [...fsyncs]
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
