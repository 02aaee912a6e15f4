import {join} from 'node:path'
import {InputError, describeValue} from '../util/errors.js'
import {reportContentHash} from './content-hash.js'
import {readJson, writeFileAtomic} from '../util/fs.js'
import {REPORT_SCHEMA, REPORT_VERSION, type Report} from './types.js'
import {renderMarkdown} from './markdown.js'
import {renderHtml} from './html.js'

/** Reads a run's report.json, refusing files of another schema or version. */
export function loadReport(runDir: string): Report {
  const file = join(runDir, 'report.json')
  const value = readJson(file) as Partial<Report>
  if (value?.schema !== REPORT_SCHEMA)
    throw new InputError(`${file}: schema`, JSON.stringify(REPORT_SCHEMA), JSON.stringify(value?.schema))
  if (value.version !== REPORT_VERSION)
    throw new InputError(`${file}: version`, String(REPORT_VERSION), JSON.stringify(value.version))
  if (!value.run || !value.phases || !value.timing) throw new InputError(file, 'the fields run, phases and timing')
  // the renderers trust every field's type; a report changed after kt wrote it is refused here, in
  // one line, rather than failing somewhere inside a table
  if (typeof value.content_sha256 !== 'string')
    throw new InputError(
      `${file}: content_sha256`,
      'the checksum kt writes with every report (re-run the study to get one)',
      describeValue(value.content_sha256),
    )
  if (reportContentHash(value as Report) !== value.content_sha256)
    throw new InputError(
      `${file}: content_sha256`,
      'the checksum of the content (the file was changed after kt wrote it)',
      'a different content',
    )
  return value as Report
}

export type ReportFormat = 'md' | 'json' | 'html'

export function rerender(report: Report, format: ReportFormat, file = 'report.json'): string {
  if (format === 'json') return `${JSON.stringify(report, null, 2)}\n`
  try {
    // both renderings read the same content (renderMarkdown), so a broken report fails the same way in each
    return format === 'html' ? renderHtml(report) : renderMarkdown(report)
  } catch (error) {
    // a report edited by hand or cut short: say so in one line instead of a stack trace
    throw new InputError(
      file,
      `a complete report (schema ${REPORT_SCHEMA} version ${REPORT_VERSION}) as kt writes it`,
      (error as Error).message,
    )
  }
}

/** Writes report.json (sealed with its content hash, timing last) and report.md to a folder. */
export function writeReportFiles(outDir: string, report: Report): void {
  const {timing, content_sha256: _old, ...content} = report
  const sealed: Report = {...content, content_sha256: reportContentHash(report), timing}
  writeFileAtomic(join(outDir, 'report.json'), `${JSON.stringify(sealed, null, 2)}\n`)
  writeFileAtomic(join(outDir, 'report.md'), renderMarkdown(report))
}
