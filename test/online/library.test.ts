import {describe, expect, it} from 'vitest'
import {spawnSync} from 'node:child_process'
import {readFileSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {packageRoot} from '../../src/util/paths.js'
import {GroupCommit, OnlineError, openTenant} from '../../src/online/index.js'
import {TenantStore} from '../../src/online/store.js'
import {spaceById} from '../../src/online/spaces.js'
import {tempDir} from './helpers.js'

describe('kt/online library', () => {
  it('the example in examples/online-library.mjs runs as written against the built package (import from kt/online)', () => {
    const run = spawnSync(process.execPath, [join(packageRoot, 'examples', 'online-library.mjs')], {
      cwd: packageRoot,
      encoding: 'utf8',
    })
    expect(run.stderr).toBe('')
    expect(run.status).toBe(0)
    expect(run.stdout).toMatch(
      /^query q-1: bm25\.k1 [0-9.]+, fusion\.graph [0-9.]+\nfeedback: applied\nrefused: unknown_query\n1 query, 1 used, types temporal\n$/,
    )
    // the README shows the same file
    expect(readFileSync(join(packageRoot, 'src', 'online', 'README.md'), 'utf8')).toContain(
      readFileSync(join(packageRoot, 'examples', 'online-library.mjs'), 'utf8').trim(),
    )
  })

  it('TypeScript users get the types from the package export', () => {
    const file = join(packageRoot, '.kt-types-check.mts')
    writeFileSync(
      file,
      "import {openTenant, type Choice} from 'kt/online'\nconst t = openTenant({tenant: 'x'})\nconst c: Promise<Choice> = t.choose({type: 'temporal'})\n// @ts-expect-error: feedback needs a query_id\nvoid t.feedback({used: true})\nvoid c\n",
    )
    try {
      const tsc = spawnSync(
        process.execPath,
        [
          join(packageRoot, 'node_modules', 'typescript', 'bin', 'tsc'),
          '--noEmit',
          '--strict',
          '--module',
          'node16',
          '--moduleResolution',
          'node16',
          '--skipLibCheck',
          '--types',
          'node',
          file,
        ],
        {cwd: packageRoot, encoding: 'utf8'},
      )
      expect(tsc.stdout + tsc.stderr).toBe('')
      expect(tsc.status).toBe(0)
    } finally {
      rmSync(file, {force: true})
    }
  }, 60_000)

  it('per-type tenants keep one set of bandits per type through restarts (log replay and snapshot alike)', async () => {
    const dir = tempDir()
    const tenant = openTenant({
      dir,
      tenant: 'typed',
      create: {per_type: true, levels: 2, forgetting: 'none'},
      snapshotEvery: 7,
    })
    for (let i = 0; i < 40; i++) {
      const c = await tenant.choose({
        type: i % 3 === 0 ? 'temporal' : 'entity_lookup',
        query_id: `q-${i}`,
        now: 1000 + i,
      })
      if (i % 2 === 0) await tenant.feedback({query_id: c.query_id, used: true, now: 1000 + i})
    }
    const before = tenant.status()
    expect(Object.keys(before.types!).sort()).toEqual(['entity_lookup', 'temporal'])
    expect(before.types!.temporal.queries).toBe(14)
    await tenant.close()
    // from the snapshot, and from the log alone (snapshot removed)
    for (const dropSnapshot of [false, true]) {
      if (dropSnapshot) rmSync(join(dir, 'typed', 'state.json'))
      const again = openTenant({dir, tenant: 'typed'})
      expect(again.status().types).toEqual(before.types)
      expect(again.status().counters).toEqual(before.counters)
      expect(again.store.learner.remembered('q-4')).toMatchObject({used: true})
      await again.close()
    }
    rmSync(dir, {recursive: true, force: true})
  })

  it('refusals are OnlineErrors with codes; a shared GroupCommit batches the syncs of several tenants', async () => {
    const dir = tempDir()
    const commit = new GroupCommit()
    const a = openTenant({dir, tenant: 'a', create: {}, groupCommit: commit})
    const b = openTenant({dir, tenant: 'b', create: {}, groupCommit: commit})
    const code = async (p: Promise<unknown>): Promise<string> =>
      p.then(
        () => 'ok',
        (e: unknown) => (e instanceof OnlineError ? e.code : String(e)),
      )
    expect(() => openTenant({dir, tenant: 'a', create: {}})).toThrow(expect.objectContaining({code: 'tenant_exists'}))
    expect(() => openTenant({dir, tenant: 'zz'})).toThrow(expect.objectContaining({code: 'unknown_tenant'}))
    expect(() => openTenant({dir, tenant: 'c', create: {levels: 1}})).toThrow(/levels/)
    expect(await code(a.feedback({query_id: '5', used: true}))).toBe('unknown_query')
    expect(await code(a.choose({type: 'weather'}))).toBe('bad_request')
    // 20 events in one turn of the event loop: far fewer flushes than events
    const before = commit.stats.batches
    await Promise.all(Array.from({length: 10}, (_, i) => (i % 2 ? a : b).choose({})))
    expect(commit.stats.batches - before).toBeLessThanOrEqual(2)
    expect(commit.stats.syncs).toBeLessThan(commit.stats.commits)
    await a.close()
    await b.close()
    // what was acknowledged is on disk: the plain store sees it
    const store = TenantStore.open({dir, tenant: 'a', resolveSpace: (id) => spaceById(id)})
    expect(store.learner.queries).toBe(5)
    store.close()
    rmSync(dir, {recursive: true, force: true})
  })
})
