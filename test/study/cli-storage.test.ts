// The study commands on PostgreSQL through the built CLI: copy from a SQLite file, list, show and
// export on the server, a worker joining; never printing the password.
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {kt} from '../cli/helpers.js'
import {postgresForTests} from '../helpers/postgres.js'

const pg = postgresForTests()
const dir = mkdtempSync(join(tmpdir(), 'kt-cli-storage-'))

describe.skipIf(pg.skip)(`kt study and kt worker on PostgreSQL ${pg.label}`.trim(), () => {
  it('copies a study to the server, lists, shows and exports it there, and a worker finishes it; the password is never printed', async () => {
    const url = await pg.database('kt_cli')
    const password = new URL(url).password
    const file = join(dir, 'local.sqlite')
    let r = kt(
      [
        'search',
        '--objective',
        'branin',
        '--optimizer',
        'random',
        '--trials',
        '5',
        '--study',
        'b',
        '--storage',
        file,
        '--json',
      ],
      {env: {KT_WORKER_HOST: 'host-s'}},
    )
    expect(r.status).toBe(0)
    r = kt(['study', 'copy', 'b', '--from', file, '--to', url])
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(
      /^copied study b \(5 trials\) from .*local\.sqlite to postgresql:\/\/kt:\*\*\*@127\.0\.0\.1:\d+\/kt_cli_\w+\n$/,
    )
    r = kt(['worker', '--storage', url, '--study', 'b', '--trials', '8', '--json'], {env: {KT_WORKER_HOST: 'host-w'}})
    expect(r.status).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({
      name: 'b',
      trials: 8,
      ok: 8,
      state: 'finished',
      run: {evaluated: 3, replayed: 5},
    })
    r = kt(['study', 'list', '--storage', url])
    expect(r.stdout).toMatch(/^b\s+branin\s+random\s+\d+\s+finished\s+8\s+8\s+0\s+0\s+/m)
    r = kt(['study', 'show', 'b', '--storage', url, '--json'])
    expect(JSON.parse(r.stdout)).toMatchObject({name: 'b', trials: 8})
    // importance printed the --storage value as given, password included
    r = kt(['study', 'importance', 'b', '--storage', url, '--json'])
    expect(r.status).toBe(0)
    expect(r.stdout).not.toContain(password)
    expect(JSON.parse(r.stdout).storage).toMatch(/^postgresql:\/\/kt:\*\*\*@127\.0\.0\.1:\d+\/kt_cli_\w+$/)
    r = kt(['study', 'export', 'b', '--storage', url, '--format', 'csv'])
    expect(r.stdout.trim().split('\n')).toHaveLength(9)
    // who finished each trial (host/pid, through kt study copy for the first five) and how often it was started
    const header = r.stdout.split('\n')[0].split(',')
    const column = (name: string): string[] =>
      r.stdout
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => l.split(',')[header.indexOf(name)])
    expect(column('worker').map((w) => w.replace(/\/\d+$/, '/PID'))).toEqual([
      ...Array(5).fill('host-s/PID'),
      ...Array(3).fill('host-w/PID'),
    ])
    expect(column('attempts')).toEqual(Array(8).fill('1'))
    r = kt(['study', 'export', 'b', '--storage', file, '--format', 'json'])
    expect(
      (JSON.parse(r.stdout) as {trials: Array<{worker: string; attempts: number}>}).trials.map((t) => [
        t.worker.replace(/\/\d+$/, '/PID'),
        t.attempts,
      ]),
    ).toEqual(Array(5).fill(['host-s/PID', 1]))
    r = kt(['study', 'show', 'nope', '--storage', url])
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(
      /^kt: postgresql:\/\/kt:\*\*\*@127\.0\.0\.1:\d+\/kt_cli_\w+: study nope: expected an existing study \(b\), got no such study\n$/,
    )
    // a worker names the flag it was given
    r = kt(['worker', '--storage', url, '--study', 'nosuch'])
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(
      /^kt: postgresql:\/\/kt:\*\*\*@127\.0\.0\.1:\d+\/kt_cli_\w+: --study nosuch: expected an existing study \(b\), got no such study\n$/,
    )
    // no password for a server that asks for one: say so, and how to give it
    const bare = new URL(url)
    bare.password = ''
    r = kt(['study', 'list', '--storage', bare.toString()], {env: {PGPASSWORD: ''}})
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(
      /^kt: postgresql:\/\/kt@127\.0\.0\.1:\d+\/kt_cli_\w+: expected a password for user kt \(PGPASSWORD=\.\.\., or postgresql:\/\/kt:PASSWORD@127\.0\.0\.1:\d+\/kt_cli_\w+\): the server asks for one, got none\n$/,
    )
    const bad = new URL(url)
    bad.password = 'wrong-secret'
    r = kt(['study', 'list', '--storage', bad.toString()])
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(
      /^kt: postgresql:\/\/kt:\*\*\*@.*: expected the right password for user kt, got password authentication failed\n$/,
    )
    for (const out of [r.stdout, r.stderr]) {
      expect(out).not.toContain(password)
      expect(out).not.toContain('wrong-secret')
    }
  })
})
