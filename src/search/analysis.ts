/**
 * What a bi-objective study yields, from its stored trials: the quality/latency Pareto front with
 * its hypervolume, the dominated trials, the domain profiles chosen from it, and a chart spec.
 * Only trials at the largest budget are compared (lower budgets score fewer queries).
 */
import type {TrialRow} from '../study/store.js'
import {frontChartSpec, frontLines, frontReport, type FrontReport, type ReferencePoint} from './front.js'
import {chooseDomainProfiles, RETRIEVAL_METRIC_NAMES, type Candidate, type MetricNames, type ProfileChoice} from './profiles.js'
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
  const profiles = chooseDomainProfiles(candidates, names)
  const lines = frontLines(front)
  for (const p of profiles) {
    lines.push(`profile ${p.profile} (${p.description}): ${p.trialId === null ? 'none' : `trial #${p.trialId}`}`)
    for (const r of p.rationale) lines.push(`  - ${r}`)
  }
  const top = Math.max(-Infinity, ...trials.filter((t) => t.status === 'ok').map((t) => t.budget))
  const lower = trials
    .filter((t) => t.status === 'ok' && t.metrics && t.budget < top && Number.isFinite(t.metrics[names.quality]) && Number.isFinite(t.metrics[names.latency]))
    .map((t) => {
      const m = splitTimingMetrics(t.metrics as Record<string, number>).deterministic
      return {trialId: t.id, quality: m[names.quality], latencyMs: m[names.latency], config: t.config, metrics: m, budget: t.budget}
    })
  return {front, profiles, chart: frontChartSpec(front, {qualityLabel, lower}), lines}
}
