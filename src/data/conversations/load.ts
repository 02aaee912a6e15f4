import {extname} from 'node:path'
import {parse as parseCsv} from 'csv-parse/sync'
import {InputError, describeValue} from '../../util/errors.js'
import {parseJson, readText} from '../../util/fs.js'
import {parseJsonText} from '../../util/json.js'
import {parseLocomo} from './locomo.js'
import {TURN_FIELDS, TurnCollector, readQuestionRecord, turnIdsByConversation, type TurnField} from './turns.js'
import {countWarning, type LoadWarnings, type MemoryDataset, type Question} from './types.js'

export type ConversationFormat = MemoryDataset['format']

export interface LoadOptions {
  /** Input format; by default from the file extension (.json, .jsonl/.ndjson, .csv). */
  readonly format?: ConversationFormat
  /** CSV only: which column holds each turn field (default: the field's own name). */
  readonly columns?: Partial<Record<TurnField, string>>
  /** JSONL of question records for JSONL/CSV turns (JSONL turn files may also hold them inline). */
  readonly questions?: string
}

const EXTENSION_FORMATS: Record<string, ConversationFormat> = {
  '.json': 'locomo',
  '.jsonl': 'jsonl',
  '.ndjson': 'jsonl',
  '.csv': 'csv',
}

/** Loads a conversational memory dataset from a file in any supported format. */
export function loadMemoryDataset(path: string, options: LoadOptions = {}): MemoryDataset {
  const format = options.format ?? EXTENSION_FORMATS[extname(path).toLowerCase()]
  if (format === undefined)
    throw new InputError(
      path,
      'a .json (LoCoMo), .jsonl or .csv file, or an explicit format',
      `extension ${describeValue(extname(path))}`,
    )
  const text = readText(path)
  return parseMemoryDataset(path, text, {...options, format})
}

/** Parses dataset text already read from `file` (used by tests and by loadMemoryDataset). */
export function parseMemoryDataset(
  file: string,
  text: string,
  options: LoadOptions & {format: ConversationFormat},
): MemoryDataset {
  if (options.format === 'locomo') return parseLocomo(file, text, parseJson(file, text))
  const collector = new TurnCollector()
  const warnings: LoadWarnings = {}
  const questionRecords: Array<{where: string; record: Record<string, unknown>}> = []
  if (options.format === 'jsonl') readJsonlTurns(file, text, collector, questionRecords)
  else if (options.format === 'csv') readCsvTurns(file, text, collector, options.columns ?? {}, warnings)
  else throw new InputError(file, 'format locomo, jsonl or csv', describeValue(options.format))
  if (options.questions !== undefined)
    readJsonlQuestions(options.questions, readText(options.questions), questionRecords)
  const conversations = collector.finish(file)
  const ids = turnIdsByConversation(conversations)
  const questions: Question[] = []
  const seen = new Set<string>()
  questionRecords.forEach(({where, record}, i) => {
    const q = readQuestionRecord(where, record, i, ids, warnings)
    if (seen.has(q.id)) throw new InputError(`${where}: id`, 'a question id not used before', describeValue(q.id))
    seen.add(q.id)
    questions.push(q)
  })
  return {source: file, format: options.format, conversations, questions, warnings, warningExamples: []}
}

/** Each non-empty line is a JSON object: a turn, or a question when it has a `question` field. */
function readJsonlTurns(
  file: string,
  text: string,
  collector: TurnCollector,
  questions: Array<{where: string; record: Record<string, unknown>}>,
): void {
  forEachJsonLine(file, text, (where, record) => {
    if ('question' in record) questions.push({where, record})
    else collector.add(where, (field) => record[field])
  })
}

function readJsonlQuestions(
  file: string,
  text: string,
  questions: Array<{where: string; record: Record<string, unknown>}>,
): void {
  forEachJsonLine(file, text, (where, record) => questions.push({where, record}))
}

function forEachJsonLine(
  file: string,
  text: string,
  visit: (where: string, record: Record<string, unknown>) => void,
): void {
  const lines = text.split('\n')
  lines.forEach((line, i) => {
    if (line.trim() === '') return
    const where = `${file}:${i + 1}`
    const record = parseJsonText(file, line, {firstLine: i + 1, expected: 'one JSON object per line'})
    if (typeof record !== 'object' || record === null || Array.isArray(record))
      throw new InputError(where, 'a JSON object', describeValue(record))
    visit(where, record as Record<string, unknown>)
  })
}

/** CSV with a header row; `columns` maps turn fields to header names. Empty rows are skipped and counted. */
function readCsvTurns(
  file: string,
  text: string,
  collector: TurnCollector,
  columns: Partial<Record<TurnField, string>>,
  warnings: LoadWarnings,
): void {
  let rows: Array<{info: {lines: number}; record: Record<string, string>}>
  try {
    rows = parseCsv(text, {columns: true, info: true, skip_empty_lines: false, bom: true, trim: false}) as typeof rows
  } catch (error) {
    const e = error as Error & {lines?: number}
    throw new InputError(
      e.lines === undefined ? file : `${file}:${e.lines}`,
      'well-formed CSV with a header row',
      e.message.split('\n')[0],
    )
  }
  const header = rows.length > 0 ? Object.keys(rows[0].record) : []
  for (const field of ['id', 'session', 'text'] as const) {
    const column = columns[field] ?? field
    if (rows.length > 0 && !header.includes(column))
      throw new InputError(
        `${file}:1`,
        `a column ${describeValue(column)} for the turn ${field}`,
        `columns ${header.join(', ')}`,
      )
  }
  for (const [field, column] of Object.entries(columns)) {
    if (!(TURN_FIELDS as readonly string[]).includes(field))
      throw new InputError(`column mapping ${field}`, `one of ${TURN_FIELDS.join(', ')}`, describeValue(field))
    if (rows.length > 0 && column !== undefined && !header.includes(column))
      throw new InputError(
        `${file}:1`,
        `a column ${describeValue(column)} for the turn ${field}`,
        `columns ${header.join(', ')}`,
      )
  }
  for (const {info, record} of rows) {
    if (Object.values(record).every((v) => v.trim() === '')) {
      countWarning(warnings, 'empty CSV rows skipped')
      continue
    }
    collector.add(`${file}:${info.lines}`, (field) => {
      const column = columns[field] ?? field
      return column in record ? record[column] : undefined
    })
  }
}
