// One contract, two storages: every test here runs against a SQLite file and a PostgreSQL
// database (a real server started by test/helpers/pg-setup.ts).
import {mkdtempSync} from 'node:fs'
import {hostname, tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {runSearch} from '../../src/study/search.js'
import {openStorage, type StudyStorage} from '../../src/study/storage.js'
import type {TrialRow} from '../../src/study/model.js'
import {postgresForTests} from '../helpers/postgres.js'

const dir = mkdtempSync(join(tmpdir(), 'kt-contract-'))
const pg = postgresForTests()
let fileCount = 0

interface Backend {
  readonly name: string
  readonly skip: boolean
  /** A fresh, empty storage spec. */
  fresh(): Promise<string>
}

const backends: Backend[] = [
  {name: 'sqlite', skip: false, fresh: async () => join(dir, `s${fileCount++}.sqlite`)},
  {name: `postgresql ${pg.label}`.trim(), skip: pg.skip, fresh: () => pg.database('kt_contract')},
]

/** What must match between two storages holding the same study. */
function essence(trials: readonly TrialRow[]): unknown[] {
  return trials.map((t) => [
    t.id,
    t.configId,
    t.budget,
    t.status,
    t.loss,
    t.continues,
    JSON.stringify(t.config),
    t.tellSeq,
    t.asksBefore,
    JSON.stringify(t.checkpoint),
  ])
}

async function withStorage<T>(spec: string, fn: (s: StudyStorage) => Promise<T>, mustExist = false): Promise<T> {
  const storage = await openStorage(spec, {mustExist})
  try {
    return await fn(storage)
  } finally {
    await storage.close()
  }
}

/** Runs SQL on a storage directly (its trial table is `trials` in SQLite, `kt_trials` in PostgreSQL): tests that age or damage a store. */
async function rawSql(spec: string, sql: (trials: string) => string): Promise<void> {
  if (spec.startsWith('postgres')) {
    const pgm = (await import('pg')).default
    const client = new pgm.Client({connectionString: spec})
    await client.connect()
    try {
      await client.query(sql('kt_trials'))
    } finally {
      await client.end()
    }
    return
  }
  const Database = (await import('better-sqlite3')).default
  const db = new Database(spec)
  try {
    db.exec(sql('trials'))
  } finally {
    db.close()
  }
}

const hints = (trials: readonly TrialRow[]): unknown[] => trials.map((t) => t.askHint ?? null)

const reference = (trials: number) =>
  runSearch({
    storage: ':memory:',
    study: 'ref',
    objective: {name: 'counting_ones'},
    optimizer: 'bohb',
    seed: 3,
    maxTrials: trials,
  })

for (const backend of backends) {
  describe.skipIf(backend.skip)(`study storage contract: ${backend.name}`, () => {
    it('creates, lists and reads studies; refuses a duplicate name; runs a BOHB study identical to the in-memory one', async () => {
      const spec = await backend.fresh()
      const out = await runSearch({
        storage: spec,
        study: 'a',
        objective: {name: 'counting_ones'},
        optimizer: 'bohb',
        seed: 3,
        maxTrials: 60,
      })
      expect(out.summary.stoppedBy).toBe('trials')
      expect(out.study.state).toBe('finished')
      expect(essence(out.trials)).toEqual(essence((await reference(60)).trials))
      await withStorage(spec, async (s) => {
        const list = await s.listStudies()
        expect(list.map((x) => [x.name, x.trials, x.ok, x.failed, x.running, x.state])).toEqual([
          ['a', 60, 60, 0, 0, 'finished'],
        ])
        expect(list[0].bestLoss).toBe(Math.min(...out.trials.map((t) => t.loss!)))
        expect((await s.getStudy('a'))?.optimizer).toBe('bohb')
        expect(await s.getStudy('nope')).toBeUndefined()
        const trials = await s.trials('a')
        expect(trials.map((t) => t.id)).toEqual([...Array(60).keys()])
        // each finished trial keeps who finished it (this process) and was started once
        expect(new Set(trials.map((t) => `${t.owner?.replace(/\/[0-9a-f]+$/, '')} ${t.attempts}`))).toEqual(
          new Set([`${hostname().replace(/\//g, '_')}/${process.pid} 1`]),
        )
      })
      // the dashboard's read-only view reads the same study from either storage
      const {openStudyReader} = await import('../../src/study/reader.js')
      const reader = await openStudyReader(spec)
      try {
        expect((await reader.listStudies()).map((x) => [x.name, x.trials, x.ok])).toEqual([['a', 60, 60]])
        expect((await reader.getStudy('a'))?.trials).toHaveLength(60)
        expect(Object.keys(await reader.versions())).toEqual(['a'])
      } finally {
        await reader.close()
      }
      await expect(
        runSearch({storage: spec, study: 'a', objective: {name: 'branin'}, optimizer: 'random', maxTrials: 2}),
      ).rejects.toThrow(
        /study a: expected the arguments it was created with .*got --objective "branin" \(stored: "counting_ones"\); --optimizer "random" \(stored: "bohb"\)/,
      )
    })

    it("stores each model-based ask's replay hint; old, wrong and damaged hints replay by scoring, and the study ends the same", async () => {
      const spec = await backend.fresh()
      const first = await runSearch({
        storage: spec,
        study: 'h',
        objective: {name: 'counting_ones'},
        optimizer: 'bohb',
        seed: 3,
        maxTrials: 60,
      })
      const ref = (await reference(100)).trials
      // the hints survive the storage's text round trip exactly as the asker made them
      expect(hints(first.trials)).toEqual(hints(ref.slice(0, 60)))
      const hinted = first.trials.filter((t) => t.askHint !== null)
      expect(hinted.length).toBeGreaterThan(10)
      expect(
        hinted.every((t) => t.info?.model_based === true && Number.isInteger((t.askHint as {pick: number}).pick)),
      ).toBe(true)
      // rows as an older kt left them (no hint), a wrong pick, unreadable text: the resumed replica re-scores those asks
      await rawSql(
        spec,
        (trials) => `UPDATE ${trials} SET ask_hint = NULL WHERE id % 3 = 0;
        UPDATE ${trials} SET ask_hint = '{"pick":63}' WHERE id % 3 = 1 AND ask_hint IS NOT NULL;
        UPDATE ${trials} SET ask_hint = '{pick' WHERE id = ${hinted[hinted.length - 1].id}`,
      )
      const resumed = await runSearch({storage: spec, study: 'h', resume: true, maxTrials: 100})
      expect(resumed.summary.replayed).toBe(60)
      expect(essence(resumed.trials)).toEqual(essence(ref))
      expect(hints(resumed.trials.slice(60))).toEqual(hints(ref.slice(60)))
    })

    it('upgrades a version 2 store in place: a viewer reads it as it is, the first writer adds ask_hint, and its trials replay by scoring', async () => {
      const spec = await backend.fresh()
      await runSearch({
        storage: spec,
        study: 'v2',
        objective: {name: 'counting_ones'},
        optimizer: 'bohb',
        seed: 3,
        maxTrials: 60,
      })
      await rawSql(
        spec,
        (trials) => `ALTER TABLE ${trials} DROP COLUMN ask_hint; UPDATE kt_meta SET value = '2' WHERE key = 'version'`,
      )
      const viewer = await openStorage(spec, {readonly: true})
      try {
        expect((await viewer.trialsSince('v2', 58, 58, [])).trials.map((t) => [t.id, t.askHint])).toEqual([
          [58, null],
          [59, null],
        ])
        expect(hints(await viewer.trials('v2'))).toEqual(Array(60).fill(null))
      } finally {
        await viewer.close()
      }
      const resumed = await runSearch({storage: spec, study: 'v2', resume: true, maxTrials: 100})
      const ref = (await reference(100)).trials
      expect(essence(resumed.trials)).toEqual(essence(ref))
      expect(hints(resumed.trials)).toEqual([...Array(60).fill(null), ...hints(ref.slice(60))])
      await withStorage(spec, async (s) => expect((await s.changes('v2', 99, 99)).map((t) => t.id)).toEqual([99]))
    })

    it('finishes a trial only while it is leased to the finisher, and only once', async () => {
      const spec = await backend.fresh()
      await runSearch({
        storage: spec,
        study: 'l',
        objective: {name: 'branin'},
        optimizer: 'random',
        seed: 1,
        maxTrials: 1,
      })
      await withStorage(spec, async (s) => {
        const t = new Date().toISOString()
        const result = {
          status: 'ok' as const,
          loss: 1.5,
          startedAt: t,
          finishedAt: t,
          durationMs: 1,
          tellSeq: 1,
          asksBefore: 2,
        }
        await s.withStudyLock('l', async (tx) => {
          expect(tx.state).toBe('finished')
          await tx.insertTrial({id: 1, configId: 'x', config: {x1: 0, x2: 0}, budget: 1}, 'host-a/1/aa', t)
        })
        await s.withStudyLock('l', async (tx) => {
          const leases = await tx.leases()
          expect(leases).toEqual([{id: 1, owner: 'host-a/1/aa', heartbeatMs: expect.any(Number), attempts: 1}])
          expect(await tx.finish(1, 'host-b/2/bb', result)).toBe(false)
          await tx.claim(1, 'host-b/2/bb', t)
        })
        // (writes take effect at the end of the section)
        await s.withStudyLock('l', async (tx) => {
          // the first owner's late result is refused: the trial is the new owner's now
          expect(await tx.finish(1, 'host-a/1/aa', result)).toBe(false)
          expect(await tx.finish(1, 'host-b/2/bb', result)).toBe(true)
          expect(await tx.finish(1, 'host-b/2/bb', result)).toBe(false)
        })
        const rows = await s.trials('l')
        expect(rows[1]).toMatchObject({status: 'ok', loss: 1.5, attempts: 2, owner: 'host-b/2/bb', tellSeq: 1})
        const changes = await s.withStudyLock('l', (tx) => tx.changes(1, 1))
        expect(changes.map((r) => r.id)).toEqual([1])
      })
    })

    it('records a prelude tell as the next in the order, with every ask before it, and returns it with the unseen trials and the leases', async () => {
      const spec = await backend.fresh()
      await runSearch({
        storage: spec,
        study: 'p',
        objective: {name: 'counting_ones'},
        optimizer: 'random',
        seed: 1,
        maxTrials: 2,
      })
      await withStorage(spec, async (s) => {
        const t = new Date().toISOString()
        const config = (await s.trials('p'))[0].config
        // trials 2 and 3 running, leased to a and b; the replica has seen asks 0-1 and tells 0-1
        await s.withStudyLock('p', async (tx) => {
          await tx.insertTrial({id: 2, configId: 'c2', config, budget: 9}, 'host-a/1/aa', t)
          await tx.insertTrial({id: 3, configId: 'c3', config, budget: 9}, 'host-b/2/bb', t)
        })
        // a catch-up read outside the lock sees the same unseen trials
        expect((await s.changes('p', 2, 2)).map((r) => [r.id, r.status])).toEqual([
          [2, 'running'],
          [3, 'running'],
        ])
        const result = {
          status: 'ok' as const,
          loss: -3.25,
          values: [-3.25],
          startedAt: t,
          finishedAt: t,
          durationMs: 5,
          checkpoint: {counts: [1, 2]},
        }
        // b's late prelude for a trial it does not hold is refused; a's is the next tell (2) after 4 asks
        const seen = await s.withStudyLock(
          'p',
          async (tx) => {
            expect(tx.recorded).toBe(true)
            const rows = await tx.changes(2, 2)
            const leases = await tx.leases()
            return {
              rows: rows.map((r) => [r.id, r.status, r.tellSeq, r.asksBefore, r.loss]),
              leases: leases.map((l) => [l.id, l.owner]),
            }
          },
          {finish: {trialId: 2, owner: 'host-a/1/aa', result}, since: {askCount: 2, tellSeq: 2}},
        )
        expect(seen).toEqual({
          rows: [
            [2, 'ok', 2, 4, -3.25],
            [3, 'running', null, null, null],
          ],
          leases: [[3, 'host-b/2/bb']],
        })
        const stale = await s.withStudyLock('p', async (tx) => tx.recorded, {
          finish: {trialId: 2, owner: 'host-b/2/bb', result},
          since: {askCount: 4, tellSeq: 3},
        })
        expect(stale).toBe(false)
        // a continued trial's checkpoint, read with the section's commit
        const checkpoint = await s.withStudyLock('p', async (tx) => ({read: tx.checkpointAfterCommit(2)}))
        expect(await checkpoint.read).toEqual({counts: [1, 2]})
        expect((await s.trials('p'))[2]).toMatchObject({
          status: 'ok',
          tellSeq: 2,
          asksBefore: 4,
          owner: 'host-a/1/aa',
          values: [-3.25],
        })
      })
    })

    it("wakes a waiting worker at another process's tell", async () => {
      const spec = await backend.fresh()
      await runSearch({
        storage: spec,
        study: 'w',
        objective: {name: 'branin'},
        optimizer: 'random',
        seed: 1,
        maxTrials: 1,
      })
      // longer than the test's timeout: only a notification (or SQLite's short backoff) ends the wait in time
      const longWaitMs = 120_000
      await withStorage(spec, (a) =>
        withStorage(spec, async (b) => {
          // a worker that was not listening when its section began looks again at once (and listens from then on)
          const first = await a.withStudyLock('w', async (tx) => tx.changeMark)
          await a.waitForChange('w', longWaitMs, undefined, first)
          const mark = await a.withStudyLock('w', async (tx) => tx.changeMark)
          const waiting = a.waitForChange('w', longWaitMs, undefined, mark)
          await b.withStudyLock('w', async (tx) => tx.notify())
          await waiting
        }),
      )
    })

    it('rolls back a locked section that throws', async () => {
      const spec = await backend.fresh()
      await runSearch({
        storage: spec,
        study: 'r',
        objective: {name: 'branin'},
        optimizer: 'random',
        seed: 1,
        maxTrials: 1,
      })
      await withStorage(spec, async (s) => {
        await expect(
          s.withStudyLock('r', async (tx) => {
            await tx.insertTrial({id: 1, configId: 'x', config: {x1: 0, x2: 0}, budget: 1}, 'h/1/a', 't')
            throw new Error('boom')
          }),
        ).rejects.toThrow('boom')
        expect((await s.trials('r')).length).toBe(1)
      })
    })

    it('takes over a trial whose worker stopped heart-beating, evaluates it once more, and completes the study', async () => {
      const spec = await backend.fresh()
      const controller = new AbortController()
      let n = 0
      // 200 ms grace: a remote worker silent for longer is taken for dead
      await runSearch({
        storage: spec,
        study: 'h',
        objective: {name: 'counting_ones'},
        optimizer: 'bohb',
        seed: 3,
        maxTrials: 40,
        graceMs: 200,
        signal: controller.signal,
        onTrial: () => ++n === 10 && controller.abort(),
      })
      await withStorage(spec, async (s) => {
        // trial 10 was handed out when the run stopped; pretend a worker on another machine holds it and went silent
        await s.withStudyLock('h', async (tx) => tx.claim(10, 'elsewhere/4242/dead', 't'))
        await s.heartbeat('h', 'elsewhere/4242/dead')
      })
      const t0 = Date.now()
      const out = await runSearch({storage: spec, study: 'h', resume: true})
      expect(Date.now() - t0).toBeGreaterThanOrEqual(150)
      expect(out.summary.rerun).toBe(1)
      expect(out.summary.replayed).toBe(10)
      expect(out.study.state).toBe('finished')
      expect(out.trials[10].attempts).toBe(3)
      // (while trial 10 was held the worker went on asking, so the tell order differs from a one-worker run)
      expect(out.trials.map((t) => [t.id, t.status])).toEqual([...Array(40).keys()].map((i) => [i, 'ok']))
    })

    it('shares one study between two concurrent runners: every trial evaluated once', async () => {
      const spec = await backend.fresh()
      const evalLog = join(dir, `shared-${backend.name.split(' ')[0]}-${fileCount++}.log`)
      await runSearch({
        storage: spec,
        study: 'c',
        objective: {name: 'counting_ones', delayMs: 3, evalLog},
        optimizer: 'bohb',
        seed: 2,
        maxTrials: 1,
      })
      const [a, b] = await Promise.all([
        runSearch({storage: spec, study: 'c', resume: true, maxTrials: 90}),
        runSearch({storage: spec, study: 'c', resume: true, maxTrials: 90}),
      ])
      expect(a.summary.evaluated + b.summary.evaluated).toBe(89)
      const ids = (await import('node:fs'))
        .readFileSync(evalLog, 'utf8')
        .trim()
        .split('\n')
        .map((l) => Number(l.split(' ')[0]))
      expect(ids.sort((x, y) => x - y)).toEqual([...Array(90).keys()])
      const again = await runSearch({storage: spec, study: 'c', resume: true})
      expect(again.summary.evaluated).toBe(0)
      expect(again.study.state).toBe('finished')
    })

    it('copies a study to the other storage kind and back, and the copy resumes where the original stopped', async () => {
      const spec = await backend.fresh()
      const controller = new AbortController()
      let n = 0
      await runSearch({
        storage: spec,
        study: 'cp',
        objective: {name: 'counting_ones'},
        optimizer: 'bohb',
        seed: 3,
        maxTrials: 100,
        signal: controller.signal,
        onTrial: () => ++n === 85 && controller.abort(),
      })
      const other = backends.find((b) => b !== backend && !b.skip) ?? backend
      const target = await other.fresh()
      const {copyStudy} = await import('../../src/study/copy.js')
      const copied = await copyStudy(spec, target, 'cp')
      expect(copied.trials).toBe(86)
      await expect(copyStudy(spec, target, 'cp')).rejects.toThrow(
        /study cp: expected a study name not yet in the target storage, got an existing study/,
      )
      // the replay hints travel with the trials, and so do who finished each and its attempts (a running trial arrives released)
      const copiedRows = await withStorage(target, (s) => s.trials('cp'))
      const sourceRows = await withStorage(spec, (s) => s.trials('cp'))
      expect(hints(copiedRows)).toEqual(hints(sourceRows))
      expect(copiedRows.map((t) => [t.owner ?? null, t.attempts])).toEqual(
        sourceRows.map((t) => [t.status === 'running' ? null : t.owner, t.attempts]),
      )
      expect(copiedRows.filter((t) => t.owner !== null && t.owner !== undefined)).toHaveLength(85)
      const resumed = await runSearch({storage: target, study: 'cp', resume: true})
      expect(resumed.summary.replayed).toBe(85)
      expect(resumed.summary.rerun).toBe(1)
      expect(essence(resumed.trials)).toEqual(essence((await reference(100)).trials))
    })
  })
}

describe.skipIf(pg.skip)(`PostgreSQL bad input ${pg.label}`.trim(), () => {
  const oneLine = (e: unknown): string => {
    const message = (e as Error).message
    expect(message).not.toContain('\n')
    return message
  }

  it('names the storage and what was expected: refused connection, wrong password, no database, no schema, another version', async () => {
    const {freePort} = await import('../../src/db/server.js')
    const port = await freePort()
    const refused = await openStorage(`postgresql://kt:topsecret@127.0.0.1:${port}/kt`).catch(oneLine)
    expect(refused).toBe(
      `postgresql://kt:***@127.0.0.1:${port}/kt: expected a PostgreSQL server listening at 127.0.0.1:${port}, got connection refused`,
    )

    const admin = new URL(pg.adminUrl!)
    const wrong = new URL(admin)
    wrong.password = 'not-the-password'
    const denied = await openStorage(wrong.toString()).catch(oneLine)
    expect(denied).toMatch(
      /^postgresql:\/\/kt:\*\*\*@127\.0\.0\.1:\d+\/postgres: expected the right password for user kt, got password authentication failed$/,
    )
    expect(denied).not.toContain('not-the-password')

    const missing = new URL(admin)
    missing.pathname = '/no_such_db'
    expect(await openStorage(missing.toString()).catch(oneLine)).toMatch(
      /\/no_such_db: expected an existing database no_such_db \(create it first, e\.g\. createdb no_such_db\), got no database no_such_db$/,
    )

    const empty = await pg.database('kt_empty')
    expect(await openStorage(empty, {readonly: true}).catch(oneLine)).toMatch(
      /kt_empty_\w+: expected a database with kt's study schema \(kt_meta, format kt-study version 3; kt search creates it\), got a database without it$/,
    )
    expect(await openStorage(empty, {mustExist: true}).catch(oneLine)).toMatch(/got a database without it$/)

    const future = await pg.database('kt_future')
    await (await openStorage(future)).close()
    const pgm = (await import('pg')).default
    const client = new pgm.Client({connectionString: future})
    await client.connect()
    await client.query("UPDATE kt_meta SET value = '99' WHERE key = 'version'")
    await client.end()
    expect(await openStorage(future).catch(oneLine)).toMatch(
      /kt_future_\w+: expected study format version 3 \(this kt reads 2, 3\), got version 99 \(another kt version's schema\)$/,
    )

    // a valid kt_meta whose tables are gone: which one, exit 2, for writers and readers alike
    const half = await pg.database('kt_half')
    await (await openStorage(half)).close()
    const halfClient = new pgm.Client({connectionString: half})
    await halfClient.connect()
    await halfClient.query('DROP TABLE kt_trials; DROP TABLE kt_studies')
    await halfClient.end()
    for (const options of [{}, {readonly: true}, {mustExist: true}])
      expect(await openStorage(half, options).catch(oneLine)).toMatch(
        /kt_half_\w+: expected kt's study schema \(kt_meta, kt_studies and kt_trials\), got no table kt_studies and no table kt_trials \(a damaged schema: restore it, or use another database\)$/,
      )
    const {kt} = await import('../cli/helpers.js')
    const r = kt(['study', 'list', '--storage', half])
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(
      /^kt: postgresql:\/\/kt:\*\*\*@127\.0\.0\.1:\d+\/kt_half_\w+: expected kt's study schema \(kt_meta, kt_studies and kt_trials\), got no table kt_studies and no table kt_trials \(.*\)\n$/,
    )
  })
})

describe('SQLite schema versions', () => {
  it("upgrades a version 1 file in place and refuses another kt version's schema", async () => {
    const path = join(dir, 'versions.sqlite')
    await runSearch({
      storage: path,
      study: 'v',
      objective: {name: 'branin'},
      optimizer: 'random',
      seed: 1,
      maxTrials: 3,
    })
    const Database = (await import('better-sqlite3')).default
    const db = new Database(path)
    // the version 1 layout: no lease columns, no replay hints
    db.exec(`DROP INDEX trials_tell; DROP INDEX trials_running; ALTER TABLE trials DROP COLUMN owner; ALTER TABLE trials DROP COLUMN heartbeat_ms;
      ALTER TABLE trials DROP COLUMN attempts; ALTER TABLE trials DROP COLUMN ask_hint; UPDATE kt_meta SET value = '1' WHERE key = 'version'`)
    db.close()
    const resumed = await runSearch({storage: path, study: 'v', resume: true, maxTrials: 5})
    expect(resumed.trials).toHaveLength(5)
    const db2 = new Database(path)
    expect(db2.prepare("SELECT value FROM kt_meta WHERE key = 'version'").get()).toEqual({value: '3'})
    db2.exec("UPDATE kt_meta SET value = '7' WHERE key = 'version'")
    db2.close()
    await expect(openStorage(path)).rejects.toThrow(
      /versions\.sqlite: expected study format version 3 \(this kt reads 1, 2, 3\), got version 7 \(another kt version's schema\)/,
    )
  })
})
