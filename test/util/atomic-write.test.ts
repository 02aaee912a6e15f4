import {mkdtempSync, readFileSync, readdirSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it, vi} from 'vitest'

// every fsync and rename writeFileAtomic makes, in order (test/helpers/fs-calls.ts)
vi.mock('node:fs', async (importOriginal) =>
  (await import('../helpers/fs-calls.js')).recordingFs(await importOriginal()),
)

const {fsCalls: calls} = await import('../helpers/fs-calls.js')
const {writeFileAtomic} = await import('../../src/util/fs.js')

afterEach(() => {
  calls.length = 0
})

describe('writeFileAtomic survives a power loss, not only kill -9', () => {
  it('flushes the temporary file before the rename and the folder after it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-atomic-'))
    const target = join(dir, 'index.json')
    writeFileAtomic(target, '{"a": 1}\n')
    const tmp = join(dir, `.index.json.${process.pid}.tmp`)
    expect(calls).toEqual([`fsync ${tmp}`, `rename ${tmp} -> ${target}`, `fsync ${dir}`])
    expect(readFileSync(target, 'utf8')).toBe('{"a": 1}\n')
    expect(readdirSync(dir)).toEqual(['index.json'])
  })

  it('durable: false renames without flushing (for files rebuilt when damaged, e.g. a tenant snapshot)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-atomic-'))
    const target = join(dir, 'state.json')
    writeFileAtomic(target, '{}\n', undefined, {durable: false})
    const tmp = join(dir, `.state.json.${process.pid}.tmp`)
    expect(calls).toEqual([`rename ${tmp} -> ${target}`])
    expect(readFileSync(target, 'utf8')).toBe('{}\n')
  })

  it('keeps the mode it is asked for, and replaces a file whole', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-atomic-'))
    const target = join(dir, 'active.sh')
    writeFileAtomic(target, 'x'.repeat(100_000), 0o755)
    writeFileAtomic(target, new TextEncoder().encode('echo ok\n'), 0o755)
    expect(readFileSync(target, 'utf8')).toBe('echo ok\n')
    expect(statSync(target).mode & 0o111).not.toBe(0)
  })
})
