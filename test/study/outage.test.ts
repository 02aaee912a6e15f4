// A worker and its database's outages at awkward moments (own server, since the test stops it):
// Ctrl-C while the database is down stops with one line (exit 130), not an internal error; a
// worker whose server goes away while it opens the study says the server went away.
import {spawn, type ChildProcess} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {freePort, startServer, type PgServer} from '../../src/db/server.js'
import {runSearch} from '../../src/study/search.js'
import {packageRoot} from '../../src/util/paths.js'
import {postgresForTests} from '../helpers/postgres.js'

const pg = postgresForTests()
const dir = mkdtempSync(join(tmpdir(), 'kt-outage-'))
const children = new Set<ChildProcess>()
let server: PgServer | undefined

function startWorker(
  url: string,
  study: string,
): {child: ChildProcess; stderr: () => string; exited: Promise<number | null>} {
  const env: NodeJS.ProcessEnv = {...process.env, KT_NO_PROGRESS: '1'}
  delete env.NODE_ENV
  const child = spawn(
    process.execPath,
    [join(packageRoot, 'bin', 'kt.js'), 'worker', '--storage', url, '--study', study],
    {cwd: packageRoot, env, stdio: ['ignore', 'pipe', 'pipe']},
  )
  children.add(child)
  let stderr = ''
  child.stderr!.on('data', (d) => (stderr += d))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  void exited.then(() => children.delete(child))
  return {child, stderr: () => stderr, exited}
}

async function until(what: () => boolean | Promise<boolean>, label: string): Promise<void> {
  const deadline = Date.now() + 30_000
  while (!(await what())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${label}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL')
  await server?.stop('immediate').catch(() => undefined)
  rmSync(dir, {recursive: true, force: true})
})

describe.skipIf(pg.skip)(`a worker and database outages ${pg.label}`.trim(), () => {
  beforeAll(async () => {
    server = await startServer({dir: join(dir, 'data'), port: await freePort(), noFsync: true})
    await server.createDatabase('kt')
  })

  it('Ctrl-C while the database is down: one line, exit 130, no internal error', async () => {
    const url = server!.url('kt')
    await runSearch({
      storage: url,
      study: 'ctrl-c',
      objective: {name: 'counting_ones', delayMs: 100},
      optimizer: 'bohb',
      seed: 7,
      maxTrials: 500,
      createOnly: true,
    })
    const w = startWorker(url, 'ctrl-c')
    // let it record a few trials, then crash the server under it
    const {Client} = createRequire(import.meta.url)('pg') as typeof import('pg')
    await until(async () => {
      const c = new Client({connectionString: url})
      await c.connect()
      try {
        return Number((await c.query("SELECT COUNT(*) AS n FROM kt_trials WHERE status = 'ok'")).rows[0].n) >= 3
      } finally {
        await c.end()
      }
    }, 'three finished trials')
    await server!.stop('immediate')
    await until(() => w.stderr().includes('lost the database'), 'the worker to notice')
    w.child.kill('SIGINT')
    expect(await w.exited).toBe(130)
    const lines = w.stderr().trim().split('\n')
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(
      /^kt: lost the database postgresql:\/\/kt@127\.0\.0\.1:\d+\/kt \(.*\); retrying with backoff$/,
    )
    expect(lines[1]).toMatch(
      /^kt: stopped while the database postgresql:\/\/kt@127\.0\.0\.1:\d+\/kt is unreachable \(.*\): this process's running trials are taken over by other workers after the grace period \(60 s\)$/,
    )
    await server!.start()
  }, 60_000)

  it('a server that goes away while a worker opens the study: one line saying so, exit 2', async () => {
    const url = server!.url('kt')
    const {Client} = createRequire(import.meta.url)('pg') as typeof import('pg')
    // hold kt's schema table locked, so the worker's open waits on it, then crash the server under the wait
    const holder = new Client({connectionString: url})
    holder.on('error', () => undefined)
    await holder.connect()
    await holder.query('BEGIN; LOCK TABLE kt_meta IN ACCESS EXCLUSIVE MODE')
    const w = startWorker(url, 'ctrl-c')
    await until(
      async () =>
        Number(
          (
            await holder.query(
              "SELECT COUNT(*) AS n FROM pg_locks WHERE NOT granted AND relation = 'kt_meta'::regclass",
            )
          ).rows[0].n,
        ) > 0,
      'the worker to wait on the lock',
    )
    await server!.stop('immediate')
    await holder.end().catch(() => undefined)
    expect(await w.exited).toBe(2)
    expect(w.stderr()).toMatch(
      /^kt: postgresql:\/\/kt@127\.0\.0\.1:\d+\/kt: expected a server that stays up while kt opens the study \(start again once it is back\), got the server went away \(.*\)\n$/,
    )
    await server!.start()
  }, 60_000)
})
