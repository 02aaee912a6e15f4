/**
 * `kt online workload`: a tenant whose query mix shifts from entity lookups to temporal questions,
 * and the bandits retuning the retrieval engine's parameters in response.
 *
 * One policy loop (runWorkload) serves every query through a reward model (WorkloadEnvironment).
 * Two models plug into it: the synthetic one below, and the real engine over a labelled memory
 * dataset (engine-workload.ts, `--data`).
 *
 * The synthetic reward stands in for "how the parameters affect answer quality per query type":
 * for type k,
 *
 *   quality_k(config) = QUALITY_FLOOR + (QUALITY_PEAK - QUALITY_FLOOR) * exp(-sum_p w_kp (u_p - u*_kp)^2)
 *
 * where u_p is the played value's position in parameter p's range (its own scale, 0..1), u*_kp
 * the position type k prefers and w_kp how much it cares (IDEALS below). The preferences are
 * assumptions chosen to be plausible, not measurements: entity lookups want text matching and
 * entity seeding with shallow spreading and little recency; temporal questions want temporal
 * edges, deeper spreading, recency (low actr.alpha) and more weight on the graph score.
 *
 * Each query is served by the tenant's learner exactly as in production (sampled arms, logged
 * times, the implicit-feedback window): the query's node is used (synthetic: with probability
 * quality(config); engine: when an evidence turn is in the top k) after a delay of
 * 1..USE_DELAY_MAX_S seconds; otherwise its 5-minute window closes and it counts as reward 0.
 * One query per second.
 */
import {Rng} from '../util/rng.js'
import type {Config} from '../space/types.js'
import {defaultConfig, onlineTuned} from '../space/space.js'
import {mean, standardError} from '../stats/summary.js'
import {RETRIEVAL_SPACE} from '../engine/retrieval/space.js'
import {type Dimension, configFromArms, dimensionsOf, unitOf} from './bins.js'
import {type ForgettingSettings, forgettingDefaults} from './forgetting.js'
import {type SamplerKind, streamSeed} from './sampling.js'
import {TenantLearner, type TenantInit, dimensionsFingerprint} from './tenant.js'

/** Quality (probability the retrieved node is used) far from a type's preferences. */
export const QUALITY_FLOOR = 0.1
/** Quality at a type's preferred configuration. */
export const QUALITY_PEAK = 0.8
/** Share of entity lookups before the shift and of temporal questions after it. */
const MAJORITY_SHARE = 0.9
/** A used node is reported 1..USE_DELAY_MAX_S seconds after its query (inside the 5-minute window). */
export const USE_DELAY_MAX_S = 30
const MS_PER_QUERY = 1000

export const WORKLOAD_TYPES = ['entity_lookup', 'temporal'] as const
export type WorkloadType = (typeof WORKLOAD_TYPES)[number]

/** Preferred value (in the parameter's own units) and weight, per query type and parameter (see the file comment). */
export const IDEALS: Record<WorkloadType, Record<string, {value: number; weight: number}>> = {
  entity_lookup: {
    'bm25.k1': {value: 1.2, weight: 1},
    'seeds.entity': {value: 0.8, weight: 3},
    'spread.max_depth': {value: 1, weight: 2},
    'edge.temporal': {value: 0.1, weight: 1},
    'actr.alpha': {value: 0.9, weight: 1.5},
    'fusion.bm25': {value: 0.6, weight: 3},
    'fusion.graph': {value: 0.15, weight: 1},
  },
  temporal: {
    'seeds.entity': {value: 0.2, weight: 1},
    'spread.max_depth': {value: 3, weight: 2},
    'edge.temporal': {value: 0.9, weight: 3},
    'actr.decay': {value: 0.3, weight: 1},
    'actr.alpha': {value: 0.4, weight: 3},
    'fusion.bm25': {value: 0.3, weight: 2},
    'fusion.graph': {value: 0.45, weight: 3},
  },
}

/** The synthetic quality model over the bandits' dimensions. */
export class QualityModel {
  private readonly terms: Array<Array<{dim: number; unit: number; weight: number}>>

