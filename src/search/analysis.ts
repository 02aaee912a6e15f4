/**
 * What a bi-objective study yields, from its stored trials: the quality/latency Pareto front with
 * its hypervolume, the dominated trials, the domain profiles chosen from it, and a chart spec.
 * Only trials at the largest budget are compared (lower budgets score fewer queries).
 */
import type {TrialRow} from '../study/store.js'
import {frontChartSpec, frontLines, frontReport, objectiveFront, objectiveFrontChartSpec, objectiveFrontLines, type FrontObjective, type FrontReport, type ObjectiveFrontReport, type ReferencePoint} from './front.js'
import {chooseDomainProfiles, chooseProfile, type Candidate, type MetricNames, type ProfileChoice, type ProfileRule} from './profiles.js'
import {domainRules, RETRIEVAL_METRIC_NAMES} from '../eval/retrieval-profiles.js'
import {splitTimingMetrics} from './types.js'

/**
 * Successful trials at the largest budget any successful trial reached, with their metrics less
 * the wall-clock timings (TIMING_METRIC_PREFIX), so that the front and profiles built from them
 * repeat exactly when the study does.
 */
export function fullBudgetCandidates(trials: readonly TrialRow[]): Candidate[] {
  const ok = trials.filter((t) => t.status === 'ok' && t.metrics)
  const top = Math.max(-Infinity, ...ok.map((t) => t.budget))
  return ok.filter((t) => t.budget === top).map((t) => ({trialId: t.id, config: t.config, metrics: splitTimingMetrics(t.metrics as Record<string, number>).deterministic}))
}

/** True if the trials carry the quality and latency metrics a front needs. */
export function isBiObjective(trials: readonly TrialRow[], names: MetricNames = RETRIEVAL_METRIC_NAMES): boolean {
  return trials.some((t) => t.status === 'ok' && t.metrics && Number.isFinite(t.metrics[names.quality]) && Number.isFinite(t.metrics[names.latency]))
}

export interface StudyAnalysis {
  readonly front: FrontReport
  readonly profiles: ProfileChoice[]
  readonly chart: Record<string, unknown>
  readonly lines: string[]
}

/**
 * The front, profiles and chart of a bi-objective study. `qualityLabel` names the quality metric
 * in the chart (e.g. recall@10); the chart also shows the trials at lower budgets, faintly.
 */
