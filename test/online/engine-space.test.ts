import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {openTenant} from '../../src/online/library.js'
import {ENGINE_SPACES_DIR} from '../../src/online/spaces.js'
import {kt, tempDir} from './helpers.js'

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
  writeFileSync(file, JSON.stringify({kt_engine: 1, name: 'marked', parameters, simplex, evaluate: {kind: 'command', command: ['true']}, objectives: [{metric: 'mrr', direction: 'maximize'}], ...extra}))
  return file
}

type Init = {space: string; dimensions: Array<{key: string}>; settings: {tuned?: string[]}}

describe('online tenants of an engine file', () => {
  it('tune exactly the parameters the file marks online, also when created later from the kept table', async () => {
    const dir = tempDir()
    const online = join(dir, 'online')
    const r = kt(['online', 'init', '--tenant', 'a', '--engine', engineFile(dir, ['depth', 'w']), '--dir', online, '--json'])
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    const init = JSON.parse(r.stdout) as Init
    expect(init.space).toBe('engine:marked')
    expect(init.settings.tuned).toEqual(['depth', 'w'])
    expect(init.dimensions.map((d) => d.key)).toEqual(['depth', 'w.a', 'w.b'])
    // the table kept beside the tenants keeps the column, so a tenant made from it alone tunes the same
    const kept = JSON.parse(readFileSync(join(online, ENGINE_SPACES_DIR, 'engine-marked.json'), 'utf8')) as {params: Array<{name: string; online?: boolean}>}
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
