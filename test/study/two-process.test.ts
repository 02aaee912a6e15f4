// The failure of issue 11, reproduced: two processes resuming one SQLite study both evaluated every
// remaining trial, stored one process's configuration with the other's loss, and the next --resume
// failed ("expected the trial this optimiser proposes on replay") and flipped the study back to running.
import {spawn} from 'node:child_process'
import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {runSearch} from '../../src/study/search.js'

const dir = mkdtempSync(join(tmpdir(), 'kt-two-'))
const root = fileURLToPath(new URL('../..', import.meta.url))

function resumeInChild(storage: string, study: string): Promise<{code: number | null; out: string; err: string}> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(root, 'test/study/fixtures/resume-search.ts'), storage, study],
    {cwd: root, stdio: ['ignore', 'pipe', 'pipe']},
  )
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (err += d))
  return new Promise((resolve) => child.on('exit', (code) => resolve({code, out, err})))
}

describe('two processes on one SQLite study', () => {
  it('share the remaining trials: each evaluated once, and a later --resume replays the study and keeps it finished', async () => {
    const storage = join(dir, 'two.sqlite')
    const evalLog = join(dir, 'two-evals.log')
    const total = 100
    // a noisy objective (counting_ones), started by one process and stopped after 20 trials
    const controller = new AbortController()
    let seen = 0
    await runSearch({
      storage,
      study: 'two',
      objective: {name: 'counting_ones', delayMs: 8, evalLog},
      optimizer: 'bohb',
      seed: 5,
      maxTrials: total,
      signal: controller.signal,
      onTrial: () => {
        if (++seen === 20) controller.abort()
      },
    })
    const [a, b] = await Promise.all([resumeInChild(storage, 'two'), resumeInChild(storage, 'two')])
    expect(a.err + b.err).toBe('')
    expect([a.code, b.code]).toEqual([0, 0])
    const lines = readFileSync(evalLog, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' ').map(Number))
    const ids = lines.map(([id]) => id)
    // every trial evaluated exactly once across the three processes
    expect(ids.slice().sort((x, y) => x - y)).toEqual([...Array(total).keys()])
    // and both children did part of the work
    const pids = new Set(lines.slice(20).map(([, , pid]) => pid))
    expect(pids.size).toBe(2)
    const again = await runSearch({storage, study: 'two', resume: true})
    expect(again.summary.evaluated).toBe(0)
    expect(again.summary.replayed).toBe(total)
    expect(again.study.state).toBe('finished')
    expect(again.trials.map((t) => t.id)).toEqual([...Array(total).keys()])
    expect(again.trials.every((t) => t.status === 'ok')).toBe(true)
  })
})