  constructor(readonly dims: readonly Dimension[]) {
    this.terms = WORKLOAD_TYPES.map((type) =>
      Object.entries(IDEALS[type]).map(([key, {value, weight}]) => {
        const dim = dims.findIndex((d) => d.key === key)
        if (dim < 0) throw new RangeError(`workload model: ${key} is not a tuned dimension`)
        return {dim, unit: unitOf(dims[dim], value), weight}
      }),
    )
  }

  /** Quality of a played configuration for query type `type` (index into WORKLOAD_TYPES). */
  quality(config: Config, type: number): number {
    let distance = 0
    for (const t of this.terms[type]) {
      const d = unitOf(this.dims[t.dim], config[this.dims[t.dim].key]) - t.unit
      distance += t.weight * d * d
    }
    return QUALITY_FLOOR + (QUALITY_PEAK - QUALITY_FLOOR) * Math.exp(-distance)
  }

  /** Expected quality under a mix (probability of each type). */
  mixQuality(config: Config, mix: readonly number[]): number {
    let q = 0
    for (let k = 0; k < mix.length; k++) q += mix[k] * this.quality(config, k)
    return q
  }
}

/** Probability of each type before and after the shift. */
export function mixAt(step: number, shiftAt: number): number[] {
  return step < shiftAt ? [MAJORITY_SHARE, 1 - MAJORITY_SHARE] : [1 - MAJORITY_SHARE, MAJORITY_SHARE]
}

/** Sweeps of coordinate ascent at most (a sweep tries every other arm of every dimension). */
const MAX_ASCENT_SWEEPS = 50
/** An improvement this small is rounding, not a better configuration. */
const ASCENT_TOLERANCE = 1e-12

/**
 * Coordinate ascent over the bins from the profile's bins: one dimension at a time, every other
 * arm tried and kept when it raises `value` (of the configuration the arms play), until a sweep
 * changes nothing. A local optimum, not a proof of the best bins.
 */
export function coordinateAscent(
  dims: readonly Dimension[],
  base: Config,
  value: (config: Config) => number,
): {arms: number[]; value: number} {
  const arms = dims.map((d) => d.binOf(base[d.key]))
  let best = value(configFromArms(base, dims, arms))
  for (let sweep = 0; sweep < MAX_ASCENT_SWEEPS; sweep++) {
    let improved = false
    for (let d = 0; d < dims.length; d++) {
      for (let a = 0; a < dims[d].values.length; a++) {
        const old = arms[d]
        if (a === old) continue
        arms[d] = a
        const q = value(configFromArms(base, dims, arms))
        if (q > best + ASCENT_TOLERANCE) {
          best = q
          improved = true
        } else arms[d] = old
      }
    }
    if (!improved) break
  }
  return {arms, value: best}
}

/** The best arm choice for a mix under the synthetic model, by coordinate ascent from the profile's bins (the reference "oracle"). */
export function oracleArms(
  model: QualityModel,
  dims: readonly Dimension[],
  base: Config,
  mix: readonly number[],
): number[] {
  return coordinateAscent(dims, base, (config) => model.mixQuality(config, mix)).arms
}

/** The policies that learn: a tenant's bandits without forgetting, with the scheduled decay, with change detection. */
const LEARNING_POLICIES = ['ts', 'ts-decay', 'ts-adaptive'] as const
type LearningPolicy = (typeof LEARNING_POLICIES)[number]

function forgettingOf(policy: LearningPolicy): ForgettingSettings {
  return policy === 'ts-decay'
    ? forgettingDefaults('periodic')
    : policy === 'ts-adaptive'
      ? forgettingDefaults('adaptive')
      : {kind: 'none'}
}

/**
 * A policy of the simulation: a tenant learner with some forgetting, or a fixed configuration per
 * phase (before, after the shift), reported by the arms it plays after the shift (`finalArms`;
 * default: the bin of each value it plays, which for simplex members is the bin of the projected
 * weight, not necessarily the arm that produced it).
 */
