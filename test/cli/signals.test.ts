/**
 * SIGINT stops every long-running command (README "Exit codes"): each is started, signalled once
 * it is working (its output says so, or the process it starts is running), and must exit with its
 * documented code (130 after an interrupt; 0 for the servers, whose normal end it is) leaving no
 * process it started behind. kt search with an in-process objective: test/cli/search-signals.test.ts.
 */
import {spawn} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {packageRoot} from '../../src/util/paths.js'
import {descendantPids} from '../../src/util/proc.js'
import {TINY, tinyEngine} from '../adapters/helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'kt-signals-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

/** The command line of a live process ('' once it is gone or a zombie). */
function cmdline(pid: number): string {
  try {
    if (/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))) return ''
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ')
  } catch {
    return ''
  }
}

/** A sleeping command engine: a trial is in flight until it is killed. */
const slowEngine = (): string =>
  tinyEngine(
    dir,
    {evaluate: {kind: 'command', command: [process.execPath, TINY], timeout_s: 600, env: {TEST_SLEEP_MS: '600000'}}},
    'slow.json',
  )

/** A retrieval service that never answers a search (test/adapters/fixtures/toy_service.py hang). */
function hangingService(): string {
  const engine = JSON.parse(readFileSync(join(packageRoot, 'test/adapters/fixtures/toy-good.json'), 'utf8'))
  engine.evaluate = {
    ...engine.evaluate,
    command: ['python3', join(packageRoot, 'test/adapters/fixtures/toy_service.py'), 'hang'],
    timeout_s: 600,
  }
  writeFileSync(join(dir, 'hang.json'), JSON.stringify(engine))
  return join(dir, 'hang.json')
}

interface Case {
  readonly name: string
  readonly args: () => string[]
  /** Working: this in its output, or a process it started whose command line holds this. */
  readonly ready: {readonly output: RegExp} | {readonly child: string}
  readonly exitCode: number
}

const CASES: Case[] = [
  {
    name: 'kt search --engine (a trial in flight)',
    args: () => ['search', '--engine', slowEngine(), '--trials', '5', '--storage', join(dir, 'search.sqlite')],
    ready: {child: 'tiny.mjs'},
    exitCode: 130,
  },
  {
    name: 'kt eval --engine (a search in flight)',
    args: () => ['eval', '--engine', hangingService(), '--data', join(packageRoot, 'fixtures', 'memory_small.json')],
    ready: {child: 'toy_service.py'},
    exitCode: 130,
  },
  {
    name: 'kt bench serve (its server started)',
    args: () => ['bench', 'serve'],
    ready: {child: 'online serve'},
    exitCode: 130,
  },
  {
    name: 'kt dashboard',
    args: () => ['dashboard', '--storage', join(dir, 'search.sqlite'), '--port', '0'],
    ready: {output: /kt dashboard: http:/},
    exitCode: 0,
  },
  {
    name: 'kt online serve',
    args: () => ['online', 'serve', '--port', '0', '--dir', join(dir, 'tenants'), '--registry', join(dir, 'registry')],
    ready: {output: /listening on http:/},
    exitCode: 0,
  },
]

describe('SIGINT stops every long-running command', () => {
  it.each(CASES)(
    '$name: exit $exitCode, no process it started left',
    async ({args, ready, exitCode}) => {
      const env: NodeJS.ProcessEnv = {...process.env, KT_NO_PROGRESS: '1'}
      delete env.NODE_ENV
      const child = spawn(process.execPath, [join(packageRoot, 'bin', 'kt.js'), ...args()], {
        cwd: dir,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let output = ''
      const exited = new Promise<{code: number | null; signal: string | null}>((resolve) =>
        child.on('exit', (code, signal) => resolve({code, signal})),
      )
      const started: number[] = []
      try {
        await new Promise<void>((resolve, reject) => {
          void exited.then(({code}) => reject(new Error(`exited (${code}) before it was working: ${output}`)))
          const check = (): boolean => {
            for (const pid of descendantPids(child.pid!)) if (!started.includes(pid)) started.push(pid)
            return 'output' in ready
              ? ready.output.test(output)
              : started.some((pid) => cmdline(pid).includes(ready.child))
          }
          const onOutput = (d: Buffer): void => {
            output += d.toString()
            if (check()) resolve()
          }
          child.stdout.on('data', onOutput)
          child.stderr.on('data', onOutput)
          // a process it starts says nothing: look for it until it is there (or kt exits)
          if ('child' in ready)
            void (async () => {
              while (child.exitCode === null && !check()) await new Promise((r) => setTimeout(r, 50))
              resolve()
            })()
        })
        for (const pid of descendantPids(child.pid!)) if (!started.includes(pid)) started.push(pid)
        child.kill('SIGINT')
        const status = await exited
        expect(status, output).toEqual({code: exitCode, signal: null})
        // what kt started may take a moment to act on the SIGTERM kt sent it: wait for each to go, as long as the test allows
        for (const pid of started) while (cmdline(pid) !== '') await new Promise((r) => setTimeout(r, 50))
        expect(started.filter((pid) => cmdline(pid) !== '')).toEqual([])
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      }
    },
    120_000,
  )
})
