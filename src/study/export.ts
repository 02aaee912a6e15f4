/**
 * `kt study export` as a stream: the study is read twice in pages (once for what the header or the
 * study summary needs, once for the rows), so memory holds one page whatever the trial count. The
 * text is byte-identical to formatting the whole list at once (trialsCsv, or the JSON document
 * `{study, trials}` with two-space indentation). Rows are the trials that existed at the first
 * pass (ids up to its last one); a study still running may finish some of them in between.
 */
import {CsvColumns, studyJsonOf, trialJson, isGridStudy} from './format.js'
import {TrialTally, trialPages, TRIAL_PAGE_SIZE} from './pages.js'
import type {StudyRecord, TrialRow} from './model.js'
import type {StudyStorage} from './storage.js'

export type ExportFormat = 'csv' | 'json'

/** What a streamed export holds: the text in pieces, and how many trials it wrote (known once it is consumed). */
export interface StudyExport {
  readonly chunks: AsyncIterable<string>
  trials(): number
}

export function exportStudy(
  storage: Pick<StudyStorage, 'trialPage'>,
  study: StudyRecord,
  format: ExportFormat,
  pageSize = TRIAL_PAGE_SIZE,
): StudyExport {
  let written = 0
  const pagesUpTo = async function* (lastId: number): AsyncGenerator<TrialRow[]> {
    for await (const page of trialPages(storage, study.name, pageSize)) {
      const kept = page[page.length - 1].id <= lastId ? page : page.filter((t) => t.id <= lastId)
      if (kept.length > 0) yield kept
      if (kept.length < page.length) return
    }
  }
  const csv = async function* (): AsyncGenerator<string> {
    const columns = new CsvColumns()
    let lastId = -1
    for await (const page of trialPages(storage, study.name, pageSize))
      for (const t of page) {
        columns.add(t)
        lastId = t.id
      }
    yield columns.headerLine()
    for await (const page of pagesUpTo(lastId)) {
      written += page.length
      yield page.map((t) => columns.rowLine(t)).join('')
    }
  }
  const json = async function* (): AsyncGenerator<string> {
    const tally = new TrialTally({keepConfigIds: isGridStudy(study)})
    let lastId = -1
    for await (const page of trialPages(storage, study.name, pageSize))
      for (const t of page) {
        tally.add(t)
        lastId = t.id
      }
    yield `{\n  "study": ${indent(JSON.stringify(studyJsonOf(study, tally), null, 2), 2)},\n  "trials": [`
    for await (const page of pagesUpTo(lastId)) {
      const first = written === 0
      written += page.length
      yield (first ? '' : ',') + page.map((t) => `\n    ${indent(JSON.stringify(trialJson(t), null, 2), 4)}`).join(',')
    }
    yield written === 0 ? ']\n}\n' : '\n  ]\n}\n'
  }
  return {chunks: format === 'csv' ? csv() : json(), trials: () => written}
}

/** JSON.stringify(x, null, 2) of a value nested `by` spaces deep: every line after the first indented. */
function indent(text: string, by: number): string {
  return text.replace(/\n/g, `\n${' '.repeat(by)}`)
}
