import {SIGNALS, type Signal, type Weights} from '../src/engine/importance/space.js'
import {scoreColumns} from '../src/engine/importance/score.js'
import {correlationDelta, correlationInterval} from './lib/metrics.js'
import type {PhaseContext} from './lib/context.js'
import type {AblationConfig, AblationResult, DeltaInterval, Interval} from '../src/report/types.js'
import {confidenceLabel} from '../src/report/confidence.js'

/**
 * Phase 3: ablation. Each signal alone, each left out (the others renormalised), every pair (the
 * baseline's two weights renormalised), and the full baseline; Pearson and Spearman against the
 * truth with bootstrap intervals on every dataset of the plan, and each configuration's Spearman
 * change against the baseline by paired bootstrap (the same resamples for both).
 */
export function ablationConfigs(baseline: Weights): Array<Pick<AblationConfig, 'id' | 'kind' | 'weights'>> {
  const only = (keep: readonly Signal[]): Weights => {
    const total = keep.reduce((s, k) => s + baseline[k], 0)
    // a subset whose baseline weights are all zero gets equal weights instead
    return Object.fromEntries(
      SIGNALS.map((s) => [s, keep.includes(s) ? (total > 0 ? baseline[s] / total : 1 / keep.length) : 0]),
    ) as unknown as Weights
  }
  const configs: Array<Pick<AblationConfig, 'id' | 'kind' | 'weights'>> = [
    {id: 'baseline', kind: 'baseline', weights: {...baseline}},
  ]
  for (const s of SIGNALS) configs.push({id: `${s} alone`, kind: 'alone', weights: only([s])})
  for (const s of SIGNALS)
    configs.push({id: `without ${s}`, kind: 'without', weights: only(SIGNALS.filter((x) => x !== s))})
  for (let i = 0; i < SIGNALS.length; i++)
    for (let j = i + 1; j < SIGNALS.length; j++)
      configs.push({id: `${SIGNALS[i]} + ${SIGNALS[j]}`, kind: 'pair', weights: only([SIGNALS[i], SIGNALS[j]])})
  return configs.map((c) => ({...c, weights: {...c.weights}}))
}

export function runAblation(ctx: PhaseContext): AblationResult {
  const {plan} = ctx.plan
  const configs = ablationConfigs(plan.baseline)
  const datasets = ctx.datasets().map((ds) => {
    ctx.progress(`phase 3: ablation on ${ds.id}`)
    const baselineScores = scoreColumns(ds.signals, plan.baseline)
    return {
      dataset: ds.id,
      configs: configs.map((c): AblationConfig => {
        const scores = scoreColumns(ds.signals, c.weights)
        return {
          ...c,
          pearson: correlationInterval(ctx, 'pearson', scores, ds),
          spearman: correlationInterval(ctx, 'spearman', scores, ds),
          ...(c.kind === 'baseline'
            ? {}
            : {spearman_change: correlationDelta(ctx, 'spearman', baselineScores, scores, ds)}),
        }
      }),
    }
  })
  return {datasets, headline: ablationHeadline(datasets[0].dataset, datasets[0].configs)}
}

/** The headline, computed from the tuning dataset's numbers (never typed in). */
export function ablationHeadline(dataset: string, configs: AblationConfig[]): string {
  const baseline = configs.find((c) => c.kind === 'baseline')!
  const defined = configs.filter((c) => c.spearman.estimate !== null)
  const best = defined.reduce((a, b) => (b.spearman.estimate! > a.spearman.estimate! ? b : a))
  const without = configs.filter((c) => c.kind === 'without' && c.spearman.estimate !== null)
  const mostHelpful = without.reduce((a, b) => (b.spearman.estimate! < a.spearman.estimate! ? b : a))
  const leastHelpful = without.reduce((a, b) => (b.spearman.estimate! > a.spearman.estimate! ? b : a))
  const undefinedOnes = configs.filter((c) => c.spearman.estimate === null).map((c) => c.id)
  const removed = (c: AblationConfig) => c.id.replace('without ', '')
  const parts = [
    `On ${dataset}, the best ablation configuration is "${best.id}" with Spearman ${fmt(best.spearman)}, against ${fmt(baseline.spearman)} for the baseline${best === baseline ? '' : `: a change of ${change(best.spearman_change)}`}.`,
    `Removing ${removed(mostHelpful)} costs the most (Spearman ${fmt(mostHelpful.spearman)}): a change of ${change(mostHelpful.spearman_change)}; ` +
      `removing ${removed(leastHelpful)} ${effect(leastHelpful.spearman_change)}: ${change(leastHelpful.spearman_change)}.`,
  ]
  if (undefinedOnes.length) parts.push(`Undefined (constant scores): ${undefinedOnes.join(', ')}.`)
  return parts.join(' ')
}

/** A paired change with its interval, kind and unit: "-0.288 [-0.384, -0.188] (absolute, spearman correlation; paired bootstrap 95%)". */
function change(d: DeltaInterval | undefined): string {
  if (!d || d.estimate === null) return 'undefined'
  const bound = (x: number | null) => (x === null ? 'undefined' : signed(x))
  return `${signed(d.estimate)} [${bound(d.low)}, ${bound(d.high)}] (${d.kind}, ${d.unit}; paired bootstrap ${confidenceLabel(d.confidence)})`
}

/** What a change shows, read from its interval, never from the point estimate alone. */
function effect(d: DeltaInterval | undefined): string {
  if (!d || d.low === null || d.high === null) return 'has an undefined effect'
  if (d.low > 0) return 'helps'
  if (d.high < 0) return 'costs the least'
  return 'has no clear effect, its interval includes 0'
}

function fmt(i: Interval): string {
  return i.estimate === null ? 'undefined' : `${i.estimate.toFixed(3)} [${i.low!.toFixed(3)}, ${i.high!.toFixed(3)}]`
}

function signed(x: number): string {
  return `${x >= 0 ? '+' : ''}${x.toFixed(3)}`
}
