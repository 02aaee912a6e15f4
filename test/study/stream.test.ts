// kt study show / export read a study in pages: what they print is what formatting the whole list
// printed, and they never hold the whole study (trials() is never called, no page is larger than asked).
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {runSearch} from '../../src/study/search.js'
import {openStorage, type StudyStorage} from '../../src/study/storage.js'
import {exportStudy} from '../../src/study/export.js'
import {TrialTally, trialPages} from '../../src/study/pages.js'
import {budgetTable, trialJson, trialsCsv} from '../../src/study/format.js'
import {incumbent} from '../../src/search/incumbent.js'
import type {TrialRow} from '../../src/study/model.js'
import {postgresForTests} from '../helpers/postgres.js'
import {showStudy} from '../../src/study/show.js'
import {syntheticStudy} from '../../src/bench/dashboard.js'
import {analyzeStudy} from '../../src/eval/retrieval-analysis.js'
import {snakeKeysOfRecord} from '../../src/util/json-keys.js'

const pg = postgresForTests()
const dir = mkdtempSync(join(tmpdir(), 'kt-stream-'))

/** A storage that refuses to load a whole study and records the largest page it served. */
function pagedOnly(store: StudyStorage): Pick<StudyStorage, 'trialPage'> & {largest: number} {
  const wrapper = {
    largest: 0,
    async trialPage(study: string, afterId: number, limit: number): Promise<TrialRow[]> {
      const page = await store.trialPage(study, afterId, limit)
      wrapper.largest = Math.max(wrapper.largest, page.length)
      return page
    },
    trials(): never {
      throw new Error('a streamed reader loaded the whole study')
    },
  }
  return wrapper
}

/** A BOHB study on counting_ones (several budgets: every column and count has something to show), opened. */
async function multiFidelityStudy(storage: string, study: string, seed: number, maxBudget: number) {
  await runSearch({storage, study, objective: {name: 'counting_ones'}, optimizer: 'bohb', seed, maxBudget})
  return openStorage(storage)
}

async function collect(chunks: AsyncIterable<string>): Promise<string> {
  let text = ''
  for await (const c of chunks) text += c
  return text
}

for (const backend of [
  {name: 'sqlite', skip: false, spec: async () => join(dir, 'bohb.sqlite')},
  {name: `postgresql ${pg.label}`.trim(), skip: pg.skip, spec: () => pg.database('kt_stream')},
])
  describe.skipIf(backend.skip)(`a study read in pages (${backend.name})`, () => {
    it('pages hold every trial once, in id order; export text is byte-identical to the whole-list format', async () => {
      const storage = await backend.spec()
      const store = await multiFidelityStudy(storage, 'mf', 3, 60)
      try {
        const study = (await store.getStudy('mf'))!
        const all = await store.trials('mf')
        expect(all.length).toBeGreaterThan(20)
        const ids: number[] = []
        for await (const page of trialPages(store, 'mf', 7)) ids.push(...page.map((t) => t.id))
        expect(ids).toEqual(all.map((t) => t.id))

        const paged = pagedOnly(store)
        const csv = exportStudy(paged, study, 'csv', 7)
        expect(await collect(csv.chunks)).toBe(trialsCsv(all))
        expect(csv.trials()).toBe(all.length)
        const json = exportStudy(paged, study, 'json', 7)
        const {studyJson} = await import('../../src/study/format.js')
        expect(await collect(json.chunks)).toBe(
          `${JSON.stringify({study: studyJson(study, all), trials: all.map(trialJson)}, null, 2)}\n`,
        )
        expect(paged.largest).toBe(7)
      } finally {
        await store.close()
      }
    })
  })

describe('the tally kt study show prints from', () => {
  it('counts, budgets, the incumbent and the top trials at the largest budget, as the whole list gives them', async () => {
    const storage = join(dir, 'tally.sqlite')
    const store = await multiFidelityStudy(storage, 't', 5, 80)
    try {
      const all = await store.trials('t')
      const tally = new TrialTally({top: 4})
      for await (const page of trialPages(store, 't', 9)) for (const t of page) tally.add(t)
      expect([tally.trials, tally.ok, tally.failed]).toEqual([
        all.length,
        all.filter((t) => t.status === 'ok').length,
        all.filter((t) => t.status === 'failed').length,
      ])
      expect(tally.best?.id).toBe(incumbent(all)?.id)
      expect(tally.budgets()).toEqual(budgetTable(all))
      expect(tally.budgets().length).toBeGreaterThan(1)
      const max = Math.max(...all.filter((t) => t.status === 'ok').map((t) => t.budget))
      const expected = all
        .filter((t) => t.status === 'ok' && t.budget === max)
        .sort((a, b) => a.loss! - b.loss! || a.id - b.id)
        .slice(0, 4)
      expect(tally.top().map((t) => t.id)).toEqual(expected.map((t) => t.id))
    } finally {
      await store.close()
    }
  })
})

describe('kt study show of a study with two objectives (quality and P99)', () => {
  it('reads it in pages: the front and profiles of the whole study, holding only the trials at the largest budget', async () => {
    const store = await openStorage(join(dir, 'front.sqlite'))
    try {
      const {study, trials} = syntheticStudy(900, 5)
      await store.importStudy(study, trials)
      const paged = Object.assign(pagedOnly(store), {
        label: store.label,
        getStudy: (name: string) => store.getStudy(name),
        listStudies: () => store.listStudies(),
      })
      const shown = await showStudy(paged, study.name, {top: 5, pageSize: 50})
      expect(paged.largest).toBe(50)
      const whole = analyzeStudy(trials)
      expect({front: shown.json.front, profiles: shown.json.profiles}).toEqual(
        snakeKeysOfRecord({front: whole.front, profiles: whole.profiles}),
      )
      expect(shown.lines.join('\n')).toContain(whole.lines.join('\n'))
      const largest = Math.max(...trials.map((t) => t.budget))
      expect(shown.held).toBe(trials.filter((t) => t.budget === largest).length)
      expect(shown.held).toBeLessThan(trials.length / 5)
    } finally {
      await store.close()
    }
  })
})
