import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {mkdtempSync} from 'node:fs'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {syntheticStudy} from '../../src/bench/dashboard.js'
import {ColumnBlocks, studyBody, BLOCK_TRIALS} from '../../src/dashboard/body.js'
import {studyCharts} from '../../src/dashboard/charts.js'
import {StudyCache} from '../../src/dashboard/study-cache.js'
import {studyView} from '../../src/dashboard/views.js'
import {openStudyReader, type StudyReader} from '../../src/study/reader.js'
import {openStorage} from '../../src/study/storage.js'
import {SqliteStudyFile} from '../helpers/study-file.js'
import {type TrialRow} from '../../src/study/model.js'

/** Enough trials for three column blocks, so that a new trial leaves some blocks' text as it was. */
const TRIALS = 2 * BLOCK_TRIALS + 52
const OWNER = 'test/1/a'

let dir: string
let path: string
let name: string
let template: TrialRow
let reader: StudyReader
let writer: SqliteStudyFile

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kt-dash-cache-'))
  path = join(dir, 'studies.sqlite')
  const storage = await openStorage(path)
  const {study, trials} = syntheticStudy(TRIALS, 7)
  name = study.name
  template = trials[0]
  await storage.importStudy({...study, state: 'running'}, trials)
  await storage.close()
  reader = await openStudyReader(path)
  writer = SqliteStudyFile.open(path)
})

afterAll(async () => {
  await reader?.close()
  writer?.close()
})

/** The study endpoint's object from a full read of the store: what the incremental cache must equal. */
async function fromScratch(): Promise<unknown> {
  const got = (await reader.getStudy(name))!
  const view = studyView(got.study, got.trials)
  const version = (await reader.versions())[name]
  return JSON.parse(studyBody({version, view, charts: studyCharts(view), pollMs: 1000}, new ColumnBlocks()).toString())
}

function bodyOf(cache: StudyCache, blocks: ColumnBlocks): {bytes: Buffer; parsed: unknown} {
  const view = cache.view()
  const bytes = studyBody(
    {version: cache.version!, view, charts: studyCharts(view), pollMs: 1000},
    blocks,
    cache.takeChangedFrom(),
  )
  return {bytes, parsed: JSON.parse(bytes.toString())}
}

let tell = TRIALS
function ask(id: number, budget: number, config: Record<string, string | number | boolean> = template.config): void {
  writer.insertTrial(
    name,
    {id, configId: `${id}`, config, budget},
    OWNER,
    new Date(Date.UTC(2026, 1, 1, 0, 0, id % 60)).toISOString(),
    Date.now(),
  )
}
function finish(id: number, quality: number, extra: Record<string, number> = {}, status: 'ok' | 'failed' = 'ok'): void {
  const metrics: Record<string, number> = {...(template.metrics as Record<string, number>), quality, ...extra}
  const at = new Date(Date.UTC(2026, 1, 1, 1, 0, id % 60)).toISOString()
  const ok = writer.finish(name, id, OWNER, {
    status,
    loss: status === 'ok' ? -quality : undefined,
    values: status === 'ok' ? [-quality, metrics.p99_ms] : undefined,
    metrics: status === 'ok' ? metrics : undefined,
    error: status === 'failed' ? 'engine crashed' : undefined,
    startedAt: at,
    finishedAt: at,
    durationMs: 10,
    tellSeq: tell++,
    asksBefore: id + 1,
  })
  expect(ok).toBe(true)
}