export type WorkloadPolicySpec =
  | {readonly name: string; readonly forgetting: ForgettingSettings; readonly perType?: boolean}
  | {readonly name: string; readonly phases: readonly [Config, Config]; readonly finalArms?: readonly number[]}

/**
 * The tenant learners, one per LEARNING_POLICIES entry; with `perType`, also each with one set of
 * bandits per query type (`<name>-per-type`: the tenant setting perType, each query naming its type).
 */
export function learnerPolicies(perType = false): WorkloadPolicySpec[] {
  const shared = LEARNING_POLICIES.map((name) => ({name, forgetting: forgettingOf(name)}))
  return perType
    ? [
        ...shared,
        ...LEARNING_POLICIES.map((name) => ({name: `${name}-per-type`, forgetting: forgettingOf(name), perType: true})),
      ]
    : shared
}

/** What the reward model made of one served query. */
interface ServedQuery {
  /** The step's recorded quality (synthetic: expected quality under the mix; engine: the query's hit, 0 or 1). */
  readonly quality: number
  /** Seconds until the retrieved node is used (1..USE_DELAY_MAX_S), or 0 when it never is. */
  readonly useDelayS: number
}

/** One run's query stream under a reward model. */
interface WorkloadEpisode {
  /** Draws the type of query `t` (index into WORKLOAD_TYPES) from `mix`; called once per step, before serve. */
  type(t: number, mix: readonly number[]): number
  /**
   * Serves query `t` (of type `type`, drawn from `mix`) with `config`; called once per step, in step
   * order. `perType`: the configuration was chosen for this type (synthetic: quality is then the
   * type's, not the mix's, since the configuration differs by type).
   */
  serve(t: number, config: Config, mix: readonly number[], type: number, perType: boolean): ServedQuery
}

/** A reward model plugged into the one policy loop (runWorkload). */
export interface WorkloadEnvironment {
  readonly dims: readonly Dimension[]
  /** The deployed profile: the learners' prior and the value of every untuned parameter. */
  readonly profile: Config
  /** Policies in report order. */
  readonly policies: readonly WorkloadPolicySpec[]
  /** The policy regret after the shift is measured against, step by step in the same run. */
  readonly reference: string
  /** Parameters listed in final_best. */
  readonly reportedKeys: readonly string[]
  /** Run `run`'s query stream; every call for the same run gives the same stream (every policy sees the same queries). */
  episode(run: number): WorkloadEpisode
}

export interface WorkloadOptions {
  steps: number
  runs: number
  seed: number
  sampler: SamplerKind
  /** Width of the reporting windows after the shift, in queries. */
  window: number
  /** Also simulate each learner with one set of bandits per query type. */
  perType?: boolean
}

export interface WorkloadProgress {
  policy: string
  run: number
  /** Steps of this run done. */
  step: number
}

/** Steps between progress reports inside a run. */
const PROGRESS_EVERY_STEPS = 500

