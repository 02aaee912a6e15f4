import {DETAIL_LEVELS} from '../src/engine/importance/score.js'
import {wilsonInterval} from '../src/stats/interval.js'
import {mean} from '../src/stats/summary.js'
import {bootstrapCI, meanStatistic} from '../src/stats/bootstrap.js'
import {evaluateWeights, correlationInterval, correlationDelta} from './lib/metrics.js'
import type {PhaseContext} from './lib/context.js'
import type {AcceptanceCriterion} from './plan.js'
import type {CriterionVerdict, ValidationDataset, ValidationResult} from '../src/report/types.js'

/**
 * Phase 5: the optimum against the baseline on every dataset it was not tuned on (held-out
 * synthetic and imported data): per-turn change, share of turns scored higher, correlations with
 * intervals, the paired change in correlation, detail-level transitions, the token budget's
 * relative change, and a verdict per acceptance criterion.
 */
export function runValidation(ctx: PhaseContext): ValidationResult {
  const {plan} = ctx.plan
  const search = ctx.results.search
  if (!search) throw new Error('phase 5 needs the search phase result')
  const optimum = search.optimum.weights
  const datasets = ctx
    .datasets()
    .filter((d) => d.role !== 'tune')
    .map((ds): ValidationDataset => {
      ctx.progress(`phase 5: validating on ${ds.id}`)
      const base = evaluateWeights(ds, plan.baseline, plan)
      const opt = evaluateWeights(ds, optimum, plan)
      const n = ds.signals.n
      const changes = opt.scores.map((v, i) => v - base.scores[i])
      const positive = changes.reduce((c, d) => c + (d > 0 ? 1 : 0), 0)
      const share = wilsonInterval(positive, n, plan.bootstrap.confidence)!
      const transitions = DETAIL_LEVELS.map(() => DETAIL_LEVELS.map(() => 0))
      for (let i = 0; i < n; i++) transitions[base.levels[i]][opt.levels[i]]++
      const counts = (levels: Uint8Array) =>
        DETAIL_LEVELS.map((_, k) => levels.reduce((c, l) => c + (l === k ? 1 : 0), 0))
      const record: Omit<ValidationDataset, 'verdicts'> = {
        dataset: ds.id,
        role: ds.role,
        turns: n,
        mean_change: meanChange(changes, ctx, ds.id),
        share_positive: {
          value: share.estimate,
          low: share.low,
          high: share.high,
          confidence: plan.bootstrap.confidence,
        },
        baseline: {
          pearson: correlationInterval(ctx, 'pearson', base.scores, ds),
          spearman: correlationInterval(ctx, 'spearman', base.scores, ds),
          token_budget: base.tokenBudget,
        },
        optimum: {
          pearson: correlationInterval(ctx, 'pearson', opt.scores, ds),
          spearman: correlationInterval(ctx, 'spearman', opt.scores, ds),
          token_budget: opt.tokenBudget,
        },
        delta: {
          pearson: correlationDelta(ctx, 'pearson', base.scores, opt.scores, ds),
          spearman: correlationDelta(ctx, 'spearman', base.scores, opt.scores, ds),
        },
        token_budget_change: tokenBudgetChange(base.tokenBudget, opt.tokenBudget),
        levels: {
          order: [...DETAIL_LEVELS],
          baseline_counts: counts(base.levels),
          optimum_counts: counts(opt.levels),
          transitions,
        },
        scatter: Array.from(ds.truth, (truth, i) => ({truth, baseline: base.scores[i], optimum: opt.scores[i]})),
      }
      return {...record, verdicts: plan.acceptance.map((c) => verdict(c, record))}
    })
  // a signal that is a function of the label makes every number of the study suspect: the run cannot pass
  const leakage_flagged = (ctx.results.synthetic?.datasets ?? []).flatMap((d) =>
    d.leakage
      .filter((a) => a.verdict === 'leak')
      .map((a) => ({dataset: d.id, signal: a.signal, dependence: a.dependence})),
  )
  const base = {optimum, baseline: {...plan.baseline}, datasets, leakage_flagged}
  if (leakage_flagged.length > 0) {
    const list = leakage_flagged
      .map((l) => `${l.signal} on ${l.dataset}${l.dependence === null ? '' : ` (${(100 * l.dependence).toFixed(1)}%)`}`)
      .join(', ')
    return {
      ...base,
      verdict: 'fail',
      passed: false,
      note: `the leakage audit flagged ${list} as a function of the label`,
    }
  }
  // no held-out data means nothing was validated: that is not a pass
  if (datasets.length === 0)
    return {
      ...base,
      verdict: 'not-validated',
      passed: false,
      note: 'no held-out or imported dataset in the plan: nothing was validated',
    }
  const passed = datasets.every((d) => d.verdicts.every((v) => v.passed))
  return {...base, verdict: passed ? 'pass' : 'fail', passed}
}

