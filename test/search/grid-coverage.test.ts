// A grid is the grid it claims (review R#10): a grid study whose limits cannot reach every grid
// point is refused unless a subset is asked for, and every grid study says how much of its grid it
// evaluated (kt search, kt study show, --json).
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {checkGridLimit, gridTrialLimit} from '../../src/search/grid.js'
import {runSearch} from '../../src/study/search.js'
import {openStorage} from '../../src/study/storage.js'
import {formatSearchOutcome, studyJson} from '../../src/study/format.js'
import {kt} from '../cli/helpers.js'

describe('grid studies cover their grid, or say they do not', () => {
  it('counts a --budget in full-budget units as grid trials, and refuses a limit below the grid', () => {
    expect(gridTrialLimit(undefined, undefined)).toBeUndefined()
    expect(gridTrialLimit(10, undefined)).toBe(10)
    expect(gridTrialLimit(undefined, 3 * (1 / 3) * 7)).toBe(7)
    expect(gridTrialLimit(30, 12.5)).toBe(12)
    expect(() => checkGridLimit('g', 100, 10, 99, false)).toThrow(
      /^g: expected a trial limit .* of at least 100, the grid's size at 10 values per numeric parameter .*--grid-subset.*, got 99$/,
    )
    expect(() => checkGridLimit('g', 100, 10, 99, true)).not.toThrow()
    expect(() => checkGridLimit('g', 100, 10, 100, false)).not.toThrow()
    expect(() => checkGridLimit('g', 100, 10, undefined, false)).not.toThrow()
  })

  it('refuses a grid larger than --trials before storing anything; with a subset asked for, says "10 of 65,536" and complete false', async () => {
    const store = await openStorage(':memory:')
    try {
      // counting_ones: 16 parameters, so even 2 values each make 2^16 points
      await expect(
        runSearch({
          storage: ':memory:',
          store,
          study: 'g',
          objective: {name: 'counting_ones'},
          optimizer: 'grid',
          maxTrials: 10,
        }),
      ).rejects.toThrow(
        /^study g: --optimizer grid: expected a trial limit .* of at least 65536, the grid's size at 2 values per numeric parameter .*, got 10$/,
      )
      expect(await store.getStudy('g')).toBeUndefined()
      const outcome = await runSearch({
        storage: ':memory:',
        store,
        study: 'g',
        objective: {name: 'counting_ones'},
        optimizer: 'grid',
        maxTrials: 10,
        settings: {gridSubset: true},
      })
      expect(outcome.summary.finished).toBe(10)
      expect(studyJson(outcome.study, outcome.trials).grid).toEqual({
        points: 65536,
        points_per_dim: 2,
        evaluated: 10,
        complete: false,
        subset: true,
      })
      expect(formatSearchOutcome(outcome, 'mem').text).toContain(
        'grid: evaluated 10 of 65,536 points (2 values per numeric parameter), a seeded random subset (--grid-subset)',
      )
      // new limits on resume must still reach the grid, unless the study is a subset (this one is)
      const more = await runSearch({storage: ':memory:', store, study: 'g', resume: true, maxTrials: 12})
      expect(studyJson(more.study, more.trials).grid).toMatchObject({evaluated: 12, complete: false})
    } finally {
      await store.close()
    }
  })

  it('sizes the grid to --trials or --budget and evaluates all of it; a grid stopped early is marked incomplete', async () => {
    const store = await openStorage(':memory:')
    try {
      // branin has two parameters: 5 x 5 fits 30 trials, 7 x 7 fits a budget of 50
      const byTrials = await runSearch({
        storage: ':memory:',
        store,
        study: 't',
        objective: {name: 'branin'},
        optimizer: 'grid',
        maxTrials: 30,
      })
      expect(byTrials.summary).toMatchObject({finished: 25, stoppedBy: 'done'})
      expect(studyJson(byTrials.study, byTrials.trials).grid).toEqual({
        points: 25,
        points_per_dim: 5,
        evaluated: 25,
        complete: true,
        subset: false,
      })
      const byBudget = await runSearch({
        storage: ':memory:',
        store,
        study: 'b',
        objective: {name: 'branin'},
        optimizer: 'grid',
        maxBudget: 50,
      })
      expect(studyJson(byBudget.study, byBudget.trials).grid).toMatchObject({points: 49, evaluated: 49, complete: true})
      // interrupted after 5 of 25 points
      const controller = new AbortController()
      let seen = 0
      const stopped = await runSearch({
        storage: ':memory:',
        store,
        study: 'i',
        objective: {name: 'branin'},
        optimizer: 'grid',
        maxTrials: 30,
        signal: controller.signal,
        onTrial: () => ++seen === 5 && controller.abort(),
      })
      expect(stopped.summary.stoppedBy).toBe('aborted')
      expect(studyJson(stopped.study, stopped.trials).grid).toEqual({
        points: 25,
        points_per_dim: 5,
        evaluated: 5,
        complete: false,
        subset: false,
      })
      expect(formatSearchOutcome(stopped, 'mem').text).toContain(
        'grid: evaluated 5 of 25 points (5 values per numeric parameter), INCOMPLETE: stopped before the whole grid',
      )
      // resuming it with a limit below its grid is refused; without new limits it completes
      await expect(runSearch({storage: ':memory:', store, study: 'i', resume: true, maxTrials: 20})).rejects.toThrow(
        /at least 25, the grid's size at 5 values per numeric parameter \(the study was not created with --grid-subset; or resume without new limits\), got 20$/,
      )
      const done = await runSearch({storage: ':memory:', store, study: 'i', resume: true})
      expect(studyJson(done.study, done.trials).grid).toMatchObject({evaluated: 25, complete: true})
    } finally {
      await store.close()
    }
  })

  it('kt search refuses in one line (exit 2) without --grid-subset; kt study show and list state a partial grid', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'kt-grid-')), 'g.sqlite')
    const args = [
      'search',
      '--objective',
      'counting_ones',
      '--optimizer',
      'grid',
      '--trials',
      '10',
      '--storage',
      file,
      '--study',
      'g',
    ]
    let r = kt(args)
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(
      /^kt: study g: --optimizer grid: expected a trial limit .* at least 65536.*--grid-subset.*, got 10\n$/,
    )
    r = kt([...args, '--grid-subset', '--json'])
    expect(r.status).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({
      state: 'finished',
      grid: {points: 65536, evaluated: 10, complete: false, subset: true},
    })
    r = kt(['study', 'show', 'g', '--storage', file])
    expect(r.stdout).toMatch(
      /^study g: grid on counting_ones, seed 42, finished \(partial grid\)\n {2}trials 10: 10 ok, 0 failed, 0 running\n {2}grid: evaluated 10 of 65,536 points \(2 values per numeric parameter\), a seeded random subset \(--grid-subset\)\n/,
    )
    r = kt(['study', 'list', '--storage', file])
    expect(r.stdout).toMatch(/^g\s+counting_ones\s+grid\s+42\s+finished \(partial grid\)\s+10\s+10\s+0\s+0\s/m)
    expect(
      kt(['search', '--objective', 'branin', '--optimizer', 'random', '--grid-subset', '--storage', file]).stderr,
    ).toBe('kt: --grid-subset: expected only with --optimizer grid, got --optimizer random\n')
  })
})
