import {existsSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {openTenant} from '../../src/online/library.js'
import {ENGINE_SPACES_DIR} from '../../src/online/spaces.js'
import {loadEngineFile} from '../../src/adapters/file.js'
import {makeProfile} from '../../src/deploy/profile.js'
import {defaultConfig} from '../../src/space/space.js'
import {writeProfile} from '../deploy/helpers.js'
import {kt, ktAsync, tempDir} from './helpers.js'

/** A small engine file; `mark` sets `online` on the named parameters and simplex groups. */
function engineFile(dir: string, mark: readonly string[], extra: Record<string, unknown> = {}): string {
  const parameters: Array<Record<string, unknown>> = [
    {name: 'k1', type: 'float', low: 0.5, high: 3, default: 1.2, env: 'E_K1'},
    {name: 'depth', type: 'int', low: 1, high: 5, default: 2, env: 'E_DEPTH'},
    {name: 'mode', type: 'categorical', choices: ['fast', 'exact'], default: 'fast', env: 'E_MODE'},
    {name: 'w.a', type: 'float', low: 0, high: 1, default: 0.6, env: 'E_W_A'},
    {name: 'w.b', type: 'float', low: 0, high: 1, default: 0.4, env: 'E_W_B'},
  ]
  const simplex: Array<Record<string, unknown>> = [{name: 'w', parameters: ['w.a', 'w.b'], floor: 0.05}]
  for (const item of [...parameters, ...simplex]) if (mark.includes(item.name as string)) item.online = true
  const file = join(dir, 'engine.json')
  writeFileSync(
    file,
    JSON.stringify({
      kt_engine: 1,
      name: 'marked',
      parameters,
      simplex,
      evaluate: {kind: 'command', command: ['true']},
      objectives: [{metric: 'mrr', direction: 'maximize'}],
      ...extra,
    }),
  )
  return file
}

type Init = {space: string; dimensions: Array<{key: string}>; settings: {tuned?: string[]}}

describe('online tenants of an engine file', () => {
  it('tune exactly the parameters the file marks online, also when created later from the kept table', async () => {
    const dir = tempDir()
    const online = join(dir, 'online')
    const r = kt([
      'online',
      'init',
      '--tenant',
      'a',
      '--engine',
      engineFile(dir, ['depth', 'w']),
      '--dir',
      online,
      '--json',
    ])
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    const init = JSON.parse(r.stdout) as Init
    expect(init.space).toBe('engine:marked')
    expect(init.settings.tuned).toEqual(['depth', 'w'])
    expect(init.dimensions.map((d) => d.key)).toEqual(['depth', 'w.a', 'w.b'])
    // the table kept beside the tenants keeps the column, so a tenant made from it alone tunes the same
    const kept = JSON.parse(readFileSync(join(online, ENGINE_SPACES_DIR, 'engine-marked.json'), 'utf8')) as {
      params: Array<{name: string; online?: boolean}>
    }
    expect(kept.params.filter((p) => p.online).map((p) => p.name)).toEqual(['depth', 'w'])
    const later = openTenant({dir: online, tenant: 'b', create: {space: 'engine:marked'}})
    expect(later.store.learner.bandit.dims.map((d) => d.key)).toEqual(['depth', 'w.a', 'w.b'])
    await later.close()
    // --tuned still wins over the marks
    const chosen = openTenant({dir: online, tenant: 'c', create: {space: 'engine:marked', tuned: ['k1']}})
    expect(chosen.store.learner.bandit.dims.map((d) => d.key)).toEqual(['k1'])
    await chosen.close()
  })

  it('tune every parameter when the file marks none', async () => {
    const dir = tempDir()
    const r = kt(['online', 'init', '--tenant', 'a', '--engine', engineFile(dir, []), '--dir', dir, '--json'])
    expect(r.status).toBe(0)
    const init = JSON.parse(r.stdout) as Init
    expect(init.settings.tuned).toBeUndefined()
    expect(init.dimensions.map((d) => d.key)).toEqual(['k1', 'depth', 'mode', 'w.a', 'w.b'])
    const later = openTenant({dir, tenant: 'b', create: {space: 'engine:marked'}})
    expect(later.store.learner.bandit.dims).toHaveLength(5)
    await later.close()
  })

  it('refuse a bad online value in one line naming the file and the field (exit 2)', () => {
    const dir = tempDir()
    const file = engineFile(dir, [])
    const data = JSON.parse(readFileSync(file, 'utf8')) as {parameters: Array<Record<string, unknown>>}
    data.parameters[1].online = 'yes'
    writeFileSync(file, JSON.stringify(data))
    const r = kt(['online', 'init', '--tenant', 'a', '--engine', file, '--dir', join(dir, 'online')])
    expect(r.status).toBe(2)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toContain(`${file}: parameters[1].online: expected boolean, got "yes"`)
    expect(r.stdout).toBe('')
  })
})

/** engineFile's table with bm25-like changes: `k1` up to `high`, descriptions optionally reworded. */
function changedEngineFile(
  dir: string,
  name: string,
  change: (parameters: Array<Record<string, unknown>>) => void,
): string {
  const base = engineFile(dir, [])
  const data = JSON.parse(readFileSync(base, 'utf8')) as {parameters: Array<Record<string, unknown>>}
  change(data.parameters)
  const file = join(dir, name)
  writeFileSync(file, JSON.stringify(data))
  return file
}

describe('the engine table kept beside the tenants (review D#4)', () => {
  it('is never replaced: a changed table under the same engine id is refused in one line naming both files, and its tenants keep working', async () => {
    const dir = tempDir()
    const online = join(dir, 'online')
    const v1 = changedEngineFile(dir, 'v1.json', () => {})
    const v2 = changedEngineFile(dir, 'v2.json', (p) => (p[0].high = 5))
    expect(kt(['online', 'init', '--tenant', 'a', '--engine', v1, '--dir', online]).status).toBe(0)
    const kept = join(online, ENGINE_SPACES_DIR, 'engine-marked.json')
    const before = readFileSync(kept, 'utf8')
    // the review's repro: an existing tenant id (the init fails) and a new one (it would succeed)
    for (const tenant of ['a', 'b']) {
      const r = kt(['online', 'init', '--tenant', tenant, '--engine', v2, '--dir', online])
      expect(r.status).toBe(2)
      expect(r.stderr).toBe(
        `kt: ${v2}: parameters: expected the parameter table kept for engine:marked in ${kept}, which the tenants created from it read, got a different table (to tune it: give the engine a new name, or keep its tenants in another --dir; the kept table and its tenants stay as they are)\n`,
      )
    }
    expect(readFileSync(kept, 'utf8')).toBe(before)
    expect(readdirSync(online).sort()).toEqual(['a', ENGINE_SPACES_DIR])
    expect(kt(['online', 'choose', '--tenant', 'a', '--dir', online]).status).toBe(0)
    // the same table again (a reworded description changes no bin) makes a tenant beside it
    const reworded = changedEngineFile(dir, 'reworded.json', (p) => (p[0].description = 'the BM25 k1, reworded'))
    expect(kt(['online', 'init', '--tenant', 'c', '--engine', reworded, '--dir', online]).status).toBe(0)
    expect(readFileSync(kept, 'utf8')).toBe(before)
  })

  it('a failed init leaves nothing behind: no table, no folder it made', async () => {
    const dir = tempDir()
    const v1 = changedEngineFile(dir, 'v1.json', () => {})
    const space = loadEngineFile(v1).space
    // the gate refuses the profile (exit 1): before, the table was already written
    const profile = writeProfile(
      dir,
      'p.json',
      makeProfile({
        kind: 'engine',
        space,
        name: 'p',
        config: defaultConfig(space),
        sourceRun: 'study-x',
        metrics: {mrr: 0.5},
        engine: {name: 'marked', file: v1},
      }),
    )
    const refused = kt([
      'online',
      'init',
      '--tenant',
      'a',
      '--engine',
      v1,
      '--profile',
      profile,
      '--dir',
      join(dir, 'fresh'),
    ])
    expect(refused.status).toBe(1)
    expect(existsSync(join(dir, 'fresh'))).toBe(false)
    // an existing tenant of another space: refused, and the table it would have kept is taken back
    const online = join(dir, 'online')
    expect(kt(['online', 'init', '--tenant', 'a', '--dir', online]).status).toBe(0)
    const exists = kt(['online', 'init', '--tenant', 'a', '--engine', v1, '--dir', online])
    expect([exists.status, exists.stderr]).toEqual([
      2,
      'kt: tenant a: expected a new tenant id, got a tenant with that id\n',
    ])
    expect(readdirSync(online)).toEqual(['a'])
    // library: the same, and a different table refused as bad_request
    expect(() => openTenant({dir: online, tenant: 'a', create: {}, engine: {space, file: v1}})).toThrow(
      expect.objectContaining({code: 'tenant_exists'}),
    )
    expect(readdirSync(online)).toEqual(['a'])
    const tenant = openTenant({dir: online, tenant: 'b', create: {}, engine: {space, file: v1}})
    await tenant.close()
    const changed = {
      ...space,
      params: space.params.map((p) => (p.name === 'k1' && p.kind === 'float' ? {...p, high: 5} : p)),
    }
    expect(() => openTenant({dir: online, tenant: 'c', create: {}, engine: {space: changed, file: 'v2.json'}})).toThrow(
      expect.objectContaining({
        code: 'bad_request',
        message: expect.stringMatching(
          /^v2\.json: parameters: expected the parameter table kept for engine:marked in /,
        ),
      }),
    )
    expect(readdirSync(online).sort()).toEqual(['a', 'b', ENGINE_SPACES_DIR])
  })

  it("two inits with different tables of one engine at once: one keeps its table, the other is refused, and the winner's tenant opens", async () => {
    const dir = tempDir()
    const online = join(dir, 'online')
    const files = [
      changedEngineFile(dir, 'v1.json', () => {}),
      changedEngineFile(dir, 'v2.json', (p) => (p[0].high = 5)),
    ]
    const runs = await Promise.all(
      files.map((file, i) => ktAsync(['online', 'init', '--tenant', `t${i}`, '--engine', file, '--dir', online])),
    )
    const won = runs.findIndex((r) => r.status === 0)
    expect(runs.map((r) => r.status).sort()).toEqual([0, 2])
    expect(runs[1 - won].stderr).toMatch(
      /parameters: expected the parameter table kept for engine:marked in .*, got a different table/,
    )
    const kept = JSON.parse(readFileSync(join(online, ENGINE_SPACES_DIR, 'engine-marked.json'), 'utf8')) as {
      params: Array<{name: string; high?: number}>
    }
    expect(kept.params.find((p) => p.name === 'k1')?.high).toBe(won === 0 ? 3 : 5)
    expect(kt(['online', 'choose', '--tenant', `t${won}`, '--dir', online]).status).toBe(0)
    expect(existsSync(join(online, `t${1 - won}`))).toBe(false)
  })
})
