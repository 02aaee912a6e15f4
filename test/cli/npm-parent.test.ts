// `npx kt ... &` then `kill -9 $!` kills npm, not kt: kt notices that the npm that started it is
// gone and stops (src/cli/npm-parent.ts). npm is stood in for by a node process titled as npm
// titles itself ("npm exec ..."), which starts kt through `sh -c` as npm does.
import {afterAll, describe, expect, it} from 'vitest'
import {spawn} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {packageRoot} from '../../src/util/paths.js'

const dir = mkdtempSync(join(tmpdir(), 'kt-npm-parent-'))
let ktPid: number | undefined

/** Whether `pid` is a live process (a zombie waiting to be reaped has ended). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return false
  }
}

afterAll(() => {
  if (ktPid !== undefined && alive(ktPid)) process.kill(ktPid, 'SIGKILL')
  rmSync(dir, {recursive: true, force: true})
})

describe.skipIf(process.platform !== 'linux')('kt started by npm', () => {
  it('stops (as on SIGTERM) within seconds of its npm being killed with kill -9', async () => {
    const kt = `"${process.execPath}" "${join(packageRoot, 'bin', 'kt.js')}" online serve --port 0 --dir "${join(dir, 'tenants')}" --registry "${join(dir, 'registry')}" --json`
    // npm's own title, long enough not to be cut (Linux keeps a title within the original arguments' space)
    const fakeNpm = `process.title = 'npm exec kt online serve'; require('node:child_process').spawn('sh', ['-c', ${JSON.stringify(kt)}], {stdio: 'inherit'}); setInterval(() => {}, 1000) /* ${'x'.repeat(100)} */`
    const env: NodeJS.ProcessEnv = {...process.env, KT_NO_PROGRESS: '1'}
    delete env.NODE_ENV
    const npm = spawn(process.execPath, ['-e', fakeNpm], {stdio: ['ignore', 'pipe', 'pipe'], env})
    let stdout = ''
    let stderr = ''
    npm.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    const listening = await new Promise<{pid: number}>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`kt did not start: ${stderr}`)), 30_000)
      npm.stdout.on('data', (d: Buffer) => {
        stdout += d.toString()
        if (stdout.includes('\n')) {
          clearTimeout(timer)
          resolve(JSON.parse(stdout.split('\n')[0]) as {pid: number})
        }
      })
    })
    ktPid = listening.pid
    expect(readFileSync(`/proc/${npm.pid}/cmdline`, 'utf8')).toMatch(/^npm exec kt/)
    expect(alive(ktPid)).toBe(true)
    npm.kill('SIGKILL')
    const deadline = Date.now() + 10_000
    while (alive(ktPid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    expect(alive(ktPid)).toBe(false)
  }, 60_000)
})
