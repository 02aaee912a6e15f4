/**
 * Parameter importance of a study: fANOVA over a random forest (src/stats/fanova.ts), as Optuna's
 * default FanovaImportanceEvaluator computes it. Why fANOVA and not PED-ANOVA: fANOVA answers
 * "which parameters explain the objective's variance over the whole space", its decomposition can
 * be checked against an analytic one (test/stats/fanova.test.ts), and it needs no quantile
 * setting; PED-ANOVA (Watanabe et al. 2023) answers "which parameters matter for reaching the
 * top γ-quantile" and is faster, but its answer depends on γ. At kt's study sizes (hundreds to
 * thousands of trials, a forest fit on at most MAX_IMPORTANCE_TRIALS) fANOVA's cost is fine.
 *
 * Features: each parameter scaled to [0, 1] over its range (log parameters in log space, as the
 * optimisers see them); a categorical as the centre of its choice's cell (so every choice weighs
 * the same under the uniform measure; splits then group neighbouring choices, a simplification
 * of a categorical split); a simplex member as its own weight. Multi-fidelity studies (BOHB) mix
 * budgets that score different subsets: the budget enters as one more feature, so its effect is
 * separated from the parameters' and shown as "budget (fidelity)".
 */
import type {ParamSpace} from '../space/index.js'
import {fanova} from '../stats/fanova.js'
import {fitForest, FOREST_TREES} from '../stats/forest.js'
import {Rng} from '../util/rng.js'
import {InputError} from '../util/errors.js'

/** Fewer successful trials than this and no forest is fitted (a forest on a handful of points explains nothing). */
const MIN_IMPORTANCE_TRIALS = 8
/** Larger studies are subsampled (seeded) to this many trials: the fit's cost grows as n log n per node and level. */
const MAX_IMPORTANCE_TRIALS = 2000
const BUDGET_FEATURE = 'budget (fidelity)'

export interface ImportanceTrial {
  readonly id: number
  readonly status: string
  readonly budget: number
  readonly loss: number | null
  readonly config: Record<string, string | number | boolean>
  readonly metrics: Record<string, number> | null
}

interface ParamImportance {
  readonly param: string
  /** Share of the fitted objective's variance this parameter's main effect explains (mean over trees). */
  readonly variance_share: number
  readonly variance_share_sd: number
  /** Shares rescaled to sum to 1 over the listed parameters (Optuna's numbers). */
  readonly importance: number
}

export interface StudyImportance {
  readonly method: string
  readonly target: string
  readonly trials_used: number
  readonly trials_ok: number
  readonly trees: number
  readonly seed: number
  /** Most important first. */
  readonly params: ParamImportance[]
  /** Why no importance was computed (too few trials, a constant objective). */
  readonly note: string | null
}

interface Feature {
  readonly name: string
  readonly value: (t: ImportanceTrial) => number
}

function features(space: ParamSpace | undefined, trials: readonly ImportanceTrial[]): Feature[] {
  const out: Feature[] = []
  const clamp = (v: number) => (Number.isFinite(v) ? Math.min(1, Math.max(0, v)) : 0.5)
  for (const p of space?.params ?? []) {
    if (p.kind === 'simplex') {
      for (const m of p.members) out.push({name: m.name, value: (t) => clamp(Number(t.config[m.name]))})
    } else if (p.kind === 'categorical') {
      const choices = p.choices.map(String)
      out.push({
        name: p.name,
        value: (t) => {
          const i = choices.indexOf(String(t.config[p.name]))
          return i < 0 ? 0.5 : (i + 0.5) / choices.length
        },
      })
    } else {
      const log = p.scale === 'log' && p.low > 0
      const lo = log ? Math.log(p.low) : p.low
      const hi = log ? Math.log(p.high) : p.high
      out.push({
        name: p.name,
        value: (t) =>
          clamp(
            hi > lo ? ((log ? Math.log(Number(t.config[p.name])) : Number(t.config[p.name])) - lo) / (hi - lo) : 0.5,
          ),
      })
    }
  }
  if (!space) {
    // no stored space: numeric configuration values, scaled by their observed range
    const keys = [...new Set(trials.flatMap((t) => Object.keys(t.config)))].filter((k) =>
      trials.every((t) => typeof t.config[k] === 'number'),
    )
    for (const k of keys) {
      const vs = trials.map((t) => Number(t.config[k]))
      const lo = Math.min(...vs)
      const hi = Math.max(...vs)
      out.push({name: k, value: (t) => (hi > lo ? (Number(t.config[k]) - lo) / (hi - lo) : 0.5)})
    }
  }
  const budgets = [...new Set(trials.map((t) => t.budget))].sort((a, b) => a - b)
  if (budgets.length > 1) {
    const lo = Math.log(budgets[0])
    const hi = Math.log(budgets.at(-1)!)
    out.push({name: BUDGET_FEATURE, value: (t) => (Math.log(t.budget) - lo) / (hi - lo)})
  }
  return out
}