/** Mean per-turn score change with a percentile bootstrap interval (absolute, in score units). */
function meanChange(changes: Float64Array, ctx: PhaseContext, id: string): ValidationDataset['mean_change'] {
  const {bootstrap} = ctx.plan.plan
  const r = bootstrapCI(changes.length, meanStatistic(changes), {
    rng: ctx.rng(`validation/${id}/mean-change`),
    resamples: bootstrap.resamples,
    confidence: bootstrap.confidence,
  })
  return {
    kind: 'absolute',
    unit: 'importance score (0-1)',
    value: mean(changes),
    low: r.low!,
    high: r.high!,
    confidence: r.confidence,
  }
}

/** The relative change of the tokens kept; undefined (null, with the reason) when the baseline keeps none. */
export function tokenBudgetChange(baseline: number, optimum: number): ValidationDataset['token_budget_change'] {
  if (baseline > 0) return {kind: 'relative', unit: '%', value: (100 * (optimum - baseline)) / baseline}
  return {
    kind: 'relative',
    unit: '%',
    value: null,
    note: `the baseline keeps 0 tokens (the optimum ${optimum.toFixed(1)}), so a relative change is undefined`,
  }
}

/** The value an acceptance metric takes on one dataset (token change as a fraction, not %); null when it is undefined there. */
function metricValue(metric: AcceptanceCriterion['metric'], d: Omit<ValidationDataset, 'verdicts'>): number | null {
  switch (metric) {
    case 'token_budget_change_rel':
      return d.token_budget_change.value === null ? null : d.token_budget_change.value / 100
    case 'spearman_delta_abs':
      return d.delta.spearman.estimate
    case 'spearman_delta_abs_ci_low':
      return d.delta.spearman.low
    case 'pearson_delta_abs':
      return d.delta.pearson.estimate
    case 'share_positive':
      return d.share_positive.value
  }
}

const COMPARE: Record<AcceptanceCriterion['op'], (a: number, b: number) => boolean> = {
  '<': (a, b) => a < b,
  '<=': (a, b) => a <= b,
  '>': (a, b) => a > b,
  '>=': (a, b) => a >= b,
}

/** Why a metric has no value on a dataset (it is then not evaluable there). */
function undefinedBecause(metric: AcceptanceCriterion['metric'], d: Omit<ValidationDataset, 'verdicts'>): string {
  if (metric === 'token_budget_change_rel')
    return d.token_budget_change.note ?? 'the relative token change is undefined'
  if (metric === 'share_positive') return 'the share of turns scored higher is undefined'
  return 'the correlation change is undefined (a constant score vector has no correlation)'
}

/** A criterion's verdict on one dataset: an undefined metric is "not evaluable", which is never a pass. */
function verdict(c: AcceptanceCriterion, d: Omit<ValidationDataset, 'verdicts'>): CriterionVerdict {
  const value = metricValue(c.metric, d)
  const confidence = c.metric === 'spearman_delta_abs_ci_low' ? {confidence: d.delta.spearman.confidence} : {}
  const base = {
    id: c.id,
    description: c.description,
    metric: c.metric,
    op: c.op,
    threshold: c.value,
    value,
    ...confidence,
  }
  if (value === null)
    return {...base, passed: false, evaluable: false, note: `not evaluable: ${undefinedBecause(c.metric, d)}`}
  return {...base, passed: COMPARE[c.op](value, c.value), evaluable: true}
}
