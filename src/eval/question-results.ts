/**
 * Per-question results kept with an evaluation (`kt eval --engine --json`) or a run (questions.json
 * beside report.json), so `kt compare` can pair two of them question by question. Compact: the
 * metric names and the questions once, then per system one row of values per question.
 */
import {existsSync, statSync} from 'node:fs'
import {join} from 'node:path'
import type {MetricValues} from '../data/conversations/metrics.js'
import type {Config} from '../space/index.js'
import {InputError, describeValue} from '../util/errors.js'
import {readJson, writeFileAtomic} from '../util/fs.js'
import {KT_VERSION} from '../util/paths.js'
import {prepareEvaluation, queryTypes} from './harness.js'
import {loadMemoryDataset} from '../data/conversations/index.js'
import {fileSha256} from '../rank/provenance.js'

/** The file a run keeps its per-question results in, beside report.json. */
const QUESTIONS_FILE = 'questions.json'

/** Digits kept of each per-question value (ranking metrics are fractions such as 1/3). */
const VALUE_DIGITS = 6

type LatencyKind = 'measured' | 'cost_model'

export interface SystemResults {
  readonly config: Config
  /** One row per question (the file's `questions` order), values in the file's `metrics` order. */
  readonly values: number[][]
  /** p99 always; p50 and p95 when measured on the same questions (a run keeps its tuning p99). */
  readonly latency_ms: {readonly p50?: number; readonly p95?: number; readonly p99: number; kind: LatencyKind} | null
}

export interface QuestionResults {
  readonly kt_questions: 1
  readonly kt_version: string
  readonly engine: {readonly name: string; readonly file_sha256: string | null}
  readonly data: {readonly file: string; readonly sha256: string}
  readonly metrics: string[]
  /** [question id, category, query type (kt's classifier)] in row order. */
  readonly questions: Array<[string, string, string?]>
  /** The system compared by default (a run's first profile, an evaluation's only system). */
  readonly primary: string
  readonly systems: Record<string, SystemResults>
}

/** One system's per-question rows as stored: values rounded, in `metrics` order. */
export function systemResults(
  rows: readonly MetricValues[],
  metrics: readonly string[],
  config: Config,
  latency: SystemResults['latency_ms'],
): SystemResults {
  const scale = 10 ** VALUE_DIGITS
  return {
    config,
    values: rows.map((r) => metrics.map((m) => Math.round((r[m] ?? 0) * scale) / scale)),
    latency_ms: latency,
  }
}

/** The record of some systems scored on the same questions of one data file by one engine. */
export function questionResults(options: {
  ktVersion: string
  engine: {name: string; file: string | null}
  data: string
  queries: ReadonlyArray<{readonly id: string; readonly category: string; readonly type?: string}>
  metrics: readonly string[]
  systems: Record<string, SystemResults>
  primary: string
}): QuestionResults {
  return {
    kt_questions: 1,
    kt_version: options.ktVersion,
    engine: {
      name: options.engine.name,
      file_sha256: options.engine.file === null ? null : fileSha256(options.engine.file),
    },
    data: {file: options.data, sha256: fileSha256(options.data)},
    metrics: [...options.metrics],
    questions: options.queries.map((q): [string, string, string?] =>
      q.type === undefined ? [q.id, q.category] : [q.id, q.category, q.type],
    ),
    primary: options.primary,
    systems: options.systems,
  }
}

