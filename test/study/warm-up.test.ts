/**
 * The worker's warm-up (src/study/runner.ts, WARM-UP): a catch-up read made shortly before a
 * trial's expected end, so that the section after it runs on warm caches. It must change nothing
 * but timing: the same seed gives the same trials with and without it, and it is made only for
 * trials long enough to pay for it.
 */
import {describe, expect, it} from 'vitest'
import {newWorkerTiming} from '../../src/study/runner.js'
import {runSearch} from '../../src/study/search.js'

/** Long enough that a warm-up fits before the trial's end (WARM_UP_MIN_TRIAL_MS is 10). */
const TRIAL_MS = 40
const TRIALS = 6

async function run(storage: string, warmUp: boolean, delayMs: number) {
  const timing = newWorkerTiming()
  const out = await runSearch({storage, study: 'w', objective: {name: 'branin', delayMs}, optimizer: 'random', seed: 7, maxTrials: TRIALS, threads: false, timing, warmUp})
  return {timing, trials: out.trials.map((t) => ({id: t.id, config: t.config, loss: t.loss, tellSeq: t.tellSeq, asksBefore: t.asksBefore}))}
}

describe('warm-up before a trial ends', () => {
  it('catches up before every trial once two durations are known, and changes no trial', async () => {
    const on = await run(':memory:', true, TRIAL_MS)
    const off = await run(':memory:', false, TRIAL_MS)
    // the first two trials give the expected duration; every later one is warmed up (its timer
    // falls due before the trial's own, so a late event loop runs it first)
    expect(on.timing.warmUps).toBe(TRIALS - 2)
    expect(off.timing.warmUps ?? 0).toBe(0)
    expect(on.trials).toEqual(off.trials)
    expect(on.trials).toHaveLength(TRIALS)
  })

  it('is not made for trials too short to pay for its round trip', async () => {
    const quick = await run(':memory:', true, 0)
    expect(quick.timing.warmUps ?? 0).toBe(0)
    expect(quick.trials).toHaveLength(TRIALS)
  })
})