/** Quality per step of one run of one policy, and the arms it believes best at the end. */
function playPolicy(
  spec: WorkloadPolicySpec,
  run: number,
  options: WorkloadOptions,
  env: WorkloadEnvironment,
  onProgress?: (p: WorkloadProgress) => void,
): {quality: Float64Array; finalBest: number[]} {
  const shiftAt = Math.floor(options.steps / 2)
  const mixes = [mixAt(0, shiftAt), mixAt(shiftAt, shiftAt)]
  const quality = new Float64Array(options.steps)
  const episode = env.episode(run)
  const progress = (t: number): void => {
    if (onProgress && t % PROGRESS_EVERY_STEPS === 0) onProgress({policy: spec.name, run, step: t})
  }
  if ('phases' in spec) {
    for (let t = 0; t < options.steps; t++) {
      progress(t)
      const phase = t < shiftAt ? 0 : 1
      const type = episode.type(t, mixes[phase])
      quality[t] = episode.serve(t, spec.phases[phase], mixes[phase], type, false).quality
    }
    return {
      quality,
      finalBest: spec.finalArms ? [...spec.finalArms] : env.dims.map((d) => d.binOf(spec.phases[1][d.key])),
    }
  }
  const perType = spec.perType === true
  const settings = {
    levels: 2,
    sampler: options.sampler,
    forgetting: spec.forgetting,
    tuned: onlineTuned(RETRIEVAL_SPACE),
    ...(perType ? {perType} : {}),
  }
  const init: TenantInit = {
    e: 'init',
    v: 1,
    tenant: `workload-${run}`,
    space: RETRIEVAL_SPACE.id,
    dims: '',
    profile: env.profile,
    settings,
    seed: streamSeed(options.seed, 'workload', run, spec.name),
  }
  const learner = new TenantLearner(init, RETRIEVAL_SPACE)
  init.dims = dimensionsFingerprint(learner.bandit)
  // Uses reported in the future, by time: [time, query id].
  const uses: Array<[number, number]> = []
  let head = 0
  for (let t = 0; t < options.steps; t++) {
    progress(t)
    const now = t * MS_PER_QUERY
    while (head < uses.length && uses[head][0] <= now) {
      learner.apply({e: 'used', id: String(uses[head][1]), t: uses[head][0]})
      head++
    }
    const mix = mixes[t < shiftAt ? 0 : 1]
    const type = episode.type(t, mix)
    const ty = perType ? WORKLOAD_TYPES[type] : undefined
    const {id, arms} = learner.sampleNext(ty)
    learner.apply(ty === undefined ? {e: 'q', id, t: now, arms} : {e: 'q', id, t: now, arms, ty})
    const served = episode.serve(t, learner.configOf(arms, ty), mix, type, perType)
    quality[t] = served.quality
    if (served.useDelayS > 0) {
      const at = now + served.useDelayS * MS_PER_QUERY
      // keep `uses` sorted by time (delays are short, so insert from the end)
      let i = uses.length
      uses.push([at, id])
      while (i > head && uses[i - 1][0] > at) {
        uses[i] = uses[i - 1]
        i--
      }
      uses[i] = [at, id]
    }
  }
  // per-type: the set of the type that dominates after the shift (the shared set plays no query)
  return {quality, finalBest: Array.from((perType ? learner.banditFor(WORKLOAD_TYPES[1]) : learner.bandit).bestArms())}
}

interface WorkloadWindow {
  from: number
  to: number
  quality_mean: number
  quality_se: number
}

export interface WorkloadPolicyReport {
  /** Mean quality over the last `window` queries before the shift. */
  before_shift: WorkloadWindow
  /** Consecutive windows after the shift. */
  after_shift: WorkloadWindow[]
  /** Cumulative regret after the shift against the reference policy (synthetic: the oracle; engine: the tuned reference). */
  regret_after_shift_mean: number
  regret_after_shift_se: number
  /** Values the bandits believe best at the end (run 0), for the reported parameters, as played (fusion weights projected). */
  final_best: Record<string, string | number | boolean>
}

function windowOf(runs: Float64Array[], from: number, to: number): WorkloadWindow {
  const perRun = runs.map((q) => mean(q.subarray(from, to)))
  return {from, to, quality_mean: mean(perRun), quality_se: runs.length > 1 ? standardError(perRun) : NaN}
}

/**
 * The one policy loop both reward models plug into: every policy, every run, then windows of
 * quality and the regret after the shift, sum over t >= T/2 of (reference's quality at t - the
 * policy's quality at t) in the same run.
 */
