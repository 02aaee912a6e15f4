// Crash tests of workers on PostgreSQL (issue 11): 4 `kt worker` processes, 20 random kill -9s
// each followed by a restart; and a PostgreSQL restart in the middle of a study. At the end every
// trial id is finished exactly once (none lost, none duplicated: ids 0..n-1, each with its own
// place in the tell order), the study is complete, and a fresh replay of the stored history by a
// new process agrees with it (evaluates nothing, fails on no trial).
import {spawn, type ChildProcess} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {freePort, startServer, type PgServer} from '../../src/db/server.js'
import {runSearch} from '../../src/study/search.js'
import {openStorage} from '../../src/study/storage.js'
import type {TrialRow} from '../../src/study/model.js'
import type {Outcome} from '../../src/study/evaluate.js'
import type {Trial} from '../../src/search/types.js'
import {packageRoot} from '../../src/util/paths.js'
import {postgresForTests} from '../helpers/postgres.js'

const pg = postgresForTests()
const dir = mkdtempSync(join(tmpdir(), 'kt-crash-'))
const children = new Set<ChildProcess>()

interface Worker {
  child: ChildProcess
  stderr: string
  exited: Promise<number | null>
}

/** A `kt worker` process from the build, as users run it; its host name is its own, so leases expire by heartbeat, not by pid. */
function startWorker(url: string, study: string, host: string): Worker {
  const env: NodeJS.ProcessEnv = {...process.env, KT_NO_PROGRESS: '1', KT_WORKER_HOST: host}
  delete env.NODE_ENV
  const child = spawn(
    process.execPath,
    [join(packageRoot, 'bin', 'kt.js'), 'worker', '--storage', url, '--study', study],
    {cwd: packageRoot, env, stdio: ['ignore', 'ignore', 'pipe']},
  )
  children.add(child)
  const worker: Worker = {
    child,
    stderr: '',
    exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
  }
  child.stderr!.on('data', (d) => (worker.stderr += d))
  void worker.exited.then(() => children.delete(child))
  return worker
}

async function finishedCount(url: string, study: string): Promise<number> {
  const s = await openStorage(url, {readonly: true})
  try {
    return (await s.listStudies()).find((x) => x.name === study)?.ok ?? 0
  } finally {
    await s.close()
  }
}

/** Every trial 0..n-1 finished exactly once, in one tell order. */
function expectExactlyOnce(trials: readonly TrialRow[], n: number): void {
  expect(trials.map((t) => t.id)).toEqual([...Array(n).keys()])
  expect(trials.filter((t) => t.status !== 'ok').map((t) => [t.id, t.status, t.error])).toEqual([])
  expect(trials.map((t) => t.tellSeq).sort((a, b) => a! - b!)).toEqual([...Array(n).keys()])
  for (const t of trials) expect(t.asksBefore!).toBeGreaterThan(t.id)
}

async function createStudy(url: string, study: string, trials: number, delayMs: number): Promise<void> {
  // 1 s grace: a killed worker's trial is taken over a second after its last heartbeat
  await runSearch({
    storage: url,
    study,
    objective: {name: 'counting_ones', delayMs},
    optimizer: 'bohb',
    seed: 7,
    maxTrials: trials,
    graceMs: 1000,
    createOnly: true,
  })
}

afterAll(() => {
  for (const c of children) c.kill('SIGKILL')
  rmSync(dir, {recursive: true, force: true})
})

describe.skipIf(pg.skip)(`workers on PostgreSQL under kill -9 ${pg.label}`.trim(), () => {
  it('4 workers, 20 random kill -9s each followed by a restart: every trial finished once, none lost, study complete', async () => {
    const url = await pg.database('kt_crash')
    const study = 'crash'
    const total = 160
    await createStudy(url, study, total, 25)
    let spawned = 0
    const workers: Worker[] = Array.from({length: 4}, () => startWorker(url, study, `host-${spawned++}`))
    let kills = 0
    // a kill every 5 finished trials, at a random worker: adapts to the machine's speed
    let seed = 12345
    const random = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff
    const deadline = Date.now() + 90_000
    while (kills < 20 && Date.now() < deadline) {
      if ((await finishedCount(url, study)) >= 5 * (kills + 1)) {
        const k = Math.floor(random() * workers.length)
        workers[k].child.kill('SIGKILL')
        await workers[k].exited
        workers[k] = startWorker(url, study, `host-${spawned++}`)
        kills++
      }
      await new Promise((r) => setTimeout(r, 20))
    }
    expect(kills).toBe(20)
    const codes = await Promise.all(workers.map((w) => w.exited))
    expect(workers.map((w) => w.stderr)).toEqual(['', '', '', ''])
    expect(codes).toEqual([0, 0, 0, 0])
    const storage = await openStorage(url)
    const trials = await storage.trials(study)
    expect((await storage.getStudy(study))?.state).toBe('finished')
    await storage.close()
    expectExactlyOnce(trials, total)
    // killed workers' trials were taken over (evaluated again) rather than lost
    expect(trials.filter((t) => (t.attempts ?? 1) > 1).length).toBeGreaterThan(0)
    const replay = await runSearch({storage: url, study, resume: true})
    expect(replay.summary.evaluated).toBe(0)
    expect(replay.summary.replayed).toBe(total)
  })
})

