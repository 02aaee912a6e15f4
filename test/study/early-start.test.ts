// A PostgreSQL worker begins evaluating the trial a section handed out as soon as the section's
// COMMIT is sent (src/study/optimize.ts). Here the acknowledgement of some of those commits is
// "lost" after the commit happened (the storage throws StorageUnavailableError, as on a dropped
// connection): the worker retries, finds the trial leased to itself, and must use the evaluation
// it already began instead of evaluating the trial a second time. The study must come out as the
// one-worker study of the same seed, every trial evaluated and finished once.
import {mkdtempSync, readFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {runSearch} from '../../src/study/search.js'
import {openStorage, StorageUnavailableError, type StudyStorage} from '../../src/study/storage.js'
import {postgresForTests} from '../helpers/postgres.js'

const pg = postgresForTests()
const dir = mkdtempSync(join(tmpdir(), 'kt-early-'))

/** The storage, with the acknowledgement of the sections numbered in `lose` (those that let work begin early) lost after they committed. */
function losingAcks(storage: StudyStorage, lose: ReadonlySet<number>): {storage: StudyStorage; lost: () => number} {
  let early = 0
  let lost = 0
  const wrapped = Object.create(storage) as StudyStorage
  wrapped.withStudyLock = async (study, fn, prelude, committing) => {
    let began = false
    const out = await storage.withStudyLock(study, fn, prelude, (value) => {
      began = true
      committing?.(value)
    })
    if (began && lose.has(early++)) {
      lost++
      throw new StorageUnavailableError(storage.label, 'acknowledgement lost (test)')
    }
    return out
  }
  return {storage: wrapped, lost: () => lost}
}

describe.skipIf(pg.skip)(`evaluation begun before the commit is acknowledged ${pg.label}`.trim(), () => {
  it('a lost acknowledgement neither evaluates a trial twice nor changes the study', async () => {
    const url = await pg.database('kt_early')
    const evalLog = join(dir, 'evals.log')
    const total = 30
    await runSearch({
      storage: url,
      study: 'e',
      objective: {name: 'counting_ones', delayMs: 2, evalLog},
      optimizer: 'bohb',
      seed: 2,
      maxTrials: total,
      createOnly: true,
    })
    const store = await openStorage(url, {mustExist: true})
    const {storage, lost} = losingAcks(store, new Set([2, 9, 17]))
    const out = await runSearch({storage: url, store: storage, study: 'e', resume: true, log: () => undefined})
    await store.close()
    expect(lost()).toBe(3)
    const ids = readFileSync(evalLog, 'utf8')
      .trim()
      .split('\n')
      .map((l) => Number(l.split(' ')[0]))
    expect(ids.slice().sort((a, b) => a - b)).toEqual([...Array(total).keys()])
    expect(out.study.state).toBe('finished')
    expect(out.trials.every((t) => t.status === 'ok')).toBe(true)
    // the trials whose hand-out was acknowledged late were claimed again by the same worker
    expect(out.trials.filter((t) => t.attempts === 2)).toHaveLength(3)
    const reference = await runSearch({
      storage: ':memory:',
      study: 'ref',
      objective: {name: 'counting_ones'},
      optimizer: 'bohb',
      seed: 2,
      maxTrials: total,
    })
    const essence = (trials: typeof out.trials): unknown[] =>
      trials.map((t) => [t.id, t.configId, t.budget, t.loss, t.continues, t.tellSeq, t.asksBefore])
    expect(essence(out.trials)).toEqual(essence(reference.trials))
  })
})

// Another worker's section may be read before it is durable (src/study/storage-postgres-section.ts,
// DURABILITY_BARRIER); a server crash then loses it and ends every connection. A worker that met
// the crash only in a heartbeat (whose errors are ignored) reconnects silently: its next section
// must not run on the replica it built from the old connection's reads.
describe.skipIf(pg.skip)(`reads tied to one connection ${pg.label}`.trim(), () => {
  it('refuses a section, or a read, on a connection remade since the reads it builds on', async () => {
    const url = await pg.database('kt_session')
    await runSearch({storage: url, study: 's', objective: {name: 'branin'}, optimizer: 'random', seed: 1, maxTrials: 2})
    const store = await openStorage(url, {mustExist: true})
    try {
      const session = {}
      expect((await store.changes('s', 0, 0, session)).length).toBe(2)
      const pgm = createRequire(import.meta.url)('pg') as typeof import('pg')
      const admin = new pgm.Client({connectionString: url})
      await admin.connect()
      await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'kt'",
      )
      await admin.end()
      // a heartbeat reconnects (or first meets the lost connection, which the runner ignores)
      await store.heartbeat('s', 'nobody').catch(() => undefined)
      await store.heartbeat('s', 'nobody')
      let ran = false
      await expect(
        store.withStudyLock(
          's',
          async () => {
            ran = true
          },
          {session, since: {askCount: 2, tellSeq: 2}},
        ),
      ).rejects.toThrow(/reconnected/)
      expect(ran).toBe(false)
      await expect(store.changes('s', 2, 2, session)).rejects.toThrow(StorageUnavailableError)
      // a replica rebuilt from the store carries on
      const fresh = {}
      expect((await store.changes('s', 0, 0, fresh)).length).toBe(2)
      expect(
        await store.withStudyLock('s', async (tx) => tx.state, {session: fresh, since: {askCount: 2, tellSeq: 2}}),
      ).toBe('finished')
    } finally {
      await store.close()
    }
  })
})