export function runWorkload(
  env: WorkloadEnvironment,
  options: WorkloadOptions,
  onProgress?: (p: WorkloadProgress) => void,
): Record<string, WorkloadPolicyReport> {
  const shiftAt = Math.floor(options.steps / 2)
  const played = new Map<string, {runs: Float64Array[]; finalBest: number[]}>()
  for (const spec of env.policies) {
    const runs: Float64Array[] = []
    let finalBest: number[] = []
    for (let run = 0; run < options.runs; run++) {
      const out = playPolicy(spec, run, options, env, onProgress)
      runs.push(out.quality)
      if (run === 0) finalBest = out.finalBest
    }
    played.set(spec.name, {runs, finalBest})
  }
  const reference = played.get(env.reference)
  if (!reference) throw new RangeError(`workload: reference policy ${env.reference} is not simulated`)
  const reported = new Set(env.reportedKeys)
  const policies: Record<string, WorkloadPolicyReport> = {}
  for (const [name, {runs, finalBest}] of played) {
    const after: WorkloadWindow[] = []
    for (let from = shiftAt; from < options.steps; from += options.window)
      after.push(windowOf(runs, from, Math.min(options.steps, from + options.window)))
    const regrets = runs.map((q, run) => {
      const ref = reference.runs[run]
      let r = 0
      for (let t = shiftAt; t < options.steps; t++) r += ref[t] - q[t]
      return r
    })
    // The configuration those bins play (simplex members projected onto the floored simplex).
    const bestConfig = configFromArms(env.profile, env.dims, finalBest)
    const best: Record<string, string | number | boolean> = {}
    for (const d of env.dims) if (reported.has(d.key)) best[d.key] = bestConfig[d.key]
    policies[name] = {
      before_shift: windowOf(runs, Math.max(0, shiftAt - options.window), shiftAt),
      after_shift: after,
      regret_after_shift_mean: mean(regrets),
      regret_after_shift_se: runs.length > 1 ? standardError(regrets) : NaN,
      final_best: best,
    }
  }
  return policies
}

/** The synthetic workload's report (`kt online workload` without --data). */
export interface WorkloadReport {
  reward_model: 'synthetic'
  steps: number
  runs: number
  shift_at: number
  synthetic_reward_model: true
  oracle_quality: {before: number; after: number}
  policies: Record<string, WorkloadPolicyReport>
}

/**
 * The synthetic reward model as a workload environment: a query's type is drawn from the mix, its
 * node used with probability quality(config, type); the step records the expected quality under
 * the mix. Streams are seeded by run only, so every policy sees the same type and outcome draws.
 */
function syntheticEnvironment(
  options: WorkloadOptions,
  model: QualityModel,
  dims: readonly Dimension[],
  profile: Config,
  oracle: readonly [Config, Config],
): WorkloadEnvironment {
  return {
    dims,
    profile,
    policies: [
      {name: 'profile', phases: [profile, profile]},
      ...learnerPolicies(options.perType),
      {name: 'oracle', phases: oracle},
    ],
    reference: 'oracle',
    reportedKeys: WORKLOAD_TYPES.flatMap((t) => Object.keys(IDEALS[t])),
    episode(run) {
      const types = new Rng(streamSeed(options.seed, 'workload', run, 'types'))
      const outcomes = new Rng(streamSeed(options.seed, 'workload', run, 'outcomes'))
      return {
        type: (_t, mix) => (types.next() < mix[0] ? 0 : 1),
        serve(_t, config, mix, type, perType) {
          const quality = perType ? model.quality(config, type) : model.mixQuality(config, mix)
          const used = outcomes.next() < model.quality(config, type)
          return {quality, useDelayS: used ? 1 + outcomes.int(USE_DELAY_MAX_S) : 0}
        },
      }
    },
  }
}

export function simulateWorkload(options: WorkloadOptions, onProgress?: (p: WorkloadProgress) => void): WorkloadReport {
  const dims = dimensionsOf(RETRIEVAL_SPACE, onlineTuned(RETRIEVAL_SPACE))
  const profile = defaultConfig(RETRIEVAL_SPACE)
  const model = new QualityModel(dims)
  const shiftAt = Math.floor(options.steps / 2)
  const mixes = [mixAt(0, shiftAt), mixAt(shiftAt, shiftAt)]
  const oracle = mixes.map((mix) => configFromArms(profile, dims, oracleArms(model, dims, profile, mix))) as [
    Config,
    Config,
  ]
  const policies = runWorkload(syntheticEnvironment(options, model, dims, profile, oracle), options, onProgress)
  return {
    reward_model: 'synthetic',
    steps: options.steps,
    runs: options.runs,
    shift_at: shiftAt,
    synthetic_reward_model: true,
    oracle_quality: {before: model.mixQuality(oracle[0], mixes[0]), after: model.mixQuality(oracle[1], mixes[1])},
    policies,
  }
}
