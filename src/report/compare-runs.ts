/**
 * `kt compare BASE HEAD`: two evaluations of one engine (runs or kt eval outputs) on the same
 * questions, metric by metric, overall and per category: the paired difference HEAD - BASE with a
 * bootstrap interval over the shared questions (src/eval/compare.ts), a verdict, and what changed.
 */
import {compareRows, COMPARE_CONFIDENCE, type MetricDifference} from '../eval/compare.js'
import {NONINFERIORITY_MARGIN} from '../eval/holdout-validation.js'
import type {QuestionResults, SystemResults} from '../eval/question-results.js'
import type {MetricValues} from '../data/conversations/metrics.js'
import {InputError} from '../util/errors.js'

/**
 * improved: interval above 0; regressed: interval below 0 and the estimate worse than -margin;
 * not shown non-inferior: otherwise when the interval reaches below -margin; else no clear change.
 */
export type Verdict = 'improved' | 'regressed' | 'not_shown_non_inferior' | 'no_clear_change'

export interface ComparedMetric extends MetricDifference {
  readonly verdict: Verdict
}

export interface CompareScope {
  /** 'overall', a question category, or "query type T" (kt's query classifier). */
  readonly scope: string
  readonly questions: number
  readonly metrics: ComparedMetric[]
}

interface Change {
  readonly what: 'parameter' | 'engine file' | 'data' | 'kt version'
  readonly name: string
  readonly base: string
  readonly head: string
}

export interface RunComparison {
  readonly base: {readonly label: string; readonly system: string}
  readonly head: {readonly label: string; readonly system: string}
  readonly engine: string
  readonly margin: number
  readonly confidence: number
  readonly different_data: boolean
  readonly shared_questions: number
  readonly base_only: number
  readonly head_only: number
  readonly scopes: CompareScope[]
  readonly latency: {readonly base: SystemResults['latency_ms']; readonly head: SystemResults['latency_ms']}
  readonly changes: Change[]
  /** The worst verdict over every scope and metric. */
  readonly verdict: Verdict
  readonly counts: Record<Verdict, number>
}

export interface CompareOptions {
  readonly margin?: number
  /** The system of each side to compare (default: each side's primary). */
  readonly system?: string
  readonly allowDifferentData?: boolean
  readonly seed?: number
  readonly resamples?: number
}

/** The verdict of one paired difference against the non-inferiority margin. */
export function verdictOf(d: Pick<MetricDifference, 'delta' | 'low' | 'high'>, margin: number): Verdict {
  if (d.low === null || d.high === null) return 'no_clear_change'
  if (d.low > 0) return 'improved'
  if (d.high < 0 && d.delta < -margin) return 'regressed'
  if (d.low < -margin) return 'not_shown_non_inferior'
  return 'no_clear_change'
}

/** Verdicts from the one that decides the headline first: any regression, then any doubt, then any gain. */
const SEVERITY: readonly Verdict[] = ['regressed', 'not_shown_non_inferior', 'improved', 'no_clear_change']

function pickSystem(r: QuestionResults, label: string, system: string | undefined): [string, SystemResults] {
  const name = system ?? r.primary
  const s = r.systems[name]
  if (!s)
    throw new InputError(`${label}: systems`, `a system named "${name}" (one of ${Object.keys(r.systems).join(', ')})`)
  return [name, s]
}

