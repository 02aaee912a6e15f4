import {afterAll, describe, expect, it} from 'vitest'
import {spawn} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {packageRoot} from '../../src/util/paths.js'

const dir = mkdtempSync(join(tmpdir(), 'kt-serve-cli-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

describe('kt online serve --json (built CLI)', () => {
  it('writes JSON only on stdout: a line when listening (with the URL) and one when stopped; the human line goes to stderr', async () => {
    const env: NodeJS.ProcessEnv = {...process.env, KT_NO_PROGRESS: '1'}
    // under vitest, NODE_ENV=test makes oclif load src/ through tsx: run the built CLI as users do
    delete env.NODE_ENV
    const child = spawn(
      process.execPath,
      [
        join(packageRoot, 'bin', 'kt.js'),
        'online',
        'serve',
        '--port',
        '0',
        '--dir',
        join(dir, 'tenants'),
        '--registry',
        join(dir, 'registry'),
        '--json',
      ],
      {stdio: ['ignore', 'pipe', 'pipe'], env},
    )
    let stdout = ''
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    try {
      const first = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => {
          stdout += d.toString()
          if (stdout.includes('\n')) resolve(stdout.split('\n')[0])
        })
        void exited.then((code) => reject(new Error(`exited ${code} before listening: ${stderr}`)))
      })
      const listening = JSON.parse(first) as {url: string; port: number; pid: number}
      expect(listening).toMatchObject({listening: true, pid: child.pid})
      expect(listening.url).toBe(`http://127.0.0.1:${listening.port}`)
      expect((await fetch(`${listening.url}/healthz`)).status).toBe(200)
    } finally {
      child.kill('SIGTERM')
    }
    expect(await exited).toBe(0)
    const lines = stdout.trim().split('\n')
    expect(lines).toHaveLength(2)
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow()
    expect(JSON.parse(lines[1])).toMatchObject({stopped: true})
    expect(stderr).toMatch(/^kt online serve: listening on http:\/\/127\.0\.0\.1:\d+ \(pid \d+\)\n$/)
  }, 60_000)
})
