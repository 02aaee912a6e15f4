import {existsSync} from 'node:fs'
import {InputError, describeValue} from '../util/errors.js'
import {readText} from '../util/fs.js'
import {parseJsonText} from '../util/json.js'
import {DatasetBuilder, MAX_LABEL, type LtrDataset} from './dataset.js'

/**
 * Readers for the three learning-to-rank input forms kt accepts. Every malformed line is an
 * InputError naming `file:line` and what was expected.
 *
 * 1. LETOR / SVMlight text (`label qid:Q 1:v 2:v ... # comment`): one document per line, the lines
 *    of one query contiguous, features sparse and 1-based (a missing index is 0).
 * 2. libsvm text without `qid:` plus a sidecar group file `FILE.query` (LightGBM's convention):
 *    one integer per line, the number of consecutive documents in each query. When the sidecar
 *    exists it defines the groups and any `qid:` tokens in the data are ignored.
 * 3. kt feature logs (`.jsonl`), one candidate per line:
 *    `{"qid": "q17", "label": 2, "features": {"bm25": 3.1, "vector": 0.82, ...}, "doc": "n42"}`
 *    - `qid` string or number; lines of one query contiguous.
 *    - `label` the feedback grade, an integer 0..MAX_LABEL (0 = not relevant / not used).
 *    - `features` an object of finite numbers; every line has the same keys, and the key order of
 *      the first line fixes the column order.
 *    - `engine_score` (optional, on every line or none): the logging engine's own fused score, kept
 *      as a baseline ranking (not a feature).
 *    - `pool` (optional, on every line or none, one value per file): the engine's candidates per
 *      query the log was written with; a model trained on the log records it (query-level columns
 *      are computed over this pool).
 *    Other fields (`doc`, ...) are ignored. `kt rerank log` writes such logs from the engine.
 */

/**
 * Highest accepted 1-based feature index. Public LETOR sets stay far below (MSLR-WEB 136,
 * Yahoo! LTR 700, Istella 220); a larger index is a corrupt line, and accepting it would allocate
 * a huge dense row per document.
 */
const MAX_FEATURE_INDEX = 10_000

/** Sidecar group-file suffix for the libsvm form (LightGBM reads `train.txt.query`). */
const QUERY_FILE_SUFFIX = '.query'

/** Reads a data file in whichever of the three forms it is (see the module comment). */
export function readLtrFile(path: string): LtrDataset {
  const text = readText(path)
  if (path.endsWith('.jsonl')) return parseFeatureLog(text, path)
  const sidecar = path + QUERY_FILE_SUFFIX
  if (existsSync(sidecar)) return parseLibsvmWithGroups(text, path, readText(sidecar), sidecar)
  return parseLetor(text, path)
}

/** One parsed data line: its label, sparse features and (LETOR form) query id. */
interface ParsedLine {
  label: number
  qid: string | undefined
  row: Float64Array
}

/** Parses LETOR text (form 1); every data line must carry `qid:`. */
export function parseLetor(text: string, path: string): LtrDataset {
  const builder = new DatasetBuilder()
  const enter = queryEntry(builder)
  forEachDataLine(text, (line, lineNo) => {
    const parsed = parseLine(line, `${path}:${lineNo}`)
    if (parsed.qid === undefined) {
      throw new InputError(
        `${path}:${lineNo}`,
        `a "qid:" token after the label (or a sidecar ${path}${QUERY_FILE_SUFFIX} group file)`,
        describeValue(line.slice(0, 40)),
      )
    }
    enter(parsed.qid, lineNo, `${path}:${lineNo}`)
    builder.addRow(parsed.label, parsed.row)
  })
  return builder.build(path)
}

/**
 * Starts a new query in `builder` when a line's qid differs from the previous line's; the lines of
 * a query must be contiguous (a qid seen before is an InputError naming both lines).
 */
