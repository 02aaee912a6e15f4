// The acknowledgement of some of a PostgreSQL worker's section commits is "lost" after the commit
// happened (the storage throws StorageUnavailableError, as on a dropped connection): the worker
// retries, finds the trial leased to itself and takes it again. The study must come out as the
// one-worker study of the same seed, every trial evaluated and finished once.
import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {runSearch} from '../../src/study/search.js'
import {openStorage, StorageUnavailableError, type StudyStorage} from '../../src/study/storage.js'
import {postgresForTests} from '../helpers/postgres.js'

const pg = postgresForTests()
const dir = mkdtempSync(join(tmpdir(), 'kt-early-'))

/** The storage, with the acknowledgement of the sections numbered in `lose` lost after they committed. */
function losingAcks(storage: StudyStorage, lose: ReadonlySet<number>): {storage: StudyStorage; lost: () => number} {
  let sections = 0
  let lost = 0
  const wrapped = Object.create(storage) as StudyStorage
  wrapped.withStudyLock = async (study, fn, prelude) => {
    const out = await storage.withStudyLock(study, fn, prelude)
    if (lose.has(sections++)) {
      lost++
      throw new StorageUnavailableError(storage.label, 'acknowledgement lost (test)')
    }
    return out
  }
  return {storage: wrapped, lost: () => lost}
}

describe.skipIf(pg.skip)(`a section whose commit is not acknowledged ${pg.label}`.trim(), () => {
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