/**
 * fANOVA importances of a study's parameters for `target`: 'loss' (what the optimiser minimised)
 * or the name of a stored metric (e.g. p99_ms).
 */
export function studyImportance(
  space: ParamSpace | undefined,
  trials: readonly ImportanceTrial[],
  options: {target?: string; seed?: number; trees?: number} = {},
): StudyImportance {
  const target = options.target ?? 'loss'
  const seed = options.seed ?? 42
  const trees = options.trees ?? FOREST_TREES
  const value = (t: ImportanceTrial): number | null => (target === 'loss' ? t.loss : (t.metrics?.[target] ?? null))
  const ok = trials.filter((t) => t.status === 'ok' && Number.isFinite(value(t)))
  if (target !== 'loss' && ok.length === 0 && trials.some((t) => t.status === 'ok')) {
    const known = [...new Set(trials.flatMap((t) => Object.keys(t.metrics ?? {})))].sort()
    throw new InputError(
      '--target',
      `loss or a metric the trials carry (${known.join(', ') || 'none'})`,
      JSON.stringify(target),
    )
  }
  const base = {
    method: 'fANOVA over a random forest (Hutter et al. 2014; Optuna FanovaImportanceEvaluator settings)',
    target,
    trials_ok: ok.length,
    trees,
    seed,
  }
  if (ok.length < MIN_IMPORTANCE_TRIALS)
    return {
      ...base,
      trials_used: 0,
      params: [],
      note: `${ok.length} successful trials; importance needs at least ${MIN_IMPORTANCE_TRIALS}`,
    }
  let used = ok
  if (ok.length > MAX_IMPORTANCE_TRIALS) {
    // a seeded partial Fisher-Yates shuffle, then back to trial order
    const rng = new Rng(seed)
    const idx = ok.map((_, i) => i)
    for (let i = 0; i < MAX_IMPORTANCE_TRIALS; i++) {
      const j = i + Math.floor(rng.next() * (idx.length - i))
      ;[idx[i], idx[j]] = [idx[j], idx[i]]
    }
    used = idx
      .slice(0, MAX_IMPORTANCE_TRIALS)
      .sort((a, b) => a - b)
      .map((i) => ok[i])
  }
  const feats = features(space, used)
  const x = used.map((t) => Float64Array.from(feats, (f) => f.value(t)))
  const y = Float64Array.from(used, (t) => value(t)!)
  if (feats.length === 0)
    return {...base, trials_used: used.length, params: [], note: 'the study has no parameters to rank'}
  const r = fanova(fitForest(x, y, {trees, seed}), feats.length)
  if (r.trees_used === 0)
    return {
      ...base,
      trials_used: used.length,
      params: [],
      note: `the ${target} is the same in every trial: nothing to explain`,
    }
  const params = feats
    .map((f, j) => ({
      param: f.name,
      variance_share: r.main_effect_share[j],
      variance_share_sd: r.main_effect_sd[j],
      importance: r.importance[j],
    }))
    .sort((a, b) => b.importance - a.importance || a.param.localeCompare(b.param))
  return {...base, trials_used: used.length, params, note: null}
}
