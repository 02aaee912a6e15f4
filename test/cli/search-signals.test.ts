import {spawn} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {openStorage} from '../../src/study/storage.js'
import {packageRoot} from '../../src/util/paths.js'

const dir = mkdtempSync(join(tmpdir(), 'kt-search-signals-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

/** Stored trials of the only study in `storage`, or [] before the file has one. */
async function storedTrials(storage: string) {
  try {
    const store = await openStorage(storage, {mustExist: true, readonly: true})
    try {
      const [study] = await store.listStudies()
      return study ? {study, trials: await store.trials(study.name)} : undefined
    } finally {
      await store.close()
    }
  } catch {
    return undefined
  }
}

// An in-process objective's trials settle without touching the event loop: a signal must still stop the search.
describe('kt search with an in-process objective stops on SIGINT and SIGTERM', () => {
  it.each([
    ['random', 'SIGTERM', 143, []],
    ['bohb', 'SIGINT', 130, []],
    ['grid', 'SIGTERM', 143, ['--grid-points', '300']],
  ] as const)(
    '%s, %s: exit %i, the finished trials stored, the study resumable',
    async (optimizer, sig, code, extra) => {
      const storage = join(dir, `${optimizer}.sqlite`)
      const env: NodeJS.ProcessEnv = {...process.env, KT_NO_PROGRESS: '1'}
      delete env.NODE_ENV
      const child = spawn(
        process.execPath,
        [
          join(packageRoot, 'bin', 'kt.js'),
          'search',
          '--objective',
          'branin',
          '--optimizer',
          optimizer,
          '--trials',
          '100000',
          '--storage',
          storage,
          ...extra,
        ],
        {cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe']},
      )
      try {
        let stderr = ''
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
        const exited = new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)))
        // wait until it has stored some trials (it would take minutes to reach 100,000)
        for (;;) {
          const seen = await storedTrials(storage)
          if (seen && seen.trials.length >= 50) break
          await new Promise((r) => setTimeout(r, 100))
        }
        const signalled = Date.now()
        child.kill(sig)
        const status = await exited
        // a generous bound: the loop yields to signals every few ms; a starved one ran on for minutes
        expect(Date.now() - signalled).toBeLessThan(30_000)
        expect(status, stderr).toBe(code)
        expect(stderr).toMatch(/kt: interrupted; continue with: kt search --resume /)
        const after = (await storedTrials(storage))!
        expect(after.study.state).toBe('interrupted')
        const finished = after.trials.filter((t) => t.status !== 'running')
        expect(finished.length).toBeGreaterThanOrEqual(50)
        expect(finished.length).toBeLessThan(100_000)
        // a trial left running is released (no owner), so a resume takes it at once
        expect(after.trials.filter((t) => t.status === 'running' && t.owner)).toEqual([])
      } finally {
        // never leave a search running when an expectation failed
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      }
    },
    120_000,
  )
})
