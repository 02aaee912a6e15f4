import {describe, expect, it} from 'vitest'
import {readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {TenantStore} from '../../src/online/store.js'
import {spaceById} from '../../src/online/spaces.js'
import {defaultConfig} from '../../src/space/space.js'
import {forgettingDefaults} from '../../src/online/forgetting.js'
import {ktAsync, tempDir} from './helpers.js'

/** Resolves once `ready()` holds, checking every few milliseconds (the test timeout bounds it). */
async function until(ready: () => boolean): Promise<void> {
  while (!ready()) await new Promise((resolve) => setTimeout(resolve, 5))
}

describe('kt online under concurrent commands (built CLI)', () => {
  it('queues concurrent feedback and choose calls on one tenant: all succeed, counters add up, query ids are unique', async () => {
    const dir = tempDir()
    const space = spaceById('retrieval')
    const settings = {levels: 4, sampler: 'logit' as const, forgetting: forgettingDefaults('periodic')}
    const store = TenantStore.open({
      dir,
      tenant: 'acme',
      create: {space, profile: defaultConfig(space), settings, seed: 3},
    })
    for (let i = 0; i < 4; i++) store.choose(1000)
    // This process keeps the tenant open while the commands start, so the first of them always
    // finds the lock held: without waiting it would fail at once.
    const runs = [
      ...[1, 2, 3, 4].map((q) => [
        'online',
        'feedback',
        '--tenant',
        'acme',
        '--query',
        String(q),
        '--used',
        '--time',
        '2000',
      ]),
      ...[1, 2].map(() => ['online', 'choose', '--tenant', 'acme', '--time', '2000', '--json']),
    ].map((args) => {
      const run = {done: false, result: ktAsync([...args, '--dir', dir])}
      void run.result.then(() => (run.done = true))
      return run
    })
    // A command that waits for the lock keeps its pid file (.lock.<pid>.<n>.tmp) next to the lock.
    await until(
      () => runs.some((r) => r.done) || readdirSync(join(dir, 'acme')).some((name) => name.startsWith('.lock.')),
    )
    store.close()
    const results = await Promise.all(runs.map((r) => r.result))
    for (const r of results) expect(r.status, r.stderr).toBe(0)
    expect(
      results
        .slice(4)
        .map((r) => JSON.parse(r.stdout).query_id)
        .sort(),
    ).toEqual([5, 6])

    const reopened = TenantStore.open({dir, tenant: 'acme', resolveSpace: (id) => spaceById(id)})
    expect(reopened.learner.counters).toMatchObject({queries: 6, used: 4, duplicate: 0, unknown: 0, late: 0})
    reopened.close()
    const queryIds = readFileSync(join(dir, 'acme', 'log.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((e) => e.e === 'q')
      .map((e) => e.id)
    expect(queryIds).toEqual([1, 2, 3, 4, 5, 6])
    expect(readdirSync(join(dir, 'acme')).sort()).toEqual(['log.jsonl', 'state.json'])
  })
})
