/**
 * What the dashboard's JSON endpoints return: the studies list and one study's page data, built
 * from the StudyReader. Trials go out column by column (one array per field, per parameter and
 * per metric), which keeps 10,000 trials to a few megabytes and quick to serialise.
 */
import {analyzeStudy, isBiObjective} from '../search/analysis.js'
import {incumbent, incumbentTrace} from '../search/incumbent.js'
import {TIMING_METRIC_PREFIX} from '../search/types.js'
import {DEFAULT_TUNING_METRIC} from '../data/conversations/metrics.js'
import type {ParamSpace} from '../space/index.js'
import type {StudySummary} from '../study/reader.js'
import type {StudyRecord, TrialRow} from '../study/store.js'

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
export function valueDefinition(study: Pick<StudyRecord, 'objective'>, trials: readonly TrialRow[]): ValueDefinition {
  const obj = (study.objective ?? {}) as {name?: string; options?: {metric?: unknown; objective?: unknown}}
  const sample = trials.find((t) => t.status === 'ok' && t.metrics)?.metrics ?? {}
  // the retrieval objective stores its ranking metric as `quality` (default recall@10)
  if (Number.isFinite(sample.quality)) return {name: typeof obj.options?.metric === 'string' ? obj.options.metric : obj.name === 'retrieval' ? DEFAULT_TUNING_METRIC : 'quality', sense: 'max', source: 'metric:quality'}
  const named = obj.options?.objective
  if (typeof named === 'string' && Number.isFinite(sample[named])) return {name: named, sense: 'max', source: `metric:${named}`}
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
export function lastActivity(updatedAt: string, trials: readonly TrialRow[]): string {
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
    name: s.name, objective: (s.objective as {name?: string})?.name ?? '?', optimizer: s.optimizer, state: s.state,
    trials: s.trials, ok: s.ok, failed: s.failed, running: s.running,
    best_value: best ? valueOf(def, best) : null, value_name: def.name, last_activity: lastActivity(s.updatedAt, trials),
  }
}