describe.skipIf(pg.skip)(`workers across a PostgreSQL restart ${pg.label}`.trim(), () => {
  let server: PgServer | undefined
  afterAll(async () => {
    await server?.stop('immediate').catch(() => undefined)
  })

  it('retry with backoff, say so once, and finish the study with every trial finished once', async () => {
    server = await startServer({dir: join(dir, 'restart-data'), port: await freePort(), noFsync: true})
    await server.createDatabase('kt')
    const url = server.url('kt')
    const study = 'restart'
    const total = 120
    await createStudy(url, study, total, 25)
    let spawned = 0
    const workers = Array.from({length: 4}, () => startWorker(url, study, `host-${spawned++}`))
    const deadline = Date.now() + 60_000
    while ((await finishedCount(url, study)) < 40 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
    // a crash of the server (no clean shutdown), down for 1.5 s
    await server.stop('immediate')
    await new Promise((r) => setTimeout(r, 1500))
    await server.start()
    const codes = await Promise.all(workers.map((w) => w.exited))
    expect(codes).toEqual([0, 0, 0, 0])
    for (const w of workers) {
      const lost = w.stderr.split('\n').filter((l) => l.includes('lost the database'))
      expect(lost.length).toBe(1)
      expect(lost[0]).toMatch(
        /^kt: lost the database postgresql:\/\/kt@127\.0\.0\.1:\d+\/kt \(.*\); retrying with backoff$/,
      )
    }
    const storage = await openStorage(url)
    const trials = await storage.trials(study)
    expect((await storage.getStudy(study))?.state).toBe('finished')
    await storage.close()
    expectExactlyOnce(trials, total)
  })
})

// A section commits asynchronously and is made durable by the barrier sent after its COMMIT
// (src/study/storage-postgres-section.ts, DURABILITY_BARRIER), so other workers may read it before it is durable.
// Here the server crashes (immediate stop: its WAL buffers are lost) three times while two
// workers run sections back to back; the WAL writer is slowed to 10 s so that only the barriers
// make sections durable. Every result a worker reported (onTrial) before a crash must be in the
// store after it, no result may be reported twice, and at the end every trial is finished once.
describe.skipIf(pg.skip)(`sections committed asynchronously across PostgreSQL crashes ${pg.label}`.trim(), () => {
  let server: PgServer | undefined
  afterAll(async () => {
    await server?.stop('immediate').catch(() => undefined)
  })

  it('a reported result survives the crash, none is reported twice, every trial is finished once', async () => {
    server = await startServer({dir: join(dir, 'async-data'), port: await freePort(), noFsync: true})
    await server.createDatabase('kt')
    const url = server.url('kt')
    const admin = await openStorage(url)
    await admin.close()
    {
      const pgc = new (createRequire(import.meta.url)('pg') as typeof import('pg')).Client({connectionString: url})
      await pgc.connect()
      // unflushed WAL stays in the server's buffers until a synchronous commit writes it (or 10 s pass)
      await pgc.query("ALTER SYSTEM SET wal_writer_delay = '10s'")
      await pgc.query("ALTER SYSTEM SET wal_writer_flush_after = '64MB'")
      await pgc.query('SELECT pg_reload_conf()')
      await pgc.end()
    }
    const study = 'async'
    const total = 150
    await runSearch({
      storage: url,
      study,
      objective: {name: 'counting_ones', delayMs: 2},
      optimizer: 'bohb',
      seed: 11,
      maxTrials: total,
      graceMs: 600,
      createOnly: true,
    })
    const reported: Array<{id: number; loss: number | undefined}> = []
    const onTrial = (trial: Trial, outcome: Outcome): void => {
      reported.push({id: trial.id, loss: outcome.status === 'ok' ? outcome.loss : undefined})
    }
    const logs: string[] = []
    const workers = [0, 1].map(() => runSearch({storage: url, study, resume: true, onTrial, log: (l) => logs.push(l)}))
    const crashes: Array<{before: number; missing: unknown[]}> = []
    for (const at of [30, 70, 110]) {
      const deadline = Date.now() + 30_000
      while (reported.length < at && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2))
      const before = reported.slice()
      await server.stop('immediate')
      await server.start()
      // read at once (the workers are backing off): every reported result is there
      const s = await openStorage(url, {mustExist: true})
      const byId = new Map((await s.trials(study)).map((t) => [t.id, t]))
      await s.close()
      if (process.env.KT_DEBUG)
        console.error(
          JSON.stringify(before.slice(0, 3)),
          JSON.stringify([...byId.values()].slice(0, 3).map((t) => [t.id, t.status, t.loss])),
        )
      crashes.push({
        before: before.length,
        missing: before
          .filter((r) => byId.get(r.id)?.status !== 'ok' || byId.get(r.id)?.loss !== r.loss)
          .map((r) => r.id),
      })
    }
    const outs = await Promise.all(workers)
    expect(crashes.map((c) => c.before).every((n, i) => n >= [30, 70, 110][i])).toBe(true)
    expect(crashes.map((c) => c.missing)).toEqual([[], [], []])
    const ids = reported.map((r) => r.id).sort((a, b) => a - b)
    expect(ids).toEqual([...new Set(ids)])
    expect(logs.filter((l) => l.includes('lost the database')).length).toBeGreaterThan(0)
    const storage = await openStorage(url)
    const trials = await storage.trials(study)
    expect((await storage.getStudy(study))?.state).toBe('finished')
    await storage.close()
    expectExactlyOnce(trials, total)
    expect(outs.every((o) => o.summary.stoppedBy === 'done' || o.summary.stoppedBy === 'trials')).toBe(true)
  })
})
