import {describe, expect, it} from 'vitest'
import {spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {packageRoot} from '../../src/util/paths.js'
import {SearchProgress, formatDuration} from '../../src/study/progress.js'
import {TINY, tinyEngine} from '../adapters/helpers.js'

/** Bound of the pseudo-terminal run: the old spinner wrote 14 MB of cursor codes in 10 s. */
const MAX_BYTES = 20_000
const MAX_SECONDS = 60

describe('progress on a terminal', () => {
  it(
    'a pseudo-terminal of 0 columns (script) gets plain progress lines, not an endless stream of cursor codes',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'kt-pty-'))
      try {
        const log = join(dir, 'out.log')
        const env: NodeJS.ProcessEnv = {...process.env}
        delete env.NODE_ENV
        delete env.KT_NO_PROGRESS
        // a command engine whose trials take 80 ms each, so the search runs long enough to show progress
        const engine = tinyEngine(dir, {
          evaluate: {kind: 'command', command: [process.execPath, TINY], timeout_s: 20, env: {TEST_SLEEP_MS: '80'}},
        })
        const cmd = `node ${join(packageRoot, 'bin', 'kt.js')} search --engine ${engine} --trials 40 --storage ${join(dir, 's.sqlite')}`
        // script gives kt a pseudo-terminal nobody sized (0 columns); `timeout` bounds the time
        const r = spawnSync('timeout', [String(MAX_SECONDS), 'script', '-qec', cmd, log], {
          cwd: dir,
          env,
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
        })
        expect(r.status, r.stderr).toBe(0)
        expect(statSync(log).size).toBeLessThan(MAX_BYTES)
        const text = readFileSync(log, 'utf8')
        expect(text).toMatch(
          /kt search: trial \d+\/40 \(\d+%\), (best loss -?[\d.]+ \(trial \d+\)|no successful trial yet), ETA/,
        )
        expect(text).toContain('finished')
        expect(text).not.toMatch(/\u001b\[\d*[AGK]/) // no cursor movement or line clearing
      } finally {
        rmSync(dir, {recursive: true, force: true})
      }
    },
    (MAX_SECONDS + 10) * 1000,
  )
})

describe('the progress line', () => {
  it('shows the total, the best so far and a time estimate from the rate since the first report', () => {
    let now = 1_000
    const p = new SearchProgress({maxTrials: 10}, () => now)
    const trial = (id: number) => ({id, configId: String(id), budget: 1, config: {}}) as never
    expect(p.update(trial(0), {status: 'ok', loss: 3} as never, {asked: 1, budgetUsed: 0.1})).toBe(
      'trial 1/10 (10%), best loss 3.0000 (trial 0), ETA -',
    )
    now += 2_000
    expect(p.update(trial(1), {status: 'failed'} as never, {asked: 3, budgetUsed: 0.3})).toBe(
      'trial 3/10 (30%), best loss 3.0000 (trial 0), ETA 7s',
    )
    now += 1_000
    expect(p.update(trial(2), {status: 'ok', loss: 1.5} as never, {asked: 4, budgetUsed: 0.4})).toBe(
      'trial 4/10 (40%), best loss 1.5000 (trial 2), ETA 6s',
    )
    const byBudget = new SearchProgress({maxBudget: 2}, () => 0)
    expect(byBudget.update(trial(0), {status: 'failed'} as never, {asked: 1, budgetUsed: 0.5})).toBe(
      'budget 0.50/2 (25%), no successful trial yet, ETA -',
    )
    expect(formatDuration(185)).toBe('3m05s')
    expect(formatDuration(7500)).toBe('2h05m')
  })
})