function queryEntry(builder: DatasetBuilder): (qid: string, lineNo: number, where: string) => void {
  const firstLineOfQuery = new Map<string, number>()
  let current: string | undefined
  return (qid, lineNo, where) => {
    if (qid === current) return
    const seen = firstLineOfQuery.get(qid)
    if (seen !== undefined)
      throw new InputError(
        where,
        `the lines of query ${qid} to be contiguous (it started at line ${seen})`,
        'it again after another query',
      )
    firstLineOfQuery.set(qid, lineNo)
    builder.beginQuery(qid)
    current = qid
  }
}

/** Parses libsvm text whose query groups come from a sidecar file of group sizes (form 2). */
export function parseLibsvmWithGroups(text: string, path: string, groupText: string, groupPath: string): LtrDataset {
  const sizes = parseGroupSizes(groupText, groupPath)
  const builder = new DatasetBuilder()
  let group = 0
  let leftInGroup = 0
  let rows = 0
  forEachDataLine(text, (line, lineNo) => {
    const parsed = parseLine(line, `${path}:${lineNo}`)
    while (leftInGroup === 0) {
      if (group >= sizes.length) {
        throw new InputError(
          `${path}:${lineNo}`,
          `at most ${rows} data lines (the sum of the group sizes in ${groupPath})`,
          'more lines',
        )
      }
      builder.beginQuery(String(group + 1))
      leftInGroup = sizes[group++]
    }
    builder.addRow(parsed.label, parsed.row)
    leftInGroup--
    rows++
  })
  const expected = sizes.reduce((a, b) => a + b, 0)
  if (rows !== expected) {
    throw new InputError(groupPath, `group sizes summing to the ${rows} data lines of ${path}`, `a sum of ${expected}`)
  }
  return builder.build(path)
}

/** Group sizes, one positive integer per non-empty line. */
function parseGroupSizes(text: string, path: string): number[] {
  const sizes: number[] = []
  forEachDataLine(text, (line, lineNo) => {
    const size = Number(line)
    if (!Number.isInteger(size) || size < 1) {
      throw new InputError(`${path}:${lineNo}`, 'a positive integer group size', describeValue(line))
    }
    sizes.push(size)
  })
  return sizes
}

/** Parses a kt feature log (form 3). */
export function parseFeatureLog(text: string, path: string): LtrDataset {
  const builder = new DatasetBuilder()
  const enter = queryEntry(builder)
  let names: string[] | undefined
  let hasEngineScore: boolean | undefined
  let pool: number | null | undefined
  forEachDataLine(text, (line, lineNo) => {
    const where = `${path}:${lineNo}`
    const record = parseJsonText(path, line, {firstLine: lineNo, expected: 'one JSON object per line'})
    if (record === null || typeof record !== 'object' || Array.isArray(record)) {
      throw new InputError(where, 'a JSON object {qid, label, features}', describeValue(record))
    }
    const {
      qid: rawQid,
      label: rawLabel,
      features,
      engine_score: engineScore,
      pool: rawPool,
    } = record as Record<string, unknown>
    if (typeof rawQid !== 'string' && typeof rawQid !== 'number') {
      throw new InputError(`${where} field qid`, 'a string or number', describeValue(rawQid))
    }
    const qid = String(rawQid)
    const label = checkLabel(rawLabel, `${where} field label`)
    if (features === null || typeof features !== 'object' || Array.isArray(features)) {
      throw new InputError(`${where} field features`, 'an object of feature name to number', describeValue(features))
    }
    const entries = features as Record<string, unknown>
    names ??= Object.keys(entries)
    if (names.length === 0) throw new InputError(`${where} field features`, 'at least one feature', 'an empty object')
    const row = new Float64Array(names.length)
    names.forEach((name, f) => {
      const value = entries[name]
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        throw new InputError(
          `${where} field features.${name}`,
          'a finite number (every line has the features of the first line)',
          describeValue(value),
        )
      }
      row[f] = value
    })
    const extra = Object.keys(entries).find((key) => !names!.includes(key))
    if (extra !== undefined) {
      throw new InputError(
        `${where} field features.${extra}`,
        `only the features of the first line (${names.join(', ')})`,
        'an extra feature',
      )
    }
    hasEngineScore ??= engineScore !== undefined
    if (
      hasEngineScore !== (engineScore !== undefined) ||
      (engineScore !== undefined && (typeof engineScore !== 'number' || !Number.isFinite(engineScore)))
    ) {
      throw new InputError(
        `${where} field engine_score`,
        hasEngineScore ? 'a finite number (the first line has one)' : 'no engine_score (the first line has none)',
        describeValue(engineScore),
      )
    }
    pool = checkLoggedPool(rawPool, pool, `${where} field pool`)
    enter(qid, lineNo, where)
    builder.addRow(label, row, engineScore as number | undefined)
  })
  const data = builder.build(path, names ?? [])
  return typeof pool === 'number' ? {...data, pool} : data
}

