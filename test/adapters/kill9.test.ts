/**
 * kill -9 of kt leaves no command trial running (review D#9): the watchdog (src/adapters/process-groups.ts)
 * kills every live trial's process group, grandchildren included, when kt dies.
 */
import {spawn} from 'node:child_process'
import {mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {readJson} from '../../src/util/fs.js'
import {packageRoot} from '../../src/util/paths.js'
import {parentPid} from '../../src/util/proc.js'
import {pidsIn, waitFor, waitGone} from './helpers.js'

const FIXTURES = join(packageRoot, 'test', 'adapters', 'fixtures')

describe('kt search --engine killed with SIGKILL', () => {
  it('its running trials and their grandchildren die with it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-kill9-'))
    const pidDir = join(dir, 'pids')
    mkdirSync(pidDir)
    const file = readJson(join(FIXTURES, 'engine.json')) as Record<string, any>
    // each trial starts a grandchild sleeper (its pid in pids/), then sleeps 60 s; timeout 60 s
    file.parameters[1] = {name: 'mode', type: 'categorical', choices: ['hang'], default: 'hang', env: 'TEST_MODE'}
    file.evaluate = {kind: 'command', command: ['python3', join(FIXTURES, 'misbehave.py')], timeout_s: 60}
    writeFileSync(join(dir, 'engine.json'), JSON.stringify(file))
    const env: NodeJS.ProcessEnv = {...process.env, KT_NO_PROGRESS: '1', TEST_PID_DIR: pidDir}
    delete env.NODE_ENV
    const child = spawn(
      process.execPath,
      [
        join(packageRoot, 'bin', 'kt.js'),
        'search',
        '--engine',
        join(dir, 'engine.json'),
        '--optimizer',
        'random',
        '--trials',
        '4',
        '--workers',
        '2',
        '--storage',
        join(dir, 's.sqlite'),
        '--study',
        's',
      ],
      {env, stdio: 'ignore'},
    )
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_, signal) => resolve(signal)))
    let trials: number[] = []
    let grandchildren: number[]
    try {
      await waitFor(() => pidsIn(pidDir).length === 2, 30_000)
      grandchildren = pidsIn(pidDir)
      // the trials themselves: the grandchildren's parents, each the leader of its own group
      trials = grandchildren.map((p) => parentPid(p)!)
      for (const t of trials) expect(parentPid(t)).toBe(child.pid)
      child.kill('SIGKILL')
      expect(await exited).toBe('SIGKILL')
      // SIGTERM at once, SIGKILL after the watchdog's 1 s grace
      expect(await waitGone([...trials, ...grandchildren], 8000)).toEqual([])
    } finally {
      child.kill('SIGKILL')
      // without the watchdog they would outlive this test: do not leave them to the next one
      for (const t of trials) {
        try {
          process.kill(-t, 'SIGKILL')
        } catch {
          // gone
        }
      }
    }
  })
})
