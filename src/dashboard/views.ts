/**
 * What the dashboard's JSON endpoints return: the studies list and one study's page data, built
 * from the StudyReader. Trials go out column by column (one array per field, per parameter and
 * per metric), which keeps 10,000 trials to a few megabytes and quick to serialise.
 */
import {isBiObjective} from '../eval/retrieval-analysis.js'
import {engineFront, retrievalFront, studyEngineOrNull} from './front.js'
import {incumbent, replacesIncumbent} from '../search/incumbent.js'
import {TIMING_METRIC_PREFIX} from '../search/types.js'
import {DEFAULT_TUNING_METRIC} from '../data/conversations/metrics.js'
import type {ParamSpace} from '../space/index.js'
import type {StudySummary} from '../study/reader.js'
import type {StudyRecord, TrialRow} from '../study/model.js'
import type {LatencyKind} from '../report/front-chart.js'

/** What a study's headline value is: a metric it maximises, or the loss it minimises. */
export interface ValueDefinition {
  /** e.g. "recall@10", "spearman", "loss of branin". */
  readonly name: string
  readonly sense: 'max' | 'min'
  /** Where it comes from: `metric:<key>` or `loss`. */
  readonly source: string
}

/**
 * A study's value: retrieval studies report their ranking metric (stored as metric `quality`,
 * loss = -quality); the importance study its correlation (metric named by options.objective,
 * loss = -correlation); any other objective its loss.
 */
function valueDefinition(study: Pick<StudyRecord, 'objective'>, trials: readonly TrialRow[]): ValueDefinition {
  const obj = (study.objective ?? {}) as {name?: string; options?: {metric?: unknown; objective?: unknown}}
  const sample = trials.find((t) => t.status === 'ok' && t.metrics)?.metrics ?? {}
  // the retrieval objective stores its ranking metric as `quality` (default recall@10)
  if (Number.isFinite(sample.quality))
    return {
      name:
        typeof obj.options?.metric === 'string'
          ? obj.options.metric
          : obj.name === 'retrieval'
            ? DEFAULT_TUNING_METRIC
            : 'quality',
      sense: 'max',
      source: 'metric:quality',
    }
  const named = obj.options?.objective
  if (typeof named === 'string' && Number.isFinite(sample[named]))
    return {name: named, sense: 'max', source: `metric:${named}`}
  return {name: `loss of ${obj.name ?? 'the objective'}`, sense: 'min', source: 'loss'}
}

function valueOf(def: ValueDefinition, t: TrialRow): number | null {
  if (t.status !== 'ok') return null
  if (def.source === 'loss') return t.loss
  const v = t.metrics?.[def.source.slice('metric:'.length)]
  return Number.isFinite(v) ? (v as number) : null
}

export interface StudyListEntry {
  readonly name: string
  readonly objective: string
  readonly optimizer: string
  readonly state: string
  readonly trials: number
  readonly ok: number
  readonly failed: number
  readonly running: number
  readonly best_value: number | null
  readonly value_name: string
  readonly last_activity: string
}

/** The latest of the study's update time and its trials' start and finish times (ISO strings compare as times). */
function lastActivity(updatedAt: string, trials: readonly TrialRow[]): string {
  let last = updatedAt
  for (const t of trials) {
    if (t.finishedAt && t.finishedAt > last) last = t.finishedAt
    if (t.startedAt && t.startedAt > last) last = t.startedAt
  }
  return last
}

export function studyListEntry(s: StudySummary, trials: readonly TrialRow[]): StudyListEntry {
  const def = valueDefinition(s, trials)
  const best = incumbent(trials)
  return {
    name: s.name,
    objective: (s.objective as {name?: string})?.name ?? '?',
    optimizer: s.optimizer,
    state: s.state,
    trials: s.trials,
    ok: s.ok,
    failed: s.failed,
    running: s.running,
    best_value: best ? valueOf(def, best) : null,
    value_name: def.name,
    last_activity: lastActivity(s.updatedAt, trials),
  }
}

/** Parameter names in table order (simplex members by their own names), then any others seen. */
function paramNames(space: ParamSpace | undefined, trials: readonly TrialRow[]): string[] {
  const names: string[] = []
  for (const p of space?.params ?? []) {
    if (p.kind === 'simplex') names.push(...p.members.map((m) => m.name))
    else names.push(p.name)
  }
  return addNewKeys(names, trials)
}

