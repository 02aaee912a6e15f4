import {describe, expect, it} from 'vitest'
import {existsSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {kt, ktAsync, rechain, tempDir} from './helpers.js'
import {TenantStore} from '../../src/online/store.js'
import {spaceById} from '../../src/online/spaces.js'
import {defaultConfig} from '../../src/space/space.js'
import {forgettingDefaults} from '../../src/online/forgetting.js'

describe('kt online (built CLI)', () => {
  const dir = tempDir()
  const t = (args: string[]) => kt([...args, '--dir', dir])

  it('creates a tenant, serves a query, joins feedback and rejects bad feedback with exit code 2', () => {
    expect(t(['online', 'init', '--tenant', 'acme', '--levels', '4', '--json']).status).toBe(0)
    const chosen = t(['online', 'choose', '--tenant', 'acme', '--time', '1000', '--json'])
    expect(chosen.status, chosen.stderr).toBe(0)
    const q = JSON.parse(chosen.stdout)
    expect(q.query_id).toBe(1)
    expect(Object.keys(q.config)).toContain('fusion.graph')

    const used = t(['online', 'feedback', '--tenant', 'acme', '--query', '1', '--used', '--time', '2000', '--json'])
    expect(JSON.parse(used.stdout).verdict).toBe('applied')

    const unknown = t(['online', 'feedback', '--tenant', 'acme', '--query', '7', '--used', '--time', '3000'])
    expect(unknown.status).toBe(2)
    expect(unknown.stderr.trim().split('\n')).toHaveLength(1)
    expect(unknown.stderr).toMatch(
      /query 7: expected a query id issued to tenant acme \(1\.\.1 or your own ids\), got an unknown id \(counted as rejected\)/,
    )

    const badLabel = t(['online', 'feedback', '--tenant', 'acme', '--query', '1', '--label', '4', '--time', '3000'])
    expect(badLabel.status).toBe(2)
    expect(badLabel.stderr).toMatch(/label: expected an integer in 0\.\.3, got 4/)

    const negativeTime = t(['online', 'choose', '--tenant', 'acme', '--time', '-5'])
    expect(negativeTime.status).toBe(2)
    expect(negativeTime.stderr.trim().split('\n')).toHaveLength(1)
    expect(negativeTime.stderr).toMatch(/--time.*0/)

    const pathTenant = t(['online', 'choose', '--tenant', '../etc'])
    expect(pathTenant.status).toBe(2)
    expect(pathTenant.stderr).toMatch(/tenant id: expected .*no path separators/)

    const store = TenantStore.open({dir, tenant: 'acme', resolveSpace: (id) => spaceById(id)})
    expect(store.learner.counters).toMatchObject({queries: 1, used: 1, unknown: 1, badLabel: 1})
    store.close()
  })

  it('a labels-only tenant takes labels and refuses --used with one line and exit code 2', () => {
    const badFraction = t(['online', 'init', '--tenant', 'bad1', '--decay-fraction', '2'])
    expect(badFraction.status).toBe(2)
    expect(badFraction.stderr).toMatch(/--decay-fraction: expected a fraction in \(0, 1\), got 2/)
    const wrongKind = t(['online', 'init', '--tenant', 'bad2', '--forgetting', 'adaptive', '--decay-every', '100'])
    expect(wrongKind.status).toBe(2)
    expect(wrongKind.stderr.trim().split('\n')).toHaveLength(1)
    const custom = t([
      'online',
      'init',
      '--tenant',
      'custom',
      '--decay-every',
      '100',
      '--decay-fraction',
      '0.2',
      '--implicit-window-ms',
      '60000',
      '--json',
    ])
    expect(custom.status, custom.stderr).toBe(0)
    expect(JSON.parse(custom.stdout).settings).toMatchObject({
      forgetting: {kind: 'periodic', every: 100, fraction: 0.2},
      implicit_window_ms: 60000,
    })
    const init = t(['online', 'init', '--tenant', 'graded', '--feedback', 'labels', '--prior-strength', '10', '--json'])
    expect(init.status, init.stderr).toBe(0)
    expect(JSON.parse(init.stdout).settings).toMatchObject({feedback: 'labels', prior_strength: 10})
    expect(t(['online', 'choose', '--tenant', 'graded', '--time', '1000']).status).toBe(0)
    expect(
      t(['online', 'feedback', '--tenant', 'graded', '--query', '1', '--label', '3', '--time', '2000']).status,
    ).toBe(0)
    const used = t(['online', 'feedback', '--tenant', 'graded', '--query', '1', '--used', '--time', '3000'])
    expect(used.status).toBe(2)
    expect(used.stderr.trim().split('\n')).toHaveLength(1)
    expect(used.stderr).toMatch(/used: expected a label: tenant graded takes labels only/)
    // long after the implicit window: the label stays the query's only outcome
    expect(t(['online', 'choose', '--tenant', 'graded', '--time', '100000000']).status).toBe(0)
    const store = TenantStore.open({dir, tenant: 'graded', resolveSpace: (id) => spaceById(id)})
    expect(store.learner.counters).toMatchObject({queries: 2, labels: 1, expired: 0, notAccepted: 1})
    store.close()
  })

  it('rejects --time on status, leaves no folder after a failed init and reports a duplicate query in the log, each with one line and exit code 2', async () => {
    const d = tempDir()
    const space = spaceById('retrieval')
    const store = TenantStore.open({
      dir: d,
      tenant: 'dup',
      create: {
        space,
        profile: defaultConfig(space),
        settings: {levels: 4, sampler: 'logit', forgetting: forgettingDefaults('periodic')},
        seed: 1,
      },
    })
    store.choose(1000)
    store.choose(2000)
    store.close()
    const logPath = join(d, 'dup', 'log.jsonl')
    const lines = readFileSync(logPath, 'utf8').trim().split('\n')
    writeFileSync(logPath, `${rechain([...lines, lines[1]]).join('\n')}\n`) // query 1 again (with a valid checksum: the id check is tested)
    rmSync(join(d, 'dup', 'state.json'))

    const at = (args: string[]) => ktAsync([...args, '--dir', d])
    const [statusTime, levels1, levels12, tunedFoo, duplicate] = await Promise.all([
      at(['online', 'status', '--tenant', 'dup', '--time', '5']),
      at(['online', 'init', '--tenant', 'l1', '--levels', '1']),
      at(['online', 'init', '--tenant', 'l12', '--levels', '12']),
      at(['online', 'init', '--tenant', 'foo', '--tuned', 'foo']),
      at(['online', 'status', '--tenant', 'dup']),
    ])
    for (const r of [statusTime, levels1, levels12, tunedFoo, duplicate]) {
      expect(r.status, r.stderr).toBe(2)
      expect(r.stderr.trim().split('\n')).toHaveLength(1)
    }
    expect(statusTime.stderr).toMatch(/unknown flag --time/)
    expect(levels1.stderr).toMatch(/levels: expected an integer in 2\.\.11, got 1$/m)
    expect(levels12.stderr).toMatch(/levels: expected an integer in 2\.\.11, got 12$/m)
    expect(tunedFoo.stderr).toMatch(/foo: expected a parameter of space retrieval/)
    for (const tenant of ['l1', 'l12', 'foo']) expect(existsSync(join(d, tenant)), tenant).toBe(false)
    expect(duplicate.stderr).toContain(`${logPath}:${lines.length + 1}: id: expected query id 3`)
    expect(duplicate.stderr).toMatch(/got 1 \(a duplicate or out-of-order query event\)$/m)
  })

  it("prints the simulator's table", () => {
    const r = kt(['online', 'simulate', '--env', 'switch-reverse', '--runs', '2', '--steps', '400'])
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^env switch-reverse: 10 arms, 2 runs x 400 steps/)
    for (const name of ['ts', 'ts-decay', 'ts-adaptive', 'ucb1', 'eps-greedy'])
      expect(r.stdout).toMatch(new RegExp(`^${name} `, 'm'))
    expect(r.stdout).toMatch(/recovered = trailing 100-step share of optimal pulls stays >= 0.5/)
    expect(r.stdout).toMatch(/^cumulative regret \(mean\) at step\nstep +ts +ts-decay/m)
    expect(r.stdout).toMatch(/^ts - eps-greedy +[-+]\d+\.\d +\[[-+]\d+\.\d, [-+]\d+\.\d\] +[-+]\d+\.\d%/m)
  })
})
