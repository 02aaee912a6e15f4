/**
 * What a study yields, from its stored trials, for any objectives: the full-budget candidates, the
 * Pareto front over the stated objectives and the profiles an engine file states. Only trials at
 * the largest budget are compared (lower budgets score fewer queries). kt's own retrieval study
 * (its metric names and issue-4 domain rules) is analysed in src/eval/retrieval-analysis.ts.
 */
import {objectiveFront, objectiveFrontLines, type FrontObjective, type ObjectiveFrontReport} from './front.js'
import {chooseProfile, type Candidate, type ProfileChoice, type ProfileRule} from './profiles.js'
import {splitTimingMetrics} from './types.js'

/** What an analysis reads of a stored trial: search knows no store (src/study/model.ts TrialRow carries these and more). */
export interface AnalyzedTrial {
  readonly id: number
  readonly budget: number
  readonly status: string
  readonly config: Record<string, string | number | boolean>
  readonly metrics: Record<string, number> | null
}

/**
 * Successful trials at the largest budget any successful trial reached, with their metrics less
 * the wall-clock timings (TIMING_METRIC_PREFIX), so that the front and profiles built from them
 * repeat exactly when the study does.
 */
export function fullBudgetCandidates(trials: readonly AnalyzedTrial[]): Candidate[] {
  const ok = trials.filter((t) => t.status === 'ok' && t.metrics)
  const top = Math.max(-Infinity, ...ok.map((t) => t.budget))
  return ok
    .filter((t) => t.budget === top)
    .map((t) => ({
      trialId: t.id,
      config: t.config,
      metrics: splitTimingMetrics(t.metrics as Record<string, number>).deterministic,
    }))
}

/** A domain-profile rule as an engine file states it (src/adapters/file.ts `profiles[]`). */
export interface StatedProfileRule {
  readonly name: string
  readonly description?: string
  readonly order_by: string
  readonly direction?: 'maximize' | 'minimize'
  readonly constraints: ReadonlyArray<{
    readonly metric: string
    readonly op: '<=' | '>='
    readonly value?: number
    readonly value_of_best?: number
  }>
}

/** A stated rule as the profile chooser's rule; the direction comes from the objectives unless given. */
function profileRuleOf(rule: StatedProfileRule, objectives: readonly FrontObjective[]): ProfileRule {
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
    description:
      rule.description ??
      `${rule.order_by} ${direction === 'maximize' ? 'highest' : 'lowest'}${constraints.length ? `, ${constraints.map((c) => c.label).join(', ')}` : ''}`,
    primary: {metric: rule.order_by, sense, label: rule.order_by},
    constraints,
  }
}

export interface ObjectiveStudyAnalysis {
  /** The Pareto front over the objectives (null with a single objective). */
  readonly front: ObjectiveFrontReport | null
  readonly profiles: ProfileChoice[]
  readonly lines: string[]
}

/**
 * The front and the stated profiles of a study over any objectives (an engine file's): full-budget
 * trials only, wall-clock timings left out, so the result repeats when the study does.
 */
export function analyzeObjectiveStudy(
  trials: readonly AnalyzedTrial[],
  objectives: readonly FrontObjective[],
  rules: readonly StatedProfileRule[],
): ObjectiveStudyAnalysis {
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
  return {front, profiles, lines}
}
