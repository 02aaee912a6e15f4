// kt db start applies its --host and --password at every start (not only the first), never
// listens beyond loopback without a password, and a start that cannot succeed is one line, exit 2,
// with no server left running. Beyond loopback is 127.0.0.2 here: kt treats it as another address,
// and the test stays on the loopback network.
import {afterAll, describe, expect, it} from 'vitest'
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {kt} from '../cli/helpers.js'
import {postgresForTests} from '../helpers/postgres.js'
import {checkDatabaseName, freePort, PgServer, findBinaries} from '../../src/db/server.js'

const pg = postgresForTests()
const base = mkdtempSync(join(tmpdir(), 'kt-db-start-'))
const NO_PASSWORD = {PGPASSWORD: '', KT_DB_PASSWORD: ''}

afterAll(async () => {
  const bin = findBinaries()
  if (bin)
    for (const d of ['a', 'b', 'c', 'd'])
      await new PgServer({dir: join(base, d), port: 0}, bin).stop('immediate').catch(() => undefined)
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
    r = kt(['db', 'start', '--dir', dir, '--port', port, '--host', '127.0.0.2', '--password', 'secret'], {
      env: NO_PASSWORD,
    })
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
    expect(r.stderr).toMatch(
      /^kt: postgresql:\/\/kt@127\.0\.0\.2:\d+\/kt: expected a password for user kt \(PGPASSWORD=\.\.\., or postgresql:\/\/kt:PASSWORD@127\.0\.0\.2:\d+\/kt\): the server asks for one, got none\n$/,
    )
    // running: other settings are refused, not silently ignored
    r = kt(['db', 'start', '--dir', dir, '--port', port], {env: NO_PASSWORD})
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(
      /^kt: .*: expected a stopped server to start with --host 127\.0\.0\.1 .*kt db stop --dir .*, got one running on 127\.0\.0\.2:\d+ with a password\n$/,
    )
    expect(kt(['db', 'stop', '--dir', dir]).status).toBe(0)
    // and it is not started again without the password
    r = kt(['db', 'start', '--dir', dir, '--port', port], {env: NO_PASSWORD})
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(
      /^kt: \S+: expected a password \(--password or PGPASSWORD\): its server was started with one, and its clients log in with it, got none\n$/,
    )
    expect(existsSync(join(dir, 'postmaster.pid'))).toBe(false)
  }, 120_000)

  it('a folder first started with --host and --password is not started without it: one line, exit 2, no server left running', async () => {
    const dir = join(base, 'a')
    const port = String(await freePort())
    let r = kt(['db', 'start', '--dir', dir, '--port', port, '--host', '127.0.0.2', '--password', 'secret'], {
      env: NO_PASSWORD,
    })
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

/** Kills the server of `dir` as a crash would (kill -9 of the postmaster) and waits until none of its processes is left. */
async function crash(dir: string): Promise<number> {
  const pid = Number(readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')[0])
  process.kill(pid, 'SIGKILL')
  const real = realpathSync(dir)
  // its backends notice the postmaster's death and exit; a start before that would find their shared memory in use
  for (let i = 0; i < 100; i++) {
    const left = readdirSync('/proc')
      .filter((p) => /^\d+$/.test(p))
      .some((p) => {
        try {
          return readlinkSync(`/proc/${p}/cwd`) === real
        } catch {
          return false
        }
      })
    if (!left) break
    await new Promise((r) => setTimeout(r, 50))
  }
  return pid
}

describe.skipIf(pg.skip)(`kt db start/stop after a crash ${pg.label}`.trim(), () => {
  it('a postmaster.pid whose server was killed counts as stopped: stop says so, start recovers; a busy port is named', async () => {
    const dir = join(base, 'c')
    const port = String(await freePort())
    let r = kt(['db', 'start', '--dir', dir, '--port', port], {env: NO_PASSWORD})
    expect(r.status, r.stderr).toBe(0)
    await crash(dir)
    expect(existsSync(join(dir, 'postmaster.pid'))).toBe(true)
    r = kt(['db', 'stop', '--dir', dir])
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toMatch(
      /^no server running in \S+ \(its last server did not shut down cleanly: kt db start recovers it\)\n$/,
    )
    r = kt(['db', 'start', '--dir', dir, '--port', port], {env: NO_PASSWORD})
    expect(r.status, r.stderr + readFileSync(join(dir, 'server.log'), 'utf8').slice(-1500)).toBe(0)
    expect(r.stdout).not.toMatch(/already running/)
    expect(await login(`postgresql://kt@127.0.0.1:${port}/kt`)).toBe(true)
    // crashed again, and its pid now belongs to another live process (here: this test's): still stopped, and started
    await crash(dir)
    const lines = readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')
    lines[0] = String(process.pid)
    writeFileSync(join(dir, 'postmaster.pid'), lines.join('\n'))
    r = kt(['db', 'start', '--dir', dir, '--port', port], {env: NO_PASSWORD})
    expect(r.status, r.stderr + readFileSync(join(dir, 'server.log'), 'utf8').slice(-1500)).toBe(0)
    expect(await login(`postgresql://kt@127.0.0.1:${port}/kt`)).toBe(true)
    // another folder on the port this server holds: one line naming the port
    r = kt(['db', 'start', '--dir', join(base, 'd'), '--port', port], {env: NO_PASSWORD})
    expect(r.status).toBe(2)
    expect(r.stderr).toBe(
      `kt: --port: expected a free port (another program listens on 127.0.0.1:${port}; choose another --port, or stop it), got port ${port} in use\n`,
    )
    expect(existsSync(join(base, 'd', 'postmaster.pid'))).toBe(false)
    r = kt(['db', 'stop', '--dir', dir])
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^stopped the server in /)
  }, 120_000)
})

describe('kt db start --database', () => {
  it('refuses a name the printed --storage URL would not give back, in one line, before starting anything; accepted names round-trip through the pg driver', async () => {
    const dir = join(base, 'e')
    const r = kt(['db', 'start', '--dir', dir, '--port', '1', '--database', 'bad name; drop'], {env: NO_PASSWORD})
    expect(r.status).toBe(2)
    expect(r.stderr).toBe(
      'kt: --database: expected a name of letters, digits, _ and - starting with a letter or _ (at most 63 characters), got "bad name; drop"\n',
    )
    expect(existsSync(dir)).toBe(false)
    const {parse} = createRequire(import.meta.url)('pg-connection-string') as {
      parse: (url: string) => {database?: string | null}
    }
    const bin = findBinaries() ?? {initdb: '', pgCtl: '', source: ''}
    const server = new PgServer({dir, port: 5433}, bin)
    // why: the driver reads the database with decodeURI, which keeps %3B
    expect(parse(server.url('bad name; drop')).database).not.toBe('bad name; drop')
    for (const name of ['kt', 'kt-a_1', '_x9', 'K'.repeat(63)]) {
      expect(checkDatabaseName(name)).toBe(name)
      expect(parse(server.url(name)).database).toBe(name)
    }
    for (const name of ['', '1kt', 'a/b', 'a%20b', 'K'.repeat(64)])
      expect(() => checkDatabaseName(name)).toThrow(/^--database: expected a name of letters/)
  })
})
