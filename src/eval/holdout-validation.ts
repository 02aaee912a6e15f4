/**
 * Held-out validation of kt's retrieval profiles: a profile tuned on some conversations is scored
 * on conversations the search never saw, against the engine's defaults (what it replaces) on the
 * same questions, with a paired bootstrap interval of the difference (compareRows, the interval
 * `kt eval --against` prints). The verdict is a non-inferiority test:
 *
 *   pass  <=>  the lower bound of the interval of (profile - defaults) on the metric >= -margin
 *
 * i.e. the data rule out, at the interval's confidence (one-sided 97.5% at a 95% interval), that
 * the profile loses more than `margin` against the defaults. "Not shown to be worse" (the upper
 * bound above -margin) is not enough: on a small held-out set every profile would pass. The
 * held-out numbers are what `kt eval --profile P --conversation <held-out ids>` gives.
 */
import type {MemoryDataset} from '../data/conversations/types.js'
import {QUERY_TYPES, type RoutedOverrides} from '../engine/retrieval/classifier.js'
import type {MetricValues} from '../data/conversations/metrics.js'
import {RETRIEVAL_SPACE} from '../engine/retrieval/space.js'
import {defaultConfig, type Config} from '../space/index.js'
import {validationFrom, type ProfileValidation} from '../deploy/profile.js'
import {DEFAULT_BOOTSTRAP_RESAMPLES} from '../stats/bootstrap.js'
import {DEFAULT_CONFIDENCE} from '../stats/interval.js'
import {compareRows, COMPARE_BOOTSTRAP_SEED, type MetricDifference} from './compare.js'
import {evaluateSystem, prepareEvaluation, type PreparedEvaluation} from './harness.js'
import {queryTypes} from './retrieval-objective.js'

/**
 * Default non-inferiority margin, absolute, on the plan's ranking metric: a profile may not be
 * shown to lose more than one question in a hundred (0.01 of recall@10) against the defaults. It
 * is a product choice, not a statistical one: small enough that a loss kt would let through is
 * below what a user notices, large enough that a profile that truly equals the defaults can pass
 * on a few hundred held-out questions. Plans set their own (retrieval.margin).
 */
export const NONINFERIORITY_MARGIN = 0.01

/**
 * A routed profile's override for one query type is validated on that type's held-out questions
 * when there are at least this many; fewer are covered by the overall criterion only. The
 * percentile bootstrap undercovers below about 20 rows (src/stats/bootstrap.ts, bootstrapCI).
 */
export const MIN_TYPE_QUESTIONS = 20

/** The pass rule in words, for reports and the profiles' criteria. */
function noninferiorityRule(metric: string, margin: number, confidence: number): string {
  return `pass when the lower bound of the ${Math.round(100 * confidence)}% paired bootstrap interval of ${metric} (profile - defaults) on the held-out questions is >= -${margin}`
}

export interface HoldoutValidationSettings {
  readonly metric: string
  readonly margin: number
  readonly confidence: number
  readonly resamples: number
  /** Seed of the bootstrap (kt eval --against uses COMPARE_BOOTSTRAP_SEED). */
  readonly seed: number
}

export const DEFAULT_HOLDOUT_SETTINGS: Omit<HoldoutValidationSettings, 'metric'> = {
  margin: NONINFERIORITY_MARGIN,
  confidence: DEFAULT_CONFIDENCE,
  resamples: DEFAULT_BOOTSTRAP_RESAMPLES,
  seed: COMPARE_BOOTSTRAP_SEED,
}

/** A configuration to validate: a domain profile, or the routed profile (base plus overrides). */
export interface HoldoutCandidate {
  readonly name: string
  readonly trial: number | null
  readonly config: Config
  readonly overrides?: RoutedOverrides
  /** Its quality on the tuning data, as the study measured it (null when unknown). */
  readonly tuning_quality: number | null
}

