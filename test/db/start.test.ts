// kt db start applies its --host and --password at every start (not only the first), never
// listens beyond loopback without a password, and a start that cannot succeed is one line, exit 2,
// with no server left running. Beyond loopback is 127.0.0.2 here: kt treats it as another address,
// and the test stays on the loopback network.
import {afterAll, describe, expect, it} from 'vitest'
import {existsSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {kt} from '../cli/helpers.js'
import {postgresForTests} from '../helpers/postgres.js'
import {freePort, PgServer, findBinaries} from '../../src/db/server.js'

const pg = postgresForTests()
const base = mkdtempSync(join(tmpdir(), 'kt-db-start-'))
const NO_PASSWORD = {PGPASSWORD: '', KT_DB_PASSWORD: ''}

afterAll(async () => {
  const bin = findBinaries()
  if (bin) for (const d of ['a', 'b']) await new PgServer({dir: join(base, d), port: 0}, bin).stop('immediate').catch(() => undefined)
  rmSync(base, {recursive: true, force: true})
})

/** Whether a client gets in (true), or the error's message. */
async function login(url: string): Promise<true | string> {
  const {Client} = createRequire(import.meta.url)('pg') as typeof import('pg')
  const client = new Client({connectionString: url, password: url.includes(':secret@') ? undefined : ''})
  try {
    await client.connect()
    await client.query('SELECT 1')
    return true
  } catch (error) {
    return (error as Error).message
  } finally {
    await client.end().catch(() => undefined)
  }
}

describe.skipIf(pg.skip)(`kt db start: host and password ${pg.label}`.trim(), () => {
  it('a folder first started on loopback without a password, started again with --host and --password, asks every client for it', async () => {
    const dir = join(base, 'b')
    const port = String(await freePort())
    let r = kt(['db', 'start', '--dir', dir, '--port', port], {env: NO_PASSWORD})
    expect(r.status, r.stderr).toBe(0)
    expect(await login(`postgresql://kt@127.0.0.1:${port}/kt`)).toBe(true)
    expect(kt(['db', 'stop', '--dir', dir]).status).toBe(0)
    r = kt(['db', 'start', '--dir', dir, '--port', port, '--host', '127.0.0.2', '--password', 'secret'], {env: NO_PASSWORD})
    expect(r.status, r.stderr).toBe(0)
    const hba = readFileSync(join(dir, 'pg_hba.conf'), 'utf8')
    expect(hba).toMatch(/^host all all 0\.0\.0\.0\/0 scram-sha-256$/m)
    expect(hba).toMatch(/^host all all 127\.0\.0\.1\/32 scram-sha-256$/m)
    expect(hba).not.toMatch(/^host .* trust$/m)
    expect(await login(`postgresql://kt:secret@127.0.0.2:${port}/kt`)).toBe(true)
    expect(await login(`postgresql://kt@127.0.0.2:${port}/kt`)).toMatch(/password/)
    expect(r.stdout).toMatch(new RegExp(`on 127\\.0\\.0\\.2:${port} \\(password logins\\)`))
    // a storage URL without the password says one is needed and how to give it
    r = kt(['study', 'list', '--storage', `postgresql://kt@127.0.0.2:${port}/kt`], {env: NO_PASSWORD})
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/^kt: postgresql:\/\/kt@127\.0\.0\.2:\d+\/kt: expected a password for user kt \(PGPASSWORD=\.\.\., or postgresql:\/\/kt:PASSWORD@127\.0\.0\.2:\d+\/kt\): the server asks for one, got none\n$/)
    // running: other settings are refused, not silently ignored
    r = kt(['db', 'start', '--dir', dir, '--port', port], {env: NO_PASSWORD})
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/^kt: .*: expected a stopped server to start with --host 127\.0\.0\.1 .*kt db stop --dir .*, got one running on 127\.0\.0\.2:\d+ with a password\n$/)
    expect(kt(['db', 'stop', '--dir', dir]).status).toBe(0)
    // and it is not started again without the password
    r = kt(['db', 'start', '--dir', dir, '--port', port], {env: NO_PASSWORD})
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/^kt: \S+: expected a password \(--password or PGPASSWORD\): its server was started with one, and its clients log in with it, got none\n$/)
    expect(existsSync(join(dir, 'postmaster.pid'))).toBe(false)
  }, 120_000)

  it('a folder first started with --host and --password is not started without it: one line, exit 2, no server left running', async () => {
    const dir = join(base, 'a')
    const port = String(await freePort())
    let r = kt(['db', 'start', '--dir', dir, '--port', port, '--host', '127.0.0.2', '--password', 'secret'], {env: NO_PASSWORD})
    expect(r.status, r.stderr).toBe(0)
    expect(kt(['db', 'stop', '--dir', dir]).status).toBe(0)
    r = kt(['db', 'start', '--dir', dir, '--port', port], {env: NO_PASSWORD})
    expect(r.status).toBe(2)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(/expected a password \(--password or PGPASSWORD\)/)
    expect(existsSync(join(dir, 'postmaster.pid'))).toBe(false)
    // PGPASSWORD is a password too
    r = kt(['db', 'start', '--dir', dir, '--port', port], {env: {PGPASSWORD: 'secret'}})
    expect(r.status, r.stderr).toBe(0)
    expect(await login(`postgresql://kt:secret@127.0.0.1:${port}/kt`)).toBe(true)
    expect(kt(['db', 'stop', '--dir', dir]).status).toBe(0)
  }, 120_000)
})