describe("the dashboard's study cache", () => {
  it('reads only what changed, and always equals a full recomputation from the store', async () => {
    const cache = new StudyCache(reader, name)
    const blocks = new ColumnBlocks()
    const step = async (
      label: string,
      expectRead: 'full' | 'incremental' | 'none',
      expectResult?: 'changed' | 'unchanged',
    ) => {
      const result = await cache.refresh(await reader.changeCounter())
      if (expectResult) expect(result, label).toBe(expectResult)
      expect(cache.lastRefresh.read, label).toBe(expectRead)
      const {parsed, bytes} = bodyOf(cache, blocks)
      expect(parsed, label).toEqual(await fromScratch())
      // the blocks kept from earlier bodies give the same bytes as serialising everything afresh
      expect(
        bytes.equals(
          studyBody(
            {version: cache.version!, view: cache.view(), charts: studyCharts(cache.view()), pollMs: 1000},
            new ColumnBlocks(),
          ),
        ),
        label,
      ).toBe(true)
      return result
    }
    await step('first load', 'full', 'changed')
    expect(cache.lastRefresh.rows).toBe(TRIALS)
    // no commit since: nothing is read at all
    await step('no change', 'none', 'unchanged')

    ask(TRIALS, 1)
    await step('a trial asked', 'incremental', 'changed')
    expect(cache.lastRefresh.rows).toBe(1)

    writer.heartbeat(name, OWNER, Date.now() + 1000)
    await step('a heartbeat only', 'incremental', 'unchanged')

    writer.claim(name, TRIALS, OWNER, '2026-02-02T00:00:00.000Z', Date.now())
    await step('taken over (restarted)', 'incremental', 'changed')

    finish(TRIALS, 0.5)
    await step('finished at a low budget', 'incremental', 'changed')
    // a new last trial rewrites the last block of each column only
    expect(blocks.rewritten).toBeGreaterThan(0)
    expect(blocks.rewritten).toBeLessThanOrEqual(blocks.total / 3)

    ask(TRIALS + 1, 9)
    finish(TRIALS + 1, 0.99)
    await step('a new best at the largest budget (front, best, incumbent line move)', 'incremental', 'changed')

    ask(TRIALS + 2, 9, {...template.config, 'extra.param': 3})
    finish(TRIALS + 2, 0.2, {'quality.new_type': 0.4, 'queries.new_type': 5})
    await step('a new parameter and a new metric (every column block re-laid)', 'incremental', 'changed')

    ask(TRIALS + 3, 3)
    finish(TRIALS + 3, 0, {}, 'failed')
    await step('a failed trial', 'incremental', 'changed')

    ask(TRIALS + 5, 27)
    await step('a running trial at a new largest budget (every budget_so_far rescales)', 'incremental', 'changed')
    finish(TRIALS + 5, 0.1)
    await step('it finishes, a new incumbent by budget', 'incremental', 'changed')

    writer.setStudyState(name, 'finished', '2026-03-01T00:00:00.000Z')
    await step('the study finished (state only)', 'incremental', 'changed')

    // a trial id below the ones seen (workers never ask so, but a copy into the store could) is out of the cursor's sight: full reload
    ask(TRIALS + 4, 1)
    await step('a trial asked below the largest id seen', 'full', 'changed')
    // a running trial that disappears without finishing is not a change the cursor can see: full reload
    ask(TRIALS + 6, 1)
    await step('asked', 'incremental', 'changed')
    const Database = createRequire(import.meta.url)('better-sqlite3')
    const raw = new Database(path)
    raw.prepare('DELETE FROM trials WHERE study = ? AND id = ?').run(name, TRIALS + 6)
    raw.close()
    await step('a running trial vanished', 'full', 'changed')
  })

  it('serialises a body byte for byte as a fresh serialiser does', async () => {
    const cache = new StudyCache(reader, name)
    await cache.refresh(undefined)
    const warm = new ColumnBlocks()
    bodyOf(cache, warm)
    ask(TRIALS + 10, 1)
    finish(TRIALS + 10, 0.3)
    await cache.refresh(undefined)
    expect(cache.lastRefresh.read).toBe('incremental')
    expect(bodyOf(cache, warm).bytes.equals(bodyOf(cache, new ColumnBlocks()).bytes)).toBe(true)
  })

  it("keeps the reader's change counter still without commits, and moves it on another connection's commit", async () => {
    const a = await reader.changeCounter()
    expect(a).toBeDefined()
    expect(await reader.changeCounter()).toBe(a)
    const v1 = await reader.versions()
    writer.setStudyState(name, 'running', '2026-03-02T00:00:00.000Z')
    expect(await reader.changeCounter()).not.toBe(a)
    expect((await reader.versions())[name]).not.toBe(v1[name])
  })
})