/** Profile minus defaults on some held-out questions. */
interface HoldoutDelta {
  readonly queries: number
  readonly defaults_quality: number
  readonly quality: number
  /** quality - defaults_quality, with its paired bootstrap interval. */
  readonly delta: {
    readonly kind: 'absolute'
    readonly value: number
    readonly low: number | null
    readonly high: number | null
    readonly confidence: number
  }
  /** Questions where the profile scores higher / lower than the defaults. */
  readonly better: number
  readonly worse: number
}

interface HoldoutProfileCheck extends HoldoutDelta {
  readonly name: string
  readonly trial: number | null
  readonly tuning_quality: number | null
  /** Routed profiles: each overridden query type on its own held-out questions. */
  readonly per_type?: Array<
    HoldoutDelta & {readonly type: string; readonly criterion: boolean; readonly passed: boolean | null}
  >
  readonly criteria: ProfileValidation['criteria']
  readonly verdict: 'pass' | 'fail'
  readonly passed: boolean
  /** How the per-type overrides were validated (routed profiles). */
  readonly note?: string
}

/** Every profile of a study against the defaults on the held-out conversations. */
export interface HoldoutValidation {
  /** Which conversations were tuned on and which held out. */
  readonly split: string
  readonly metric: string
  readonly queries: number
  readonly margin: number
  readonly confidence: number
  readonly resamples: number
  readonly rule: string
  /** A routed profile's override is checked on its own type's questions from this many (MIN_TYPE_QUESTIONS). */
  readonly min_type_questions: number
  readonly defaults_quality: number
  readonly profiles: HoldoutProfileCheck[]
}

/** The dataset id profiles name in their validation records (criteria's `dataset`). */
const HOLDOUT_DATA_ID = 'holdout'

function deltaOf(d: MetricDifference, queries: number): HoldoutDelta {
  return {
    queries,
    defaults_quality: d.a,
    quality: d.b,
    delta: {kind: 'absolute', value: d.delta, low: d.low, high: d.high, confidence: d.confidence},
    better: d.better,
    worse: d.worse,
  }
}

/** A candidate scored on the held-out questions: its per-question metric rows (the defaults' order). */
export interface ScoredCandidate {
  readonly name: string
  readonly trial: number | null
  readonly tuning_quality: number | null
  readonly rows: readonly MetricValues[]
  /** Routed profiles: the query types it overrides, with each held-out question's type (rows' order). */
  readonly routing?: {readonly overridden: readonly string[]; readonly typeOf: readonly string[]}
}

/**
 * The non-inferiority test of each candidate against the defaults on the same held-out questions
 * (rows in the same order): one criterion over every question, and for a routed candidate one per
 * overridden type with at least MIN_TYPE_QUESTIONS questions. Any engine whose per-question
 * scores are known goes through it (kt's own: validateOnHoldout; an engine file's service: Phase 4).
 */
