// `kt bench workers` on the test server: each row is its own study, so a process count given twice
// (to measure it again) is measured twice instead of finding the first row's study already
// finished (which printed a negative time and share).
import {describe, expect, it} from 'vitest'
import {benchWorkers} from '../../src/bench/workers.js'
import {postgresForTests} from '../helpers/postgres.js'

const pg = postgresForTests()

describe.skipIf(pg.skip)(`kt bench workers ${pg.label}`, () => {
  it('measures a repeated process count as a fresh study each time', async () => {
    const storage = await pg.database('kt_bench')
    const r = await benchWorkers({
      storage,
      counts: [1, 1],
      trialMs: 5,
      trialsPerProcess: 3,
      noopTrials: 2,
      log: () => undefined,
    })
    expect(r.rows.map((row) => row.processes)).toEqual([1, 1])
    for (const row of r.rows) {
      expect(row.trials).toBe(3)
      expect(row.seconds).toBeGreaterThan(0)
      // every trial sleeps 5 ms, so 3 of them take at least 15 ms: a row that found its study done takes none
      expect(row.seconds).toBeGreaterThanOrEqual(0.015)
      expect(row.share_of_ideal).toBeGreaterThan(0)
      expect(row.share_of_ideal).toBeLessThanOrEqual(1.05)
    }
  }, 60_000)
})
