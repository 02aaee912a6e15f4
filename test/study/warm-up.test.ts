/**
 * The worker's warm-up (src/study/optimize.ts, WARM-UP): a catch-up read made shortly before a
 * trial's expected end, so that the section after it runs on warm caches. When it is made is a
 * pure function of the recent evaluation times (tested with given times, not timers); that it
 * changes nothing but timing is tested where it has something to change: two runners on one
 * study, each warming up while the other tells, must leave the study one optimiser told the
 * history in order would make (a resume replays and checks every ask).
 */
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {newWorkerTiming} from '../../src/study/optimize-options.js'
import {WARM_UP_MIN_TRIAL_MS, warmUpDelay} from '../../src/study/warm-up.js'
import {runSearch} from '../../src/study/search.js'
import {openStorage} from '../../src/study/storage.js'

const dir = mkdtempSync(join(tmpdir(), 'kt-warm-'))

describe('warmUpDelay', () => {
  it('gives none before two evaluations at the budget, nor for trials shorter than the minimum', () => {
    expect(warmUpDelay(undefined, 2, 0)).toBeUndefined()
    expect(warmUpDelay([50], 2, 0)).toBeUndefined()
    expect(warmUpDelay([50, WARM_UP_MIN_TRIAL_MS - 0.5], 2, 0)).toBeUndefined()
    expect(warmUpDelay([0.1, 0.2, 0.1], 2, 0)).toBeUndefined()
    expect(warmUpDelay([WARM_UP_MIN_TRIAL_MS, 30], 2, 0)).toBeDefined()
  })

  it("falls due the lead and a 1 ms margin before the shortest recent evaluation's end, counted from the evaluation's start", () => {
    expect(warmUpDelay([60, 52, 70], 5, 0)).toBe(52 - 5 - 1)
    expect(warmUpDelay([60, 52, 70], 5, 10)).toBe(52 - 5 - 1 - 10)
    // already late: at once
    expect(warmUpDelay([60, 52, 70], 5, 58)).toBe(0)
  })
})

describe('warm-up reads on a shared study', () => {
  it('two runners warm up while the other tells; every trial is finished once and a resume replays every ask', async () => {
    const storage = join(dir, 'warm.sqlite')
    const total = 24
    await runSearch({
      storage,
      study: 'w',
      objective: {name: 'counting_ones', delayMs: 60},
      optimizer: 'bohb',
      seed: 11,
      maxTrials: total,
      createOnly: true,
    })
    const timings = [newWorkerTiming(), newWorkerTiming()]
    await Promise.all(
      timings.map((timing) =>
        runSearch({storage, study: 'w', resume: true, threads: false, timing, log: () => undefined}),
      ),
    )
    // about ten trials each are long enough and have two durations before them
    expect(timings[0].warmUps! + timings[1].warmUps!).toBeGreaterThan(0)
    expect(timings[0].evaluated + timings[1].evaluated).toBe(total)
    const store = await openStorage(storage, {mustExist: true})
    const rows = await store.trials('w')
    await store.close()
    expect(rows.map((r) => r.id)).toEqual([...Array(total).keys()])
    expect(rows.every((r) => r.status === 'ok' && r.attempts === 1)).toBe(true)
    const resumed = await runSearch({storage, study: 'w', resume: true, log: () => undefined})
    expect(resumed.summary.replayed).toBe(total)
    expect(resumed.summary.evaluated).toBe(0)
  })
})