export function noninferiorityValidation(
  defaultRows: readonly MetricValues[],
  candidates: readonly ScoredCandidate[],
  settings: HoldoutValidationSettings,
  split: string,
): HoldoutValidation {
  if (defaultRows.length === 0)
    throw new Error(`noninferiorityValidation: no scored question in the held-out conversations (${split})`)
  const {metric, margin, confidence, resamples, seed} = settings
  const options = {confidence, resamples, seed}
  const rule = noninferiorityRule(metric, margin, confidence)
  const key = (suffix: string) => `${metric}_${suffix}`.replace(/[^A-Za-z0-9_.@:-]/g, '_').slice(0, 64)
  const criterion = (id: string, d: HoldoutDelta, what: string) => ({
    id,
    description:
      `${what}: ${rule} (${d.queries} questions; ${metric} ${d.quality.toFixed(4)} against the defaults' ${d.defaults_quality.toFixed(4)})`.slice(
        0,
        2000,
      ),
    metric: key('delta_ci_low'),
    op: '>=' as const,
    threshold: -margin,
    value: d.delta.low,
    passed: d.delta.low !== null && d.delta.low >= -margin,
    dataset: HOLDOUT_DATA_ID,
  })
  const profiles = candidates.map((c): HoldoutProfileCheck => {
    if (c.rows.length !== defaultRows.length)
      throw new RangeError(
        `noninferiorityValidation: ${c.rows.length} held-out rows for ${c.name}, ${defaultRows.length} for the defaults`,
      )
    const overall = deltaOf(
      compareRows({name: 'defaults', rows: defaultRows}, {name: c.name, rows: c.rows}, [metric], options)
        .differences[0],
      c.rows.length,
    )
    const criteria = [criterion('holdout-noninferior', overall, 'all held-out questions')]
    let perType: HoldoutProfileCheck['per_type']
    let note: string | undefined
    if (c.routing) {
      perType = []
      const thin: string[] = []
      for (const type of c.routing.overridden) {
        const idx = c.routing.typeOf.map((t, i) => (t === type ? i : -1)).filter((i) => i >= 0)
        if (idx.length === 0) {
          thin.push(`${type} (no held-out question)`)
          continue
        }
        const pick = <T>(xs: readonly T[]) => idx.map((i) => xs[i])
        const d = deltaOf(
          compareRows(
            {name: 'defaults', rows: pick(defaultRows)},
            {name: `${c.name} ${type}`, rows: pick(c.rows)},
            [metric],
            options,
          ).differences[0],
          idx.length,
        )
        const checked = idx.length >= MIN_TYPE_QUESTIONS
        const own = checked
          ? criterion(`holdout-noninferior-${type}`.replace(/_/g, '-'), d, `${type} questions (its override)`)
          : undefined
        perType.push({type, ...d, criterion: checked, passed: own ? own.passed : null})
        if (own) criteria.push(own)
        else thin.push(`${type} (${idx.length} held-out questions)`)
      }
      const checkedTypes = perType.filter((t) => t.criterion).map((t) => t.type)
      note =
        c.routing.overridden.length === 0
          ? 'no per-type overrides: validated on all held-out questions'
          : `per-type overrides validated on their own held-out questions: ${checkedTypes.join(', ') || 'none'}; overall only (fewer than ${MIN_TYPE_QUESTIONS} held-out questions): ${thin.join(', ') || 'none'}`
    }
    const passed = criteria.every((x) => x.passed)
    return {
      name: c.name,
      trial: c.trial,
      tuning_quality: c.tuning_quality,
      ...overall,
      ...(perType ? {per_type: perType} : {}),
      criteria,
      verdict: passed ? 'pass' : 'fail',
      passed,
      ...(note ? {note} : {}),
    }
  })
  return {
    split,
    metric,
    queries: defaultRows.length,
    margin,
    confidence,
    resamples,
    rule,
    min_type_questions: MIN_TYPE_QUESTIONS,
    defaults_quality: meanOf(defaultRows, metric),
    profiles,
  }
}

/**
 * kt's own engine: scores the candidates and the defaults on the held-out conversations (every
 * scored question, as `kt eval` does) and tests each for non-inferiority (noninferiorityValidation).
 */
export function validateOnHoldout(
  heldOut: MemoryDataset,
  candidates: readonly HoldoutCandidate[],
  settings: HoldoutValidationSettings,
  split: string,
): HoldoutValidation {
  const defaults = defaultConfig(RETRIEVAL_SPACE)
  const plain = prepareEvaluation(heldOut)
  const queries = plain.selection.queries
  const types = queryTypes(plain)
  const typeOf = queries.map((q) => types.get(q.id) as string)
  // engines with a routed profile's overrides built in, shared by candidates with the same overrides
  const prepared = new Map<string, PreparedEvaluation>([['', plain]])
  const scored = candidates.map((c): ScoredCandidate => {
    const okey = c.overrides ? JSON.stringify(c.overrides) : ''
    if (!prepared.has(okey)) prepared.set(okey, prepareEvaluation(heldOut, {overrides: c.overrides}))
    const rows = evaluateSystem(prepared.get(okey)!, 'engine', {...defaults, ...c.config}).rows
    return {
      name: c.name,
      trial: c.trial,
      tuning_quality: c.tuning_quality,
      rows,
      ...(c.overrides ? {routing: {overridden: QUERY_TYPES.filter((t) => c.overrides![t] !== undefined), typeOf}} : {}),
    }
  })
  return noninferiorityValidation(
    queries.length === 0 ? [] : evaluateSystem(plain, 'engine', defaults).rows,
    scored,
    settings,
    split,
  )
}

