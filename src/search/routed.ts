/**
 * Per-query-type sweeps bundled into one routed profile: a base configuration (the best over all
 * queries) plus, for each query type, the parameters of that type's own best configuration where
 * they differ from the base, kept only when they beat the base on that type's queries by at least
 * a minimum gain (otherwise that type is served by the base). The shape matches the engine's
 * routed overrides (src/engine/retrieval/classifier.ts: base config, overrides by type).
 */
import type {Config} from '../space/index.js'
import type {Objective} from './types.js'

/**
 * An override must beat the base on its type by at least this much quality to be kept. Known
 * limitation (review R#8, not fixed): this is a point estimate on the type's tuning queries (2-10
 * for some types), with no interval, so a kept override may be noise; the routed profile's
 * held-out verdict (phase 5) is what judges it. Deciding on a paired interval's lower bound needs
 * per-query scores from the objective.
 */
const ROUTED_MIN_GAIN = 0.01

export interface TypeScores {
  readonly type: string
  /** The base configuration's quality on this type's queries. */
  readonly base: number
  /** The type sweep's best configuration and its quality on this type's queries. */
  readonly best: number
  readonly bestConfig: Config
  readonly study?: string
}

interface RoutedTypeEntry {
  readonly type: string
  readonly base_score: number
  readonly best_score: number
  readonly gain: number
  readonly override: boolean
  /** Parameters the override changes. */
  readonly keys: string[]
  readonly reason: string
  readonly study?: string
}

export interface RoutedProfile {
  readonly base: Config
  /** Per query type: only the parameters that differ from the base. */
  readonly overrides: Record<string, Config>
  readonly per_type: RoutedTypeEntry[]
  readonly min_gain: number
}

/**
 * Bundles the per-type results. `routerParam` names a boolean parameter that switches routing on
 * (the retrieval space's router.enabled): it is set in the base when any override is kept.
 */
export function bundleRoutedProfile(
  base: Config,
  types: readonly TypeScores[],
  minGain = ROUTED_MIN_GAIN,
  routerParam?: string,
): RoutedProfile {
  const overrides: Record<string, Config> = {}
  const perType = types.map((t): RoutedTypeEntry => {
    const diff: Config = {}
    for (const [key, value] of Object.entries(t.bestConfig)) if (base[key] !== value) diff[key] = value
    const gain = t.best - t.base
    const keys = Object.keys(diff)
    const override = gain >= minGain && keys.length > 0
    if (override) overrides[t.type] = diff
    const reason = override
      ? `the ${t.type} sweep's best beats the base on ${t.type} queries by ${gain.toFixed(4)} (>= ${minGain}); ${keys.length} parameters overridden`
      : keys.length === 0
        ? `the ${t.type} sweep found the base configuration itself`
        : `gain ${gain.toFixed(4)} on ${t.type} queries is below ${minGain}: served by the base`
    return {type: t.type, base_score: t.base, best_score: t.best, gain, override, keys, reason, study: t.study}
  })
  const routedBase = routerParam && Object.keys(overrides).length > 0 ? {...base, [routerParam]: true} : base
  return {base: routedBase, overrides, per_type: perType, min_gain: minGain}
}

/** Quality (minus the loss) of a configuration at the objective's full budget. */
async function qualityAtFullBudget(objective: Objective, config: Config, seed: number, label: string): Promise<number> {
  const budget = objective.fidelity?.max ?? 1
  const result = await objective.evaluate(config, budget, {trialId: -1, configId: label, seed})
  return -result.loss
}

/** `Spec` is the caller's serializable description of an objective (src/study/objectives.ts ObjectiveSpec), passed through untouched. */
export interface TypeSweepOptions<Spec> {
  readonly types: readonly string[]
  /** The objective over every query (type undefined) or one type's queries. */
  readonly objectiveFor: (type: string | undefined) => {readonly spec: Spec; readonly instance: Objective}
  /** Runs (or resumes) one study and returns its incumbent configuration (full, fixed values included). */
  readonly runStudy: (
    name: string,
    objective: {spec: Spec; instance: Objective},
  ) => Promise<{config: Config} | undefined>
  readonly studyPrefix: string
  readonly seed: number
  readonly minGain?: number
  /** Boolean parameter that switches routing on when overrides are kept. */
  readonly routerParam?: string
}

/**
 * A sweep over all queries for the base, one sweep per type, then the bundle. Both the base and
 * each type's best are re-scored on that type's queries at the full budget, so the gain compares
 * like with like.
 */
export async function runTypeSweeps<Spec>(options: TypeSweepOptions<Spec>): Promise<RoutedProfile> {
  const overall = options.objectiveFor(undefined)
  const baseBest = await options.runStudy(`${options.studyPrefix}-all`, overall)
  if (!baseBest) throw new Error(`routed sweeps: study ${options.studyPrefix}-all has no successful trial`)
  const scores: TypeScores[] = []
  for (const type of options.types) {
    const target = options.objectiveFor(type)
    const study = `${options.studyPrefix}-${type}`
    const best = await options.runStudy(study, target)
    const objective = target.instance
    const base = await qualityAtFullBudget(objective, baseBest.config, options.seed, `routed-base-${type}`)
    if (!best) {
      scores.push({type, base, best: base, bestConfig: baseBest.config, study})
      continue
    }
    scores.push({
      type,
      base,
      best: await qualityAtFullBudget(objective, best.config, options.seed, `routed-${type}`),
      bestConfig: best.config,
      study,
    })
  }
  return bundleRoutedProfile(baseBest.config, scores, options.minGain, options.routerParam)
}