export function analyzeStudy(trials: readonly TrialRow[], names: MetricNames = RETRIEVAL_METRIC_NAMES, reference?: ReferencePoint, qualityLabel = 'quality'): StudyAnalysis {
  const candidates = fullBudgetCandidates(trials).filter((c) => Number.isFinite(c.metrics[names.quality]) && Number.isFinite(c.metrics[names.latency]))
  const front = frontReport(
    candidates.map((c) => ({trialId: c.trialId, quality: c.metrics[names.quality], latencyMs: c.metrics[names.latency], config: c.config, metrics: c.metrics})),
    reference,
  )
  const profiles = chooseDomainProfiles(candidates, names, domainRules(names))
  const lines = frontLines(front)
  for (const p of profiles) {
    lines.push(`profile ${p.profile} (${p.description}): ${p.trialId === null ? 'none' : `trial #${p.trialId}`}`)
    for (const r of p.rationale) lines.push(`  - ${r}`)
  }
  // the chart copies every trial's configuration and metrics: built only when someone asks for it
  let chart: Record<string, unknown> | undefined
  return {front, profiles, lines, get chart() {
    return (chart ??= frontChartSpec(front, {qualityLabel, lower: lowerBudgetPoints(trials, names)}))
  }}
}

function lowerBudgetPoints(trials: readonly TrialRow[], names: MetricNames) {
  const top = Math.max(-Infinity, ...trials.filter((t) => t.status === 'ok').map((t) => t.budget))
  return trials
    .filter((t) => t.status === 'ok' && t.metrics && t.budget < top && Number.isFinite(t.metrics[names.quality]) && Number.isFinite(t.metrics[names.latency]))
    .map((t) => {
      const m = splitTimingMetrics(t.metrics as Record<string, number>).deterministic
      return {trialId: t.id, quality: m[names.quality], latencyMs: m[names.latency], config: t.config, metrics: m, budget: t.budget}
    })
}

/** A domain-profile rule as an engine file states it (src/engines/file.ts `profiles[]`). */
export interface StatedProfileRule {
  readonly name: string
  readonly description?: string
  readonly order_by: string
  readonly direction?: 'maximize' | 'minimize'
  readonly constraints: ReadonlyArray<{readonly metric: string; readonly op: '<=' | '>='; readonly value?: number; readonly value_of_best?: number}>
}

/** A stated rule as the profile chooser's rule; the direction comes from the objectives unless given. */
export function profileRuleOf(rule: StatedProfileRule, objectives: readonly FrontObjective[]): ProfileRule {
  const direction = rule.direction ?? objectives.find((o) => o.metric === rule.order_by)?.direction ?? 'maximize'
  const constraints = rule.constraints.map((c) => ({
    metric: c.metric,
    op: c.op,
    value: c.value,
    fractionOfBest: c.value_of_best,
    label: c.value !== undefined ? `${c.metric} ${c.op} ${c.value}` : `${c.metric} ${c.op} ${c.value_of_best} x best`,
  }))
  const sense = direction === 'maximize' ? 'max' : 'min'
  return {
    name: rule.name,
    description: rule.description ?? `${rule.order_by} ${direction === 'maximize' ? 'highest' : 'lowest'}${constraints.length ? `, ${constraints.map((c) => c.label).join(', ')}` : ''}`,
    primary: {metric: rule.order_by, sense, label: rule.order_by},
    constraints,
  }
}

export interface ObjectiveStudyAnalysis {
  /** The Pareto front over the objectives (null with a single objective). */
  readonly front: ObjectiveFrontReport | null
  readonly profiles: ProfileChoice[]
  readonly chart: Record<string, unknown> | null
  readonly lines: string[]
}

/**
 * The front and the stated profiles of a study over any objectives (an engine file's): full-budget
 * trials only, wall-clock timings left out, so the result repeats when the study does.
 */
export function analyzeObjectiveStudy(trials: readonly TrialRow[], objectives: readonly FrontObjective[], rules: readonly StatedProfileRule[]): ObjectiveStudyAnalysis {
  const candidates = fullBudgetCandidates(trials)
  const front = objectives.length >= 2 ? objectiveFront(candidates, objectives) : null
  const onFront = front ? new Set(front.front.map((p) => p.trialId)) : undefined
  const compared = front ? new Set([...front.front, ...front.dominated].map((p) => p.trialId)) : undefined
  const profiles = rules.map((r) => {
    const rule = profileRuleOf(r, objectives)
    // equal on the rule's metric: the better on the first other objective wins
    const other = objectives.find((o) => o.metric !== rule.primary.metric)
    return chooseProfile(rule, candidates, {
      tieBreak: other ? {metric: other.metric, sense: other.direction === 'maximize' ? 'max' : 'min'} : undefined,
      shown: objectives.map((o) => ({metric: o.metric, label: o.metric})),
      onFront: (id) => (onFront && compared!.has(id) ? onFront.has(id) : null),
      frontLabel: objectives.map((o) => o.metric).join('/'),
    })
  })
  const lines = front ? objectiveFrontLines(front) : []
  for (const p of profiles) {
    lines.push(`profile ${p.profile} (${p.description}): ${p.trialId === null ? 'none' : `trial #${p.trialId}`}`)
    for (const r of p.rationale) lines.push(`  - ${r}`)
  }
  return {front, profiles, chart: front ? objectiveFrontChartSpec(front) : null, lines}
}

/** One scored trial of a retrieval study as the report charts it: which set it falls in, its quality and P99. */
export interface FrontTrialRecord {
  trial: number
  budget: number
  /** Queries scored at this budget (the largest budget scores them all). */
  queries: number | null
  set: 'Pareto front' | 'dominated' | 'lower budget'
  quality: number
  p99_ms: number
  config: TrialRow['config']
  metrics: Record<string, number>
}

/**
 * Every trial with a quality and a P99, placed against the analysis's front (on it, dominated at
 * the full budget, or from a lower budget); wall-clock timings left out so reports repeat exactly.
 */
export function frontTrialRecords(trials: readonly TrialRow[], analysis: StudyAnalysis): FrontTrialRecord[] {
  const onFront = new Set(analysis.front.front.map((p) => p.trialId))
  const dominated = new Set(analysis.front.dominated.map((p) => p.trialId))
  return trials
    .filter((t) => t.status === 'ok' && t.metrics && Number.isFinite(t.metrics.quality) && Number.isFinite(t.metrics.p99_ms))
    .map((t) => {
      const metrics = splitTimingMetrics(t.metrics as Record<string, number>).deterministic
      return {
        trial: t.id, budget: t.budget, queries: Number.isFinite(metrics.queries) ? metrics.queries : null,
        set: onFront.has(t.id) ? 'Pareto front' : dominated.has(t.id) ? 'dominated' : 'lower budget',
        quality: metrics.quality, p99_ms: metrics.p99_ms, config: t.config, metrics,
      }
    })
}
