import {describe, expect, it} from 'vitest'
import {rmSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {createTenant, openTenant, runAndKill, tempDir} from './helpers.js'

const CHILD = fileURLToPath(new URL('./crash-child.ts', import.meta.url))

/** Runs the crash child until it has acknowledged at least `acks` queries, SIGKILLs it `extraMs` later; returns the acked query ids. */
async function runCrashChild(dir: string, tenant: string, acks: number, extraMs: number): Promise<number[]> {
  const acked = await runAndKill(CHILD, [dir, tenant, '3'], acks, extraMs)
  return acked.map((payload) => {
    if (!/^\d+$/.test(payload)) throw new Error(`crash child acknowledged a malformed query id: ${payload}`)
    return Number(payload)
  })
}

describe('crash safety', () => {
  it('loses no acknowledged query or feedback when the process is SIGKILLed mid-stream', async () => {
    const dir = tempDir()
    createTenant(dir, 'acme', undefined, 3).close()
    let acked = 0
    let runs = 0
    // Kills at different moments (snapshots every 3 events, so some land mid-snapshot).
    for (const [acks, extraMs] of [
      [40, 0],
      [40, 5],
    ]) {
      const ids = await runCrashChild(dir, 'acme', acks, extraMs)
      acked += ids.length
      runs++
      const store = openTenant(dir, 'acme')
      const c = store.learner.counters
      // Every acknowledged query and both its feedback events are in the state after restart.
      expect(c.queries).toBeGreaterThanOrEqual(ids[ids.length - 1])
      expect(c.used).toBeGreaterThanOrEqual(acked)
      expect(c.labels).toBeGreaterThanOrEqual(acked)
      // Nothing beyond what was sent: at most one query per killed run was in flight (logged, not acked).
      expect(c.queries - acked).toBeLessThanOrEqual(runs)
      expect(c.used - acked).toBeLessThanOrEqual(runs)
      expect(c.duplicate + c.unknown + c.badLabel + c.late).toBe(0)
      store.close()
    }
    // The snapshot after all that equals a full replay of the log.
    const resumed = openTenant(dir, 'acme')
    const state = JSON.stringify(resumed.learner.save())
    resumed.close()
    rmSync(join(dir, 'acme', 'state.json'))
    const rebuilt = openTenant(dir, 'acme')
    expect(JSON.stringify(rebuilt.learner.save())).toBe(state)
    rebuilt.close()
  }, 30_000)
})