/** Compares HEAD against BASE; refuses different engines, and different data unless allowed. */
export function compareRuns(
  base: {label: string; results: QuestionResults},
  head: {label: string; results: QuestionResults},
  options: CompareOptions = {},
): RunComparison {
  const margin = options.margin ?? NONINFERIORITY_MARGIN
  const b = base.results
  const h = head.results
  if (b.engine.name !== h.engine.name)
    throw new InputError(
      `${head.label}: engine.name`,
      `the engine of ${base.label} ("${b.engine.name}")`,
      JSON.stringify(h.engine.name),
    )
  const differentData = b.data.sha256 !== h.data.sha256
  if (differentData && !options.allowDifferentData)
    throw new InputError(
      `${head.label}: data.sha256`,
      `the data of ${base.label} (${b.data.sha256.slice(0, 12)}; --allow-different-data compares anyway)`,
      h.data.sha256.slice(0, 12),
    )
  const [baseSystem, bs] = pickSystem(b, base.label, options.system)
  const [headSystem, hs] = pickSystem(h, head.label, options.system)
  const metrics = b.metrics.filter((m) => h.metrics.includes(m))
  if (metrics.length === 0)
    throw new InputError(`${head.label}: metrics`, `a metric of ${base.label} (${b.metrics.join(', ')})`)
  const headIndex = new Map(h.questions.map(([id], i) => [id, i]))
  const pairs = b.questions.flatMap(([id, category, type], i) => {
    const j = headIndex.get(id)
    return j === undefined
      ? []
      : [{category, type, a: rowOf(bs.values[i], b.metrics), b: rowOf(hs.values[j], h.metrics)}]
  })
  if (pairs.length === 0)
    throw new InputError(
      `${head.label}: questions`,
      `at least one question id shared with ${base.label}`,
      'none shared',
    )
  const scopeOf = (scope: string, selected: typeof pairs): CompareScope => {
    const c = compareRows(
      {name: 'base', rows: selected.map((p) => p.a)},
      {name: 'head', rows: selected.map((p) => p.b)},
      metrics,
      {seed: options.seed, resamples: options.resamples},
    )
    return {
      scope,
      questions: selected.length,
      metrics: c.differences.map((d) => ({...d, verdict: verdictOf(d, margin)})),
    }
  }
  const categories = [...new Set(pairs.map((p) => p.category))]
  const types = [...new Set(pairs.flatMap((p) => (p.type === undefined ? [] : [p.type])))].sort()
  const scopes = [
    scopeOf('overall', pairs),
    ...categories.map((c) =>
      scopeOf(
        c,
        pairs.filter((p) => p.category === c),
      ),
    ),
    ...types.map((t) =>
      scopeOf(
        `query type ${t}`,
        pairs.filter((p) => p.type === t),
      ),
    ),
  ]
  const counts = Object.fromEntries(SEVERITY.map((v) => [v, 0])) as Record<Verdict, number>
  for (const s of scopes) for (const m of s.metrics) counts[m.verdict]++
  const verdict = SEVERITY.find((v) => counts[v] > 0) ?? 'no_clear_change'
  return {
    base: {label: base.label, system: baseSystem},
    head: {label: head.label, system: headSystem},
    engine: b.engine.name,
    margin,
    confidence: scopes[0].metrics[0]?.confidence ?? COMPARE_CONFIDENCE,
    different_data: differentData,
    shared_questions: pairs.length,
    base_only: b.questions.length - pairs.length,
    head_only: h.questions.length - pairs.length,
    scopes,
    latency: {base: bs.latency_ms, head: hs.latency_ms},
    changes: changesBetween(b, bs, h, hs),
    verdict,
    counts,
  }
}

function rowOf(values: readonly number[], metrics: readonly string[]): MetricValues {
  const row: MetricValues = {}
  metrics.forEach((m, i) => (row[m] = values[i]))
  return row
}

/** What differs between the two sides: parameter values, engine file, data, kt version. */
function changesBetween(b: QuestionResults, bs: SystemResults, h: QuestionResults, hs: SystemResults): Change[] {
  const out: Change[] = []
  const show = (v: unknown): string => (v === undefined ? '(unset)' : JSON.stringify(v))
  for (const name of [...new Set([...Object.keys(bs.config), ...Object.keys(hs.config)])].sort())
    if (show(bs.config[name]) !== show(hs.config[name]))
      out.push({what: 'parameter', name, base: show(bs.config[name]), head: show(hs.config[name])})
  const short = (s: string | null): string => (s === null ? '(none)' : s.slice(0, 12))
  if (b.engine.file_sha256 !== h.engine.file_sha256)
    out.push({
      what: 'engine file',
      name: 'sha256',
      base: short(b.engine.file_sha256),
      head: short(h.engine.file_sha256),
    })
  if (b.data.sha256 !== h.data.sha256)
    out.push({what: 'data', name: 'sha256', base: short(b.data.sha256), head: short(h.data.sha256)})
  if (b.kt_version !== h.kt_version) out.push({what: 'kt version', name: 'kt', base: b.kt_version, head: h.kt_version})
  return out
}

/** kt compare's exit code: 1 when something regressed (with strict, also not shown non-inferior), else 0. */
export function compareExitCode(c: RunComparison, strict: boolean): 0 | 1 {
  if (c.counts.regressed > 0) return 1
  if (strict && c.counts['not_shown_non_inferior'] > 0) return 1
  return 0
}