/** `names` followed by the config keys of `trials` it lacks, in order of first appearance. */
function addNewKeys(names: readonly string[], trials: readonly TrialRow[]): string[] {
  const out = [...names]
  const known = new Set(names)
  for (const t of trials)
    for (const k of Object.keys(t.config ?? {}))
      if (!known.has(k)) {
        known.add(k)
        out.push(k)
      }
  return out
}

/** Deterministic metrics sorted, then wall-clock timings (measured_*) sorted. */
function orderMetrics(keys: Iterable<string>): string[] {
  const all = [...keys]
  return [
    ...all.filter((k) => !k.startsWith(TIMING_METRIC_PREFIX)).sort(),
    ...all.filter((k) => k.startsWith(TIMING_METRIC_PREFIX)).sort(),
  ]
}

function metricKeys(trials: readonly TrialRow[], into = new Set<string>()): Set<string> {
  for (const t of trials) if (t.metrics) for (const k of Object.keys(t.metrics)) into.add(k)
  return into
}

/**
 * Numbers as the page shows them: six decimals for values of 0.001 and more (every digit a table,
 * tooltip or axis can show; the stored trial keeps full precision, `kt study export` has it),
 * which keeps 10,000 trials' JSON about half the size.
 */
function shown(v: number): number {
  return Number.isInteger(v) || Math.abs(v) < 1e-3 ? v : Math.round(v * 1e6) / 1e6
}

/** Marginal cost of a trial in budget units: a continuation pays only the budget beyond the trial it continues. */
function trialCost(t: TrialRow, byId: (id: number) => TrialRow | undefined): number {
  const from = t.continues === null ? undefined : byId(t.continues)
  return from ? Math.max(0, t.budget - from.budget) : t.budget
}

/**
 * Column-wise trials in id order: what the page draws of each trial (its number, budget, status,
 * value, parameters and metrics), and the three columns that follow the finish order.
 */
export interface TrialColumns {
  id: number[]
  budget: number[]
  status: string[]
  value: Array<number | null>
  /** Position in finish order (1-based), the best value so far at that point, and the consumed budget then. */
  order: Array<number | null>
  best_so_far: Array<number | null>
  budget_so_far: Array<number | null>
  config: Record<string, Array<string | number | boolean | null>>
  metric: Record<string, Array<number | null>>
}

export interface StudyView {
  readonly name: string
  readonly objective: unknown
  readonly optimizer: string
  readonly seed: number
  readonly state: string
  readonly created_at: string
  readonly updated_at: string
  readonly value: ValueDefinition
  readonly max_budget: number | null
  readonly params: string[]
  /** Deterministic metrics, then wall-clock timings (measured_*). */
  readonly metrics: string[]
  readonly trials: TrialColumns
  readonly best: {id: number; value: number | null; budget: number; config: Record<string, unknown>} | null
  /** Bi-objective studies: the front at the largest budget, the dominated trials, domain profiles. */
  readonly front: null | {
    /** The quality objective's label, and the trial metrics holding the two objectives. */
    quality: string
    quality_metric: string
    latency: string
    /** Which way each of the two objectives is better (an engine file's own; kt's retrieval: more quality, less latency). */
    directions: {quality: 'maximize' | 'minimize'; latency: 'maximize' | 'minimize'}
    latency_kind: LatencyKind
    reference: {quality: number; p99_ms: number; rule: string}
    points: number[]
    dominated: number[]
    hypervolume: number
    hypervolume_share: number
  }
  readonly profiles: Array<{
    name: string
    description: string
    trial: number | null
    on_front: boolean | null
    rationale: string[]
  }>
  /** Routed studies: per query type, the quality of this study's best configuration and of the type's own study. */
  readonly per_type: Array<{
    type: string
    base_quality: number | null
    queries: number | null
    type_study: string | null
    type_best: number | null
  }>
}

/** What the columns are laid out by: the value's definition, the parameter and metric names. */
export interface ViewBasis {
  readonly def: ValueDefinition
  readonly params: string[]
  readonly metrics: string[]
}

export function viewBasis(study: StudyRecord, trials: readonly TrialRow[]): ViewBasis {
  return {
    def: valueDefinition(study, trials),
    params: paramNames(study.space as ParamSpace | undefined, trials),
    metrics: orderMetrics(metricKeys(trials)),
  }
}

/** The basis after `changed` trials arrived (new keys only ever add), given the basis before; the same as viewBasis over all trials. */
export function grownBasis(
  before: ViewBasis,
  study: StudyRecord,
  all: readonly TrialRow[],
  changed: readonly TrialRow[],
): ViewBasis {
  const metrics = metricKeys(changed, new Set(before.metrics))
  return {
    def: valueDefinition(study, all),
    params: addNewKeys(before.params, changed),
    metrics: metrics.size === before.metrics.length ? before.metrics : orderMetrics(metrics),
  }
}

