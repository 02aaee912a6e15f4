import {mkdtempSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {openStorage} from '../../src/study/storage.js'
import {runSearch} from '../../src/study/search.js'

const dir = mkdtempSync(join(tmpdir(), 'kt-store-'))
const Database = createRequire(import.meta.url)('better-sqlite3')

describe('study store', () => {
  it('persists every finished trial with config, budget, loss, timings and status', async () => {
    const storage = join(dir, 'ok.sqlite')
    const out = await runSearch({
      storage,
      objective: {name: 'counting_ones'},
      optimizer: 'bohb',
      seed: 1,
      maxTrials: 90,
    })
    const store = await openStorage(storage, {readonly: true})
    const trials = await store.trials(out.study.name)
    await store.close()
    expect(trials).toHaveLength(90)
    expect(trials.map((t) => t.id)).toEqual([...Array(90).keys()])
    expect(
      trials.every(
        (t) => t.status === 'ok' && typeof t.loss === 'number' && t.durationMs !== null && t.finishedAt !== null,
      ),
    ).toBe(true)
    expect(trials.filter((t) => t.budget === 27)).toHaveLength(9)
    expect(trials.filter((t) => t.budget === 27).every((t) => t.continues !== null && t.checkpoint !== null)).toBe(true)
    expect(out.study.state).toBe('finished')
  })

  it('the same arguments again report the finished study; different ones under its name are refused with what differs', async () => {
    const storage = join(dir, 'dup.sqlite')
    const first = await runSearch({storage, study: 'x', objective: {name: 'branin'}, optimizer: 'random', maxTrials: 2})
    const again = await runSearch({storage, study: 'x', objective: {name: 'branin'}, optimizer: 'random', maxTrials: 2})
    expect(again.summary.evaluated).toBe(0)
    expect(again.trials.map((t) => [t.id, t.loss])).toEqual(first.trials.map((t) => [t.id, t.loss]))
    await expect(
      runSearch({storage, study: 'x', objective: {name: 'branin'}, optimizer: 'random', seed: 7, maxTrials: 3}),
    ).rejects.toThrow(
      /study x: expected the arguments it was created with \(--study NAME starts a new study; --resume x continues it, with new limits if given\), got --seed 7 \(stored: 42\); --trials 3 \(stored: 2\)$/,
    )
  })

  it('gives a one-line error for a file that is not SQLite, and leaves it alone', async () => {
    const path = join(dir, 'notes.txt')
    writeFileSync(path, 'these are my notes, not a database\n'.repeat(200))
    const before = readFileSync(path)
    await expect(openStorage(path)).rejects.toThrow(
      new RegExp(`^${path}: expected a kt study file \\(SQLite\\), got file is not a database$`),
    )
    expect(readFileSync(path).equals(before)).toBe(true)
  })

  it("gives a one-line error for another program's SQLite database, without writing to it", async () => {
    const path = join(dir, 'foreign.sqlite')
    const db = new Database(path)
    db.exec('CREATE TABLE invoices (id INTEGER PRIMARY KEY, amount REAL); INSERT INTO invoices VALUES (1, 9.5);')
    db.close()
    const mtime = statSync(path).mtimeMs
    const before = readFileSync(path)
    await expect(openStorage(path)).rejects.toThrow(
      /foreign\.sqlite: expected a kt study file, got a SQLite database of another program \(tables: invoices\)/,
    )
    expect(readFileSync(path).equals(before)).toBe(true)
    expect(statSync(path).mtimeMs).toBe(mtime)
  })

  it('gives a one-line error for a damaged study file', async () => {
    const path = join(dir, 'damaged.sqlite')
    await runSearch({storage: path, objective: {name: 'branin'}, optimizer: 'random', maxTrials: 300})
    // Checkpoint the WAL into the main file, then overwrite its pages after the header.
    const db = new Database(path)
    db.pragma('wal_checkpoint(TRUNCATE)')
    db.pragma('journal_mode = DELETE')
    db.close()
    const bytes = readFileSync(path)
    for (let i = 4096; i < bytes.length; i++) bytes[i] = (i * 131) & 0xff
    writeFileSync(path, bytes)
    let message = ''
    try {
      const store = await openStorage(path)
      await store.listStudies()
      await store.trials('branin-random-s42')
      await store.close()
    } catch (error) {
      message = (error as Error).message
    }
    expect(message).toMatch(/damaged\.sqlite: expected a (kt study file|usable kt study file)/)
    expect(message).not.toContain('\n')
  })

  it('names the missing table of a study file whose kt_meta is there but a table is gone, and a folder given as the file', async () => {
    const path = join(dir, 'half.sqlite')
    await runSearch({storage: path, objective: {name: 'branin'}, optimizer: 'random', maxTrials: 2})
    const db = new Database(path)
    db.exec('DROP TABLE trials')
    db.close()
    for (const options of [{}, {readonly: true}])
      await expect(openStorage(path, options)).rejects.toThrow(
        /half\.sqlite: expected a kt study file with studies and trials tables, got no table trials \(a damaged study file\)$/,
      )
    const {kt} = await import('../cli/helpers.js')
    const r = kt(['study', 'list', '--storage', dir])
    expect(r.status).toBe(2)
    expect(r.stderr).toBe(`kt: ${dir}: expected a study file (SQLite), got a folder\n`)
  })

  it('says which study is missing on --resume (kt worker: --study), and how to create a missing study file', async () => {
    const storage = join(dir, 'ok.sqlite')
    await expect(runSearch({storage, study: 'nope', resume: true})).rejects.toThrow(
      /--resume nope: expected an existing study \(counting_ones-bohb-s1\), got no such study/,
    )
    await expect(runSearch({storage, study: 'nope', resume: true, studyFlag: '--study'})).rejects.toThrow(
      /ok\.sqlite: --study nope: expected an existing study \(counting_ones-bohb-s1\), got no such study/,
    )
    await expect(runSearch({storage: join(dir, 'missing.sqlite'), study: 'a', resume: true})).rejects.toThrow(
      /missing\.sqlite: expected an existing kt study file \(run kt search --storage \S+missing\.sqlite \.\.\. first: it creates one\), got no such file/,
    )
  })
})
