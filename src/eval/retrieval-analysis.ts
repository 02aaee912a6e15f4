/**
 * What kt's retrieval study yields, from its stored trials: the quality/latency Pareto front with
 * its hypervolume, the dominated trials, the issue-4 domain profiles chosen from it
 * (src/eval/retrieval-profiles.ts). Only trials at the largest budget are
 * compared (lower budgets score fewer queries). The machinery (front, profile choice) is search's
 * and knows no engine.
 */
import {frontLines, frontReport, type FrontReport, type ReferencePoint} from '../search/front.js'
import {chooseDomainProfiles, type MetricNames, type ProfileChoice} from '../search/profiles.js'
import {fullBudgetCandidates, type AnalyzedTrial} from '../search/analysis.js'
import {splitTimingMetrics} from '../search/types.js'
import {domainRules, RETRIEVAL_METRIC_NAMES} from './retrieval-profiles.js'

/** True if the trials carry the quality and latency metrics a front needs. */
export function isBiObjective(trials: readonly AnalyzedTrial[], names: MetricNames = RETRIEVAL_METRIC_NAMES): boolean {
  return trials.some(
    (t) =>
      t.status === 'ok' &&
      t.metrics &&
      Number.isFinite(t.metrics[names.quality]) &&
      Number.isFinite(t.metrics[names.latency]),
  )
}

export interface StudyAnalysis {
  readonly front: FrontReport
  readonly profiles: ProfileChoice[]
  readonly lines: string[]
}

/** The front and profiles of a bi-objective study. */
export function analyzeStudy(
  trials: readonly AnalyzedTrial[],
  names: MetricNames = RETRIEVAL_METRIC_NAMES,
  reference: Partial<ReferencePoint> = {},
): StudyAnalysis {
  const candidates = fullBudgetCandidates(trials).filter(
    (c) => Number.isFinite(c.metrics[names.quality]) && Number.isFinite(c.metrics[names.latency]),
  )
  const front = frontReport(
    candidates.map((c) => ({
      trialId: c.trialId,
      quality: c.metrics[names.quality],
      latencyMs: c.metrics[names.latency],
      config: c.config,
      metrics: c.metrics,
    })),
    reference,
  )
  const profiles = chooseDomainProfiles(candidates, names, domainRules(names))
  const lines = frontLines(front)
  for (const p of profiles) {
    lines.push(`profile ${p.profile} (${p.description}): ${p.trialId === null ? 'none' : `trial #${p.trialId}`}`)
    for (const r of p.rationale) lines.push(`  - ${r}`)
  }
  return {front, profiles, lines}
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
  config: AnalyzedTrial['config']
  metrics: Record<string, number>
}

/**
 * Every trial with a quality and a P99, placed against the analysis's front (on it, dominated at
 * the full budget, or from a lower budget); wall-clock timings left out so reports repeat exactly.
 */
export function frontTrialRecords(trials: readonly AnalyzedTrial[], analysis: StudyAnalysis): FrontTrialRecord[] {
  const onFront = new Set(analysis.front.front.map((p) => p.trialId))
  const dominated = new Set(analysis.front.dominated.map((p) => p.trialId))
  return trials
    .filter(
      (t) => t.status === 'ok' && t.metrics && Number.isFinite(t.metrics.quality) && Number.isFinite(t.metrics.p99_ms),
    )
    .map((t) => {
      const metrics = splitTimingMetrics(t.metrics as Record<string, number>).deterministic
      return {
        trial: t.id,
        budget: t.budget,
        queries: Number.isFinite(metrics.queries) ? metrics.queries : null,
        set: onFront.has(t.id) ? 'Pareto front' : dominated.has(t.id) ? 'dominated' : 'lower budget',
        quality: metrics.quality,
        p99_ms: metrics.p99_ms,
        config: t.config,
        metrics,
      }
    })
}