export function sameBasis(a: ViewBasis, b: ViewBasis): boolean {
  // plain data built in one order: equal text is equal content
  return JSON.stringify(a) === JSON.stringify(b)
}

/** Empty columns of length n for the basis (filled by writeTrial and finishOrder). */
export function emptyColumns(basis: ViewBasis, n: number): TrialColumns {
  const col = () => new Array(n).fill(null)
  return {
    id: col(),
    budget: col(),
    status: col(),
    value: col(),
    order: col(),
    best_so_far: col(),
    budget_so_far: col(),
    config: Object.fromEntries(basis.params.map((p) => [p, col()])),
    metric: Object.fromEntries(basis.metrics.map((m) => [m, col()])),
  }
}

/** Writes trial t into position i of the per-trial columns. */
export function writeTrial(col: TrialColumns, i: number, t: TrialRow, basis: ViewBasis): void {
  col.id[i] = t.id
  col.budget[i] = t.budget
  col.status[i] = t.status
  col.value[i] = valueOf(basis.def, t)
  const config = t.config ?? {}
  for (const p of basis.params) {
    const v = config[p] ?? null
    col.config[p][i] = typeof v === 'number' ? shown(v) : v
  }
  const metrics = t.metrics ?? {}
  for (const m of basis.metrics) {
    const v = metrics[m]
    col.metric[m][i] = Number.isFinite(v) ? shown(v) : null
  }
}

/** Largest budget of any trial (0 with none). */
function maxBudget(trials: readonly TrialRow[]): number {
  let top = 0
  for (const t of trials) if (t.budget > top) top = t.budget
  return top
}

/** Where the finish order stands after its last trial: what appending the next finished trials needs. */
export interface FinishState {
  /** Finished trials so far. */
  count: number
  /** tell_seq of the last one (-1: none). */
  lastTell: number
  /** Some finished trial has no tell_seq (imported from an old store): it sorts last, so nothing can be appended after it. */
  untold: boolean
  incumbent: TrialRow | undefined
  /** Budget consumed so far, and the largest budget of any trial (the unit of budget_so_far). */
  spent: number
  top: number
}

/** Finish order: the order results were told, then finish time, then id. */
function byFinish(a: TrialRow, b: TrialRow): number {
  return (
    (a.tellSeq ?? Infinity) - (b.tellSeq ?? Infinity) ||
    (a.finishedAt ?? '').localeCompare(b.finishedAt ?? '') ||
    a.id - b.id
  )
}

/** Writes the next finished trial t (at column position i) into the finish-order columns. */
function finishStep(
  col: TrialColumns,
  state: FinishState,
  t: TrialRow,
  i: number,
  def: ValueDefinition,
  cost: number,
): void {
  state.spent += cost
  if (replacesIncumbent(t, state.incumbent)) state.incumbent = t
  state.count++
  if (t.tellSeq === null) state.untold = true
  else state.lastTell = t.tellSeq
  col.order[i] = state.count
  col.best_so_far[i] = state.incumbent ? valueOf(def, state.incumbent) : null
  col.budget_so_far[i] = state.top > 0 ? state.spent / state.top : null
}

/**
 * The finish-order columns: each finished trial's position in the order results were told, the
 * best value so far then (the incumbent rule), and the budget consumed then, in units of the
 * largest budget. Returns where the order stands, for appendFinished.
 */
export function finishOrder(col: TrialColumns, trials: readonly TrialRow[], def: ValueDefinition): FinishState {
  const byId = new Map<number, TrialRow>()
  const pos = new Map<number, number>()
  trials.forEach((t, i) => (byId.set(t.id, t), pos.set(t.id, i)))
  const finished = trials.filter((t) => t.status !== 'running').sort(byFinish)
  const state: FinishState = {
    count: 0,
    lastTell: -1,
    untold: false,
    incumbent: undefined,
    spent: 0,
    top: maxBudget(trials),
  }
  col.order.fill(null)
  col.best_so_far.fill(null)
  col.budget_so_far.fill(null)
  for (const t of finished)
    finishStep(
      col,
      state,
      t,
      pos.get(t.id)!,
      def,
      trialCost(t, (id) => byId.get(id)),
    )
  return state
}

/**
 * Appends newly finished trials (given by column position) to the finish order, if they come
 * after every trial already in it and no budget grew; returns false (nothing written) otherwise,
 * and the caller recomputes the whole order. Same columns as finishOrder over all trials.
 */
