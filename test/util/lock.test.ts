import {describe, expect, it} from 'vitest'
import {spawn} from 'node:child_process'
import {existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {acquireDirLock, releaseDirLock, removeStaleTemps, withDirLock} from '../../src/util/lock.js'
import {processStartTime} from '../../src/util/proc.js'
import {InputError} from '../../src/util/errors.js'

const CHILD = fileURLToPath(new URL('./lock-child.ts', import.meta.url))
const OPTIONS = {expected: 'a thing nobody else has open', subject: 'thing t'}

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'kt-lock-'))
}

function runChild(dir: string, increments: number, mode: 'lock' | 'none'): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir, String(increments), mode], {
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`child exit ${code}: ${stderr}`))))
  })
}

describe('the shared folder lock (src/util/lock.ts)', () => {
  it('serialises read-modify-writes of several processes: no increment is lost', async () => {
    const dir = tempDir()
    const processes = 4
    const increments = 25
    await Promise.all(Array.from({length: processes}, () => runChild(dir, increments, 'lock')))
    expect(Number(readFileSync(join(dir, 'counter'), 'utf8'))).toBe(processes * increments)
    expect(readdirSync(dir)).toEqual(['counter']) // no lock, no lock temp files, no write temps
  })

  it('writes "pid start-time token" in one step, is refused a second time in this process, and releases on a throw', () => {
    const dir = tempDir()
    acquireDirLock(dir, OPTIONS)
    expect(readFileSync(join(dir, 'lock'), 'utf8')).toMatch(
      new RegExp(`^${process.pid} ${processStartTime(process.pid)} [0-9a-f]{16}\n$`),
    )
    expect(() => acquireDirLock(`${dir}//.`, {...OPTIONS, waitMs: 0})).toThrow(
      /lock: expected a thing nobody else has open, got already open in this process$/,
    )
    releaseDirLock(dir)
    releaseDirLock(dir) // a second release is a no-op
    expect(existsSync(join(dir, 'lock'))).toBe(false)
    expect(() =>
      withDirLock(dir, OPTIONS, () => {
        throw new Error('boom')
      }),
    ).toThrow('boom')
    expect(readdirSync(dir)).toEqual([])
    expect(withDirLock(dir, OPTIONS, () => 7)).toBe(7)
  })

  it("takes over a dead process's lock but waits for, then names, a live holder (one line, InputError)", () => {
    const dir = tempDir()
    writeFileSync(join(dir, 'lock'), '999999999\n')
    withDirLock(dir, OPTIONS, () => undefined)
    expect(existsSync(join(dir, 'lock'))).toBe(false)
    const line = `${process.ppid} ${processStartTime(process.ppid)} 00ff\n`
    writeFileSync(join(dir, 'lock'), line)
    let error: unknown
    try {
      acquireDirLock(dir, {...OPTIONS, waitMs: 20})
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(InputError)
    expect((error as Error).message).toBe(
      `${join(dir, 'lock')}: expected a thing nobody else has open (waited 20 ms), got held by pid ${process.ppid}`,
    )
    expect(readFileSync(join(dir, 'lock'), 'utf8')).toBe(line)
  })

  it('recovers from a process killed in the middle of a takeover (its lock.takeover left behind), but not from a live one', () => {
    const dir = tempDir()
    // both files name dead processes (pid 999999999 cannot exist; the kill -9 campaign of kt online serve left exactly this)
    writeFileSync(join(dir, 'lock'), '999999998 1 aa\n')
    writeFileSync(join(dir, 'lock.takeover'), '999999999 1 bb\n')
    withDirLock(dir, {...OPTIONS, waitMs: 20}, () => undefined)
    expect(readdirSync(dir)).toEqual([])
    // a live process's takeover lock is respected: the dead lock stays until it finishes
    writeFileSync(join(dir, 'lock'), '999999998 1 aa\n')
    const live = `${process.ppid} ${processStartTime(process.ppid)} cc\n`
    writeFileSync(join(dir, 'lock.takeover'), live)
    expect(() => acquireDirLock(dir, {...OPTIONS, waitMs: 20})).toThrow(InputError)
    expect(readFileSync(join(dir, 'lock.takeover'), 'utf8')).toBe(live)
  })

  it('removes the stale temp files a killed atomic write left for the files it guards, and nothing else', () => {
    const dir = tempDir()
    const names = [
      '.state.json.4242.tmp',
      '.state.json.1.tmp',
      '.v3.json.77.tmp',
      '.registry.json.9.tmp',
      '.lock.123.1.tmp',
      'state.json',
      '.state.json.x.tmp',
      'v3.json',
    ]
    for (const name of names) writeFileSync(join(dir, name), '')
    expect(removeStaleTemps(dir, 'state.json').sort()).toEqual(['.state.json.1.tmp', '.state.json.4242.tmp'])
    expect(removeStaleTemps(dir, /^(registry\.json|v\d+\.json)$/).sort()).toEqual([
      '.registry.json.9.tmp',
      '.v3.json.77.tmp',
    ])
    expect(readdirSync(dir).sort()).toEqual(['.lock.123.1.tmp', '.state.json.x.tmp', 'state.json', 'v3.json'])
  })
})