/**
 * A feature-log line's `pool`: absent on every line (null) or the same positive integer on every
 * line. `first` is what the first line had (undefined before it).
 */
function checkLoggedPool(value: unknown, first: number | null | undefined, where: string): number | null {
  if (first === undefined) {
    if (value === undefined) return null
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
      throw new InputError(
        where,
        "a positive integer (the engine's candidates per query, kt rerank log --pool)",
        describeValue(value),
      )
    }
    return value
  }
  if (first === null && value !== undefined)
    throw new InputError(where, 'no pool (the first line has none)', describeValue(value))
  if (first !== null && value !== first)
    throw new InputError(where, `the first line's pool ${first} (one pool per log)`, describeValue(value))
  return first
}

/** Calls `visit` with each line that is neither blank nor a pure `#` comment, numbered from 1. */
function forEachDataLine(text: string, visit: (line: string, lineNo: number) => void): void {
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim()
    if (line === '' || line.startsWith('#')) continue
    visit(line, i + 1)
  }
}

/** Parses one LETOR/libsvm line: `label [qid:Q] idx:value ... [# comment]`. */
function parseLine(rawLine: string, where: string): ParsedLine {
  const hash = rawLine.indexOf('#')
  const line = hash >= 0 ? rawLine.slice(0, hash) : rawLine
  const tokens = line.trim().split(/\s+/)
  const label = checkLabel(Number(tokens[0]), `${where} label`, tokens[0])
  let qid: string | undefined
  const indices: number[] = []
  const values: number[] = []
  let maxIndex = 0
  for (let t = 1; t < tokens.length; t++) {
    const token = tokens[t]
    const colon = token.indexOf(':')
    if (colon <= 0 || colon === token.length - 1) {
      throw new InputError(`${where} token ${t + 1}`, 'index:value', describeValue(token))
    }
    const key = token.slice(0, colon)
    const valueText = token.slice(colon + 1)
    if (key === 'qid') {
      if (t !== 1) throw new InputError(`${where} token ${t + 1}`, 'qid right after the label', describeValue(token))
      qid = valueText
      continue
    }
    const index = Number(key)
    if (!Number.isInteger(index) || index < 1 || index > MAX_FEATURE_INDEX) {
      throw new InputError(`${where} token ${t + 1}`, `a feature index in 1..${MAX_FEATURE_INDEX}`, describeValue(key))
    }
    const value = Number(valueText)
    if (!Number.isFinite(value)) {
      throw new InputError(`${where} feature ${index}`, 'a finite number', describeValue(valueText))
    }
    indices.push(index)
    values.push(value)
    if (index > maxIndex) maxIndex = index
  }
  const row = new Float64Array(maxIndex)
  const seen = new Uint8Array(maxIndex)
  for (let i = 0; i < indices.length; i++) {
    if (seen[indices[i] - 1])
      throw new InputError(`${where} feature ${indices[i]}`, 'each feature index once per line', 'a repeat')
    seen[indices[i] - 1] = 1
    row[indices[i] - 1] = values[i]
  }
  return {label, qid, row}
}

/** A relevance grade: an integer in 0..MAX_LABEL. */
function checkLabel(value: unknown, where: string, shown: unknown = value): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_LABEL) {
    throw new InputError(where, `an integer relevance grade in 0..${MAX_LABEL}`, describeValue(shown))
  }
  return value
}