export function appendFinished(
  col: TrialColumns,
  state: FinishState,
  trials: readonly TrialRow[],
  positions: readonly number[],
  def: ValueDefinition,
  byId: (id: number) => TrialRow | undefined,
): boolean {
  if (state.untold || maxBudget(trials) !== state.top) return false
  const added = positions.map((i) => ({i, t: trials[i]})).sort((a, b) => byFinish(a.t, b.t))
  let last = state.lastTell
  for (const {t} of added) {
    if (t.tellSeq === null || t.tellSeq <= last) return false
    last = t.tellSeq
  }
  for (const {i, t} of added) finishStep(col, state, t, i, def, trialCost(t, byId))
  return true
}

/** The bi-objective analysis a view shows, remembered by the set of trials it was computed from. */
export interface FrontMemo {
  key: string
  front: StudyView['front']
  profiles: StudyView['profiles']
}

/** The trials the front is computed from: the successful ones at the largest budget (analyzeStudy's candidates). */
function frontKey(trials: readonly TrialRow[]): string {
  let top = -Infinity
  for (const t of trials) if (t.status === 'ok' && t.metrics && t.budget > top) top = t.budget
  const ids: number[] = []
  for (const t of trials) if (t.status === 'ok' && t.metrics && t.budget === top) ids.push(t.id)
  return `${top}:${ids.join(',')}`
}

function frontOf(
  study: StudyRecord,
  trials: readonly TrialRow[],
  def: ValueDefinition,
  memo?: {current?: FrontMemo},
): {front: StudyView['front']; profiles: StudyView['profiles']} {
  const engine = studyEngineOrNull(study)
  if (!engine && !isBiObjective(trials)) return {front: null, profiles: []}
  const key = `${def.source}|${def.name}|${frontKey(trials)}`
  if (memo?.current?.key === key) return memo.current
  const out: FrontMemo = {key, ...(engine ? engineFront(engine, trials) : retrievalFront(trials, def))}
  if (memo) memo.current = out
  return out
}

export type Siblings = ReadonlyArray<{name: string; trials: readonly TrialRow[]}>

/**
 * A view from its columns: the best trial, the front and profiles (from `memo` when the trials
 * they depend on are the same), the per-type results.
 */
export function assembleView(
  study: StudyRecord,
  trials: readonly TrialRow[],
  basis: ViewBasis,
  col: TrialColumns,
  siblings: Siblings = [],
  memo?: {current?: FrontMemo},
): StudyView {
  const def = basis.def
  const best = incumbent(trials)
  const {front, profiles} = frontOf(study, trials, def, memo)
  const perType: StudyView['per_type'] = []
  const types = [
    ...new Set(basis.metrics.filter((m) => m.startsWith('quality.')).map((m) => m.slice('quality.'.length))),
  ].sort()
  if (types.length > 0) {
    const prefix = study.name.endsWith('-all') ? study.name.slice(0, -'-all'.length) : null
    for (const type of types) {
      const sib = prefix ? siblings.find((s) => s.name === `${prefix}-${type}`) : undefined
      const sibBest = sib ? incumbent(sib.trials) : undefined
      perType.push({
        type,
        base_quality: best?.metrics?.[`quality.${type}`] ?? null,
        queries: best?.metrics?.[`queries.${type}`] ?? null,
        type_study: sib?.name ?? null,
        type_best: sibBest?.metrics?.quality ?? null,
      })
    }
  }
  return {
    name: study.name,
    objective: study.objective,
    optimizer: study.optimizer,
    seed: study.seed,
    state: study.state,
    created_at: study.createdAt,
    updated_at: study.updatedAt,
    value: def,
    max_budget: trials.length ? maxBudget(trials) : null,
    params: basis.params,
    metrics: basis.metrics,
    trials: col,
    best: best ? {id: best.id, value: valueOf(def, best), budget: best.budget, config: best.config} : null,
    front,
    profiles,
    per_type: perType,
  }
}

/** A study's page data from all its trials (in id order); src/dashboard/study-cache.ts keeps it up to date incrementally. */
export function studyView(
  study: StudyRecord,
  trials: readonly TrialRow[],
  siblings: Siblings = [],
  memo?: {current?: FrontMemo},
): StudyView {
  const basis = viewBasis(study, trials)
  const col = emptyColumns(basis, trials.length)
  trials.forEach((t, i) => writeTrial(col, i, t, basis))
  finishOrder(col, trials, basis.def)
  return assembleView(study, trials, basis, col, siblings, memo)
}
