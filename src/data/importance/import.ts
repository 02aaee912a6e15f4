import {basename, extname} from 'node:path'
import {parse as parseCsv} from 'csv-parse/sync'
import {InputError, describeValue} from '../../util/errors.js'
import {readText} from '../../util/fs.js'
import {parseJsonText} from '../../util/json.js'
import {EPOCH_DESCRIPTION, MAX_DATE_MS, epochMs, inDateRange} from '../conversations/dates.js'
import {DATASET_FORMAT_VERSION, parseDataset, type Dataset, type DatasetTurn} from './dataset.js'

/** Which input column holds each field of a labelled turn. */
export interface ColumnMap {
  id: string
  time: string
  text: string
  truth: string
  surprise: string
  query: string
}

export const DEFAULT_COLUMNS: ColumnMap = {
  id: 'id',
  time: 'time',
  text: 'text',
  truth: 'truth',
  surprise: 'surprise',
  query: 'query',
}

export interface ImportOptions {
  readonly file: string
  readonly id: string
  readonly columns: ColumnMap
  /** ISO UTC reference time; default: the latest turn time in the data (never the clock). */
  readonly referenceTime?: string
  /** Input format; by default from the file extension. */
  readonly format?: 'csv' | 'jsonl'
}

type Row = {line: number; values: Record<string, unknown>}

/**
 * Reads a user's labelled turns from CSV (header row) or JSONL (one object per line) into a kt
 * dataset. Every problem is reported with file, line and column; nothing is guessed.
 */
export function importLabelledTurns(o: ImportOptions): Dataset {
  const ext = o.format ? `.${o.format}` : extname(o.file).toLowerCase()
  const text = readText(o.file)
  let rows: Row[]
  // CSV cells are text, parsed as numbers where one is expected; JSONL values keep their JSON type,
  // so a string where a number belongs ("truth": "0.2") is refused, not converted
  const typed = ext !== '.csv'
  if (ext === '.csv') rows = csvRows(text, o.file)
  else if (ext === '.jsonl' || ext === '.ndjson') rows = jsonlRows(text, o.file)
  else
    throw new InputError(
      o.file,
      `a .csv or .jsonl file${ext === '.json' ? ' (for LoCoMo JSON use --format locomo)' : ''}`,
      extname(o.file) || 'no extension',
    )
  if (rows.length < 2) throw new InputError(o.file, 'at least two turns', String(rows.length))

  const queryIds = new Map<string, string>()
  const turns: DatasetTurn[] = rows.map(({line, values}) => {
    const at = (field: keyof ColumnMap) => `${o.file}:${line}: ${o.columns[field]}`
    const get = (field: keyof ColumnMap): unknown => {
      const v = values[o.columns[field]]
      if (v === undefined || v === '')
        throw new InputError(at(field), `a value in column "${o.columns[field]}"`, 'nothing')
      return v
    }
    const num = (field: 'truth' | 'surprise') => {
      const raw = get(field)
      if (typed && typeof raw !== 'number')
        throw new InputError(at(field), 'a JSON number in [0, 1] (not a string)', describeValue(raw))
      const v = typeof raw === 'number' ? raw : Number(String(raw).trim())
      if (!Number.isFinite(v) || v < 0 || v > 1)
        throw new InputError(at(field), 'a number in [0, 1]', describeValue(raw))
      return v
    }
    const stringField = (field: 'id' | 'query') => {
      const raw = get(field)
      if (typed && typeof raw !== 'string' && !(field === 'id' && typeof raw === 'number'))
        throw new InputError(at(field), field === 'id' ? 'a string or a number' : 'a string', describeValue(raw))
      return String(raw)
    }
    const queryText = stringField('query')
    if (!queryIds.has(queryText)) queryIds.set(queryText, `q${queryIds.size + 1}`)
    const textValue = get('text')
    if (typeof textValue !== 'string') throw new InputError(at('text'), 'a string', describeValue(textValue))
    return {
      id: stringField('id'),
      time: parseTime(get('time'), at('time')),
      text: textValue,
      surprise: num('surprise'),
      query: queryIds.get(queryText)!,
      truth: num('truth'),
    }
  })
  const latest = turns.reduce((m, t) => Math.max(m, Date.parse(t.time)), -Infinity)
  const reference = o.referenceTime ?? new Date(latest).toISOString().replace('.000Z', 'Z')
  const dataset: Dataset = {
    kt_dataset: DATASET_FORMAT_VERSION,
    id: o.id,
    // the file's name only: the path as typed would make the dataset's bytes depend on the current directory
    description: `Imported from ${basename(o.file)} (${turns.length} turns).`,
    reference_time: reference,
    generator: null,
    queries: [...queryIds].map(([text, id]) => ({id, text})),
    turns,
  }
  return parseDataset(dataset, o.file)
}

function csvRows(text: string, file: string): Row[] {
  let records: Record<string, string>[]
  try {
    records = parseCsv(text, {columns: true, skip_empty_lines: true, trim: true}) as Record<string, string>[]
  } catch (error) {
    const e = error as {lines?: number; message: string}
    throw new InputError(
      `${file}${e.lines ? `:${e.lines}` : ''}`,
      'valid CSV with a header row',
      e.message.split('\n')[0],
    )
  }
  // line 1 is the header
  return records.map((values, i) => ({line: i + 2, values}))
}

function jsonlRows(text: string, file: string): Row[] {
  const rows: Row[] = []
  text.split('\n').forEach((raw, i) => {
    if (raw.trim() === '') return
    const value = parseJsonText(file, raw, {firstLine: i + 1, expected: 'one JSON object per line'})
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new InputError(`${file}:${i + 1}`, 'a JSON object', describeValue(value))
    rows.push({line: i + 1, values: value as Record<string, unknown>})
  })
  return rows
}

/** ISO-8601 with a zone, or an epoch number (seconds or milliseconds, see epochMs); normalised to ISO UTC with whole seconds. */
function parseTime(raw: unknown, where: string): string {
  const s = String(raw).trim()
  let ms: number
  if (/^\d+(\.\d+)?$/.test(s)) ms = epochMs(Number(s))
  else if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.test(s)) ms = Date.parse(s)
  else
    throw new InputError(
      where,
      `an ISO-8601 time with a zone (2025-01-01T12:00:00Z) or ${EPOCH_DESCRIPTION}`,
      describeValue(raw),
    )
  if (!inDateRange(ms))
    throw new InputError(where, `a time a date can hold (within ${MAX_DATE_MS} ms of 1970)`, describeValue(raw))
  return new Date(Math.round(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z')
}
