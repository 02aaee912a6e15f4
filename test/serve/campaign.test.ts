import {describe, expect, it} from 'vitest'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {runKillCampaign} from '../../src/bench/campaign.js'

describe('kill -9 campaign (lean: the full 20 kills run in kt bench serve)', () => {
  it('after 6 kill -9s under load, every acknowledged choose and feedback is in the state and nothing is credited twice', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-campaign-'))
    try {
      const report = await runKillCampaign({
        dir,
        kills: 6,
        tenants: 6,
        clients: 6,
        seed: 42,
        minLoadMs: 150,
        maxLoadMs: 500,
        minAcksPerRound: 10,
      })
      expect(report.violations).toEqual([])
      expect(report.passed).toBe(true)
      // each of the 6 rounds waits for 10 acknowledged feedbacks before its kill, however slow the machine
      expect(report.acknowledged_feedback).toBeGreaterThan(50)
      // kills land mid-request: some requests went unanswered and were retried after the restart
      expect(report.retried_chooses + report.retried_feedback).toBeGreaterThan(0)
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
