import {describe, expect, it} from 'vitest'
import {kt, tempDir} from './helpers.js'
import {TenantStore} from '../../src/online/store.js'
import {spaceById} from '../../src/online/spaces.js'

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
    expect(unknown.stderr).toMatch(/query 7: expected a query id issued to tenant acme \(1\.\.1\), got an unknown id \(counted as rejected\)/)

    const badLabel = t(['online', 'feedback', '--tenant', 'acme', '--query', '1', '--label', '4', '--time', '3000'])
    expect(badLabel.status).toBe(2)
    expect(badLabel.stderr).toMatch(/--label: expected an integer in 0\.\.3, got 4/)

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

  it('prints the simulator\'s table', () => {
    const r = kt(['online', 'simulate', '--env', 'switch-reverse', '--runs', '2', '--steps', '400'])
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^env switch-reverse: 10 arms, 2 runs x 400 steps/)
    for (const name of ['ts', 'ts-decay', 'ts-adaptive', 'ucb1', 'eps-greedy']) expect(r.stdout).toMatch(new RegExp(`^${name} `, 'm'))
    expect(r.stdout).toMatch(/recovered = trailing 100-step share of optimal pulls stays >= 0.5/)
    expect(r.stdout).toMatch(/^cumulative regret \(mean\) at step\nstep +ts +ts-decay/m)
    expect(r.stdout).toMatch(/^ts - eps-greedy +[-+]\d+\.\d +\[[-+]\d+\.\d, [-+]\d+\.\d\] +[-+]\d+\.\d%/m)
  })
})