/** Parameter names in table order (simplex members by their own names), then any others seen. */
function paramNames(space: ParamSpace | undefined, trials: readonly TrialRow[]): string[] {
  const names: string[] = []
  for (const p of space?.params ?? []) {
    if (p.kind === 'simplex') names.push(...p.members.map((m) => m.name))
    else names.push(p.name)
  }
  const known = new Set(names)
  for (const t of trials) for (const k of Object.keys(t.config ?? {})) if (!known.has(k)) (known.add(k), names.push(k))
  return names
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
function trialCost(t: TrialRow, byId: Map<number, TrialRow>): number {
  const from = t.continues === null ? undefined : byId.get(t.continues)
  return from ? Math.max(0, t.budget - from.budget) : t.budget
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
  /** Column-wise trials in id order. */
  readonly trials: {
    id: number[]; budget: number[]; status: string[]; value: Array<number | null>; loss: Array<number | null>
    finished_at: Array<string | null>; duration_ms: Array<number | null>
    /** Position in finish order (1-based), the best value so far at that point, and the consumed budget then. */
    order: Array<number | null>; best_so_far: Array<number | null>; budget_so_far: Array<number | null>
    config: Record<string, Array<string | number | boolean | null>>
    metric: Record<string, Array<number | null>>
  }
  readonly best: {id: number; value: number | null; budget: number; config: Record<string, unknown>} | null
  /** Bi-objective studies: the front at the largest budget, the dominated trials, domain profiles. */
  readonly front: null | {
    quality: string; latency: string; latency_kind: 'estimated' | 'measured'
    reference: {quality: number; p99_ms: number; rule: string}
    points: number[]; dominated: number[]; hypervolume: number; hypervolume_share: number
  }
  readonly profiles: Array<{name: string; description: string; trial: number | null; on_front: boolean | null; rationale: string[]}>
  /** Routed studies: per query type, the quality of this study's best configuration and of the type's own study. */
  readonly per_type: Array<{type: string; base_quality: number | null; queries: number | null; type_study: string | null; type_best: number | null}>
}

export function studyView(study: StudyRecord, trials: readonly TrialRow[], siblings: ReadonlyArray<{name: string; trials: readonly TrialRow[]}> = []): StudyView {
  const def = valueDefinition(study, trials)
  const params = paramNames(study.space as ParamSpace | undefined, trials)
  const metricKeys = [...new Set(trials.flatMap((t) => Object.keys(t.metrics ?? {})))]
  const metrics = [...metricKeys.filter((k) => !k.startsWith(TIMING_METRIC_PREFIX)).sort(), ...metricKeys.filter((k) => k.startsWith(TIMING_METRIC_PREFIX)).sort()]
  const byId = new Map(trials.map((t) => [t.id, t]))
  // finish order: the best value so far and the budget consumed so far follow it
  const finished = trials.filter((t) => t.status !== 'running').sort((a, b) => (a.tellSeq ?? Infinity) - (b.tellSeq ?? Infinity) || (a.finishedAt ?? '').localeCompare(b.finishedAt ?? '') || a.id - b.id)
  const trace = incumbentTrace(finished)
  const order = new Map<number, {pos: number; best: number | null; spent: number}>()
  let spent = 0
  finished.forEach((t, i) => {
    spent += trialCost(t, byId)
    const inc = trace[i] >= 0 ? finished[trace[i]] : undefined
    order.set(t.id, {pos: i + 1, best: inc ? valueOf(def, inc) : null, spent})
  })
  const maxBudgetSeen = Math.max(0, ...trials.map((t) => t.budget))
  const col = {
    id: [] as number[], budget: [] as number[], status: [] as string[], value: [] as Array<number | null>, loss: [] as Array<number | null>,
    finished_at: [] as Array<string | null>, duration_ms: [] as Array<number | null>,
    order: [] as Array<number | null>, best_so_far: [] as Array<number | null>, budget_so_far: [] as Array<number | null>,
    config: Object.fromEntries(params.map((p) => [p, [] as Array<string | number | boolean | null>])),
    metric: Object.fromEntries(metrics.map((m) => [m, [] as Array<number | null>])),
  }
  for (const t of trials) {
    col.id.push(t.id)
    col.budget.push(t.budget)
    col.status.push(t.status)
    col.value.push(valueOf(def, t))
    col.loss.push(t.loss)
    col.finished_at.push(t.finishedAt)
    col.duration_ms.push(t.durationMs)
    const o = order.get(t.id)
    col.order.push(o?.pos ?? null)
    col.best_so_far.push(o?.best ?? null)
    col.budget_so_far.push(o && maxBudgetSeen > 0 ? o.spent / maxBudgetSeen : null)
    for (const p of params) {
      const v = t.config?.[p] ?? null
      col.config[p].push(typeof v === 'number' ? shown(v) : v)
    }
    for (const m of metrics) {
      const v = t.metrics?.[m]
      col.metric[m].push(Number.isFinite(v) ? shown(v as number) : null)
    }
  }
  const best = incumbent(trials)
  let front: StudyView['front'] = null
  let profiles: StudyView['profiles'] = []
  if (isBiObjective(trials)) {
    const a = analyzeStudy(trials)
    front = {
      quality: def.source === 'metric:quality' ? def.name : 'quality', latency: 'p99_ms',
      // the retrieval objective's p99_ms is its cost model's estimate (src/engine/retrieval/cost.ts); measured timings are the measured_* metrics
      latency_kind: 'estimated',
      reference: {quality: a.front.reference.quality, p99_ms: a.front.reference.latencyMs, rule: a.front.reference.rule},
      points: a.front.front.map((p) => p.trialId), dominated: a.front.dominated.map((p) => p.trialId),
      hypervolume: a.front.hypervolume, hypervolume_share: a.front.hypervolumeShare,
    }
    profiles = a.profiles.map((p) => ({name: p.profile, description: p.description, trial: p.trialId, on_front: p.onFront, rationale: p.rationale}))
  }
  const perType: StudyView['per_type'] = []
  const types = [...new Set(metrics.filter((m) => m.startsWith('quality.')).map((m) => m.slice('quality.'.length)))].sort()
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
    name: study.name, objective: study.objective, optimizer: study.optimizer, seed: study.seed, state: study.state,
    created_at: study.createdAt, updated_at: study.updatedAt, value: def, max_budget: trials.length ? maxBudgetSeen : null,
    params, metrics, trials: col,
    best: best ? {id: best.id, value: valueOf(def, best), budget: best.budget, config: best.config} : null,
    front, profiles, per_type: perType,
  }
}
