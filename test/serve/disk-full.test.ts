import {describe, expect, it} from 'vitest'
import {runDiskFullCampaign} from '../../src/bench/disk-full.js'

// Runs for real: each round mounts a tmpfs (the tests run as root) and fills it under load.
describe('a full disk under kt online serve (lean: the ten rounds run in kt bench disk-full)', () => {
  it('loses no acknowledged event, answers 503 while full, recovers by itself and on a restart while full', async () => {
    const report = await runDiskFullCampaign({
      rounds: 2,
      tenants: 4,
      clients: 6,
      sizeMib: 24,
      segmentBytes: 65_536,
      holdMs: 2000,
      seed: 7,
    })
    expect(report.rounds.flatMap((r) => r.violations)).toEqual([])
    expect(report.passed_rounds).toBe(2)
    const [recovering, fullRestart] = report.rounds
    expect(recovering.restart).toBe('after_recovery')
    expect(recovering.recovered_ms).not.toBeNull()
    expect(fullRestart.restart).toBe('while_full')
    // the disk was really full under load: requests were refused 503 (not applied) and sent again
    expect(recovering.refused_while_full + fullRestart.refused_while_full).toBeGreaterThan(0)
    expect(report.acknowledged_feedback).toBeGreaterThan(150)
  })
})
