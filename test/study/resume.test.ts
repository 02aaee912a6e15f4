import {spawn} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {runSearch} from '../../src/study/search.js'
import {SqliteStudyFile} from '../helpers/study-file.js'
import {type TrialRow} from '../../src/study/model.js'

const dir = mkdtempSync(join(tmpdir(), 'kt-resume-'))
const root = fileURLToPath(new URL('../..', import.meta.url))

/** What must be identical between an interrupted-and-resumed study and an uninterrupted one. */
function essence(trials: readonly TrialRow[]): unknown[] {
  return trials.map((t) => [t.id, t.configId, t.budget, t.status, t.loss, t.continues, JSON.stringify(t.config)])
}

async function reference(trials: number): Promise<TrialRow[]> {
  return (
    await runSearch({
      storage: ':memory:',
      study: 'ref',
      objective: {name: 'counting_ones'},
      optimizer: 'bohb',
      seed: 4,
      maxTrials: trials,
    })
  ).trials
}

function finishedIds(storage: string, study: string): Set<number> | undefined {
  if (!existsSync(storage)) return undefined
  try {
    const store = SqliteStudyFile.open(storage, {readonly: true})
    try {
      if (!store.getStudy(study)) return undefined
      return new Set(
        store
          .trials(study)
          .filter((t) => t.status !== 'running')
          .map((t) => t.id),
      )
    } finally {
      store.close()
    }
  } catch {
    return undefined
  }
}

describe('resume', () => {
  it('continues after an abort (Ctrl-C) to exactly the trials of an uninterrupted run', async () => {
    const storage = join(dir, 'abort.sqlite')
    const controller = new AbortController()
    let seen = 0
    const first = await runSearch({
      storage,
      study: 's',
      objective: {name: 'counting_ones'},
      optimizer: 'bohb',
      seed: 4,
      maxTrials: 120,
      signal: controller.signal,
      onTrial: () => {
        if (++seen === 50) controller.abort()
      },
    })
    expect(first.summary.stoppedBy).toBe('aborted')
    expect(first.summary.finished).toBe(50)
    expect(first.study.state).toBe('interrupted')
    const resumed = await runSearch({storage, study: 's', resume: true})
    expect(resumed.summary.replayed).toBe(50)
    expect(resumed.summary.evaluated).toBe(70)
    expect(essence(resumed.trials)).toEqual(essence(await reference(120)))
  })

  it('resumes after kill -9 of a real process without losing or repeating a finished trial', async () => {
    const storage = join(dir, 'kill.sqlite')
    const evalLog = join(dir, 'kill-evals.log')
    const total = 100
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(root, 'test/study/fixtures/run-search.ts'), storage, 'k', evalLog, String(total), '12'],
      {cwd: root, stdio: 'ignore'},
    )
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)))
    // Kill it once it is past the first rung (81 trials at budget 9) and into promotions.
    const deadline = Date.now() + 30_000
    let before: Set<number> | undefined
    while (Date.now() < deadline) {
      before = finishedIds(storage, 'k')
      if (before && before.size >= 86) break
      await new Promise((r) => setTimeout(r, 25))
    }
    child.kill('SIGKILL')
    expect(await exited).toBe('SIGKILL')
    before = finishedIds(storage, 'k')!
    expect(before.size).toBeGreaterThanOrEqual(86)
    expect(before.size).toBeLessThan(total)

    const resumed = await runSearch({storage, study: 'k', resume: true})
    expect(resumed.summary.replayed).toBe(before.size)
    const trials = resumed.trials
    expect(trials.map((t) => t.id)).toEqual([...Array(total).keys()])
    expect(trials.every((t) => t.status === 'ok')).toBe(true)
    // Nothing finished before the kill was evaluated again by the resumed run (this process).
    const lines = readFileSync(evalLog, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' '))
    const again = lines.filter(([, , pid]) => Number(pid) === process.pid).map(([id]) => Number(id))
    expect(again.filter((id) => before!.has(id))).toEqual([])
    expect(new Set(again).size).toBe(again.length)
    expect(again.length).toBe(total - before.size)
    // And the study is exactly the uninterrupted one: same configurations, budgets and losses,
    // including promoted configurations that continued from checkpoints stored by the killed run.
    expect(essence(trials)).toEqual(essence(await reference(total)))
  })

  it('refuses to resume a BOHB study whose stored results were altered, with replay hints as without them', async () => {
    const db = (await import('better-sqlite3')).default
    const outcomes: string[] = []
    for (const hints of ['kept', 'dropped']) {
      const storage = join(dir, `altered-${hints}.sqlite`)
      const first = await runSearch({
        storage,
        study: 's',
        objective: {name: 'counting_ones'},
        optimizer: 'bohb',
        seed: 4,
        maxTrials: 60,
      })
      // the first rung's 81 configurations (no promotion yet): hinted asks after the altered results are what the replay rests on
      expect(first.trials.every((t) => t.budget === 9)).toBe(true)
      expect(first.trials.filter((t) => t.id >= 30 && t.askHint !== null).length).toBeGreaterThan(10)
      const sql = new db(storage)
      // results draw nothing from the generator: only the hints' check, or re-scoring, can see this
      sql.prepare('UPDATE trials SET loss = -loss WHERE id < 30').run()
      if (hints === 'dropped') sql.prepare('UPDATE trials SET ask_hint = NULL').run()
      sql.close()
      outcomes.push(
        await runSearch({storage, study: 's', resume: true, maxTrials: 70}).then(
          () => 'resumed',
          (e: Error) => e.message.replace(storage, 'STORE'),
        ),
      )
    }
    // the same trial fails the same check: the hints' check sees the results, as re-scoring does
    expect(outcomes[0]).toMatch(/^STORE: study s trial \d+: expected the trial this optimiser proposes on replay/)
    expect(outcomes[0]).toBe(outcomes[1])
  })

  it('refuses to mix histories when the optimiser would propose different trials', async () => {
    const storage = join(dir, 'mix.sqlite')
    await runSearch({storage, study: 'm', objective: {name: 'branin'}, optimizer: 'random', seed: 1, maxTrials: 5})
    const store = SqliteStudyFile.open(storage)
    const record = store.getStudy('m')!
    // Pretend the study was created with another seed.
    ;(store as unknown as {db: {prepare(s: string): {run(...a: unknown[]): void}}}).db
      .prepare('UPDATE studies SET seed = 2 WHERE name = ?')
      .run(record.name)
    store.close()
    await expect(runSearch({storage, study: 'm', resume: true, maxTrials: 10})).rejects.toThrow(
      /study m trial 0: expected the trial this optimiser proposes on replay/,
    )
  })
})