function meanOf(rows: readonly Record<string, number>[], metric: string): number {
  const values = rows.map((r) => r[metric]).filter((v) => typeof v === 'number' && !Number.isNaN(v))
  return values.length === 0 ? NaN : values.reduce((s, v) => s + v, 0) / values.length
}

/** A profile's validation record (the deploy gate reads it) from its held-out check. */
export function holdoutProfileValidation(v: HoldoutValidation, name: string): ProfileValidation | undefined {
  const check = v.profiles.find((p) => p.name === name)
  if (!check) return undefined
  const note = `held-out conversations: ${v.split}; ${v.rule}${check.note ? `; ${check.note}` : ''}`
  return validationFrom(
    check.criteria,
    [HOLDOUT_DATA_ID],
    note.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ').slice(0, 2000),
  )
}

/** The held-out figures a profile records in its metrics: its quality and the defaults', and the interval. */
export function holdoutMetrics(v: HoldoutValidation, name: string): Record<string, number | null> {
  const check = v.profiles.find((p) => p.name === name)
  if (!check) return {}
  const key = (suffix: string) => `${v.metric}_${suffix}`.replace(/[^A-Za-z0-9_.@:-]/g, '_').slice(0, 64)
  return {
    [key('holdout')]: check.quality,
    [key('holdout_defaults')]: check.defaults_quality,
    [key('holdout_delta')]: check.delta.value,
    [key('holdout_delta_ci_low')]: check.delta.low,
    [key('holdout_delta_ci_high')]: check.delta.high,
    holdout_queries: check.queries,
  }
}

/** Console lines: each profile's tuning and held-out quality, the defaults', the interval and the verdict. */
export function holdoutValidationLines(v: HoldoutValidation): string[] {
  const f = (x: number | null) => (x === null ? '-' : x.toFixed(4))
  const s = (x: number | null) => (x === null ? '-' : `${x >= 0 ? '+' : ''}${x.toFixed(4)}`)
  const lines = [
    `validation on the held-out conversations (${v.queries} questions; ${v.split}); the defaults score ${f(v.defaults_quality)}`,
    `  rule: ${v.rule}`,
    `  profile${' '.repeat(24)}tuning   held-out  defaults  delta [${Math.round(100 * v.confidence)}% CI]                verdict`,
  ]
  for (const p of v.profiles) {
    lines.push(
      `  ${p.name.padEnd(30)} ${f(p.tuning_quality).padEnd(8)} ${f(p.quality).padEnd(9)} ${f(p.defaults_quality).padEnd(9)} ${`${s(p.delta.value)} [${s(p.delta.low)}, ${s(p.delta.high)}]`.padEnd(32)} ${p.verdict.toUpperCase()}`,
    )
    for (const t of p.per_type ?? [])
      lines.push(
        `    ${t.type.padEnd(28)} ${''.padEnd(8)} ${f(t.quality).padEnd(9)} ${f(t.defaults_quality).padEnd(9)} ${`${s(t.delta.value)} [${s(t.delta.low)}, ${s(t.delta.high)}]`.padEnd(32)} ${t.criterion ? 'checked' : `overall only (${t.queries} questions)`}`,
      )
  }
  return lines
}