/** A run's per-question results (QUESTIONS_FILE) written into its folder; the first system is its default side. */
export function writeRunQuestions(
  dir: string,
  run: {
    engine: {name: string; file: string}
    data: string
    questions: ReadonlyArray<{id: string; category: string}>
    systems: ReadonlyArray<{
      name: string
      config: Config
      rows: readonly MetricValues[]
      latency: SystemResults['latency_ms']
    }>
  },
): void {
  const metrics = Object.keys(run.systems[0]?.rows[0] ?? {})
  const types = queryTypes(prepareEvaluation(loadMemoryDataset(run.data)))
  const results = questionResults({
    ktVersion: KT_VERSION,
    engine: run.engine,
    data: run.data,
    queries: run.questions.map((q) => ({...q, type: types.get(q.id)})),
    metrics,
    primary: run.systems[0].name,
    systems: Object.fromEntries(run.systems.map((s) => [s.name, systemResults(s.rows, metrics, s.config, s.latency)])),
  })
  writeFileAtomic(join(dir, QUESTIONS_FILE), `${JSON.stringify(results)}\n`)
}

/**
 * Per-question results from a path: a run folder (its questions.json), a questions.json, or a
 * `kt eval --engine --json` output (its `questions` field). Refuses, in one line naming the file
 * and what is missing, anything else.
 */
export function loadQuestionResults(path: string): QuestionResults {
  if (!existsSync(path)) throw new InputError(path, 'a run folder (kt run) or a kt eval --json output', 'no such file')
  if (statSync(path).isDirectory()) {
    const file = join(path, QUESTIONS_FILE)
    if (existsSync(file)) return parseQuestionResults(readJson(file), file)
    if (existsSync(join(path, 'report.json')))
      throw new InputError(
        file,
        'per-question results beside report.json (this run was written by an older kt or without a retrieval study with a held-out split: run it again with this kt)',
        'no such file',
      )
    throw new InputError(path, 'a run folder of kt run (report.json and questions.json)', 'no report.json')
  }
  const value = readJson(path)
  if (typeof value === 'object' && value !== null && 'kt_questions' in value) return parseQuestionResults(value, path)
  if (typeof value === 'object' && value !== null && 'questions' in value)
    return parseQuestionResults((value as {questions: unknown}).questions, `${path}: questions`)
  throw new InputError(
    `${path}: questions`,
    'per-question results (a kt eval --engine --json output of this kt, or a run folder)',
    'missing',
  )
}

/** Checks the shape of a per-question record read from `where`. */
function parseQuestionResults(value: unknown, where: string): QuestionResults {
  const fail = (field: string, expected: string, got: unknown): never => {
    throw new InputError(`${where}: ${field}`, expected, describeValue(got))
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return fail('(top level)', 'an object', value)
  const v = value as Record<string, unknown>
  if (v.kt_questions !== 1) fail('kt_questions', '1', v.kt_questions)
  const metrics = v.metrics
  if (!Array.isArray(metrics) || metrics.length === 0 || !metrics.every((m) => typeof m === 'string'))
    fail('metrics', 'a non-empty array of metric names', metrics)
  const questions = v.questions
  if (!Array.isArray(questions) || !questions.every((q) => Array.isArray(q) && typeof q[0] === 'string'))
    fail('questions', 'an array of [id, category, type?] entries', questions)
  const data = v.data as {sha256?: unknown} | undefined
  if (typeof data?.sha256 !== 'string') fail('data.sha256', 'the data file sha256', data?.sha256)
  const engine = v.engine as {name?: unknown} | undefined
  if (typeof engine?.name !== 'string') fail('engine.name', 'the engine name', engine?.name)
  const systems = v.systems
  if (typeof systems !== 'object' || systems === null || Object.keys(systems).length === 0)
    return fail('systems', 'at least one scored system', systems)
  const n = (questions as unknown[]).length
  for (const [name, s] of Object.entries(systems as Record<string, {values?: unknown}>)) {
    const rows = s?.values
    if (!Array.isArray(rows) || rows.length !== n)
      fail(`systems.${name}.values`, `${n} rows (one per question)`, Array.isArray(rows) ? `${rows.length} rows` : rows)
  }
  if (typeof v.primary !== 'string' || !(v.primary in (systems as object)))
    fail('primary', `one of ${Object.keys(systems as object).join(', ')}`, v.primary)
  return value as QuestionResults
}
