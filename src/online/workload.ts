/**
 * `kt online workload`: a tenant whose query mix shifts from entity lookups to temporal questions,
 * and the bandits retuning the retrieval engine's parameters in response.
 *
 * The reward is SYNTHETIC. Running the real engine per simulated query would need labelled
 * queries of both kinds over one memory and a quality signal per query; instead a documented
 * model stands in for "how the parameters affect answer quality per query type": for type k,
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
 * times, the implicit-feedback window): the query's node is used with probability
 * quality(config) after a delay of 1..USE_DELAY_MAX_S seconds; otherwise its 5-minute window
 * closes and it counts as reward 0. One query per second.
 */
import {Rng} from '../util/rng.js'
import type {Config} from '../space/types.js'
import {defaultConfig} from '../space/space.js'
import {mean, standardError} from '../stats/summary.js'
import {RETRIEVAL_SPACE} from '../engine/retrieval/space.js'
import {type Dimension, configFromArms, dimensionsOf, unitOf} from './bins.js'
import {type ForgettingSettings, forgettingDefaults} from './forgetting.js'
import {type SamplerKind, streamSeed} from './sampling.js'
import {RETRIEVAL_TUNED} from './spaces.js'
import {TenantLearner, type TenantInit, dimensionsFingerprint} from './tenant.js'

/** Quality (probability the retrieved node is used) far from a type's preferences. */
export const QUALITY_FLOOR = 0.1
/** Quality at a type's preferred configuration. */
export const QUALITY_PEAK = 0.8
/** Share of entity lookups before the shift and of temporal questions after it. */
export const MAJORITY_SHARE = 0.9
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

/** The best arm choice for a mix, by coordinate ascent over the bins from the profile's bins (the reference "oracle"). */
export function oracleArms(model: QualityModel, dims: readonly Dimension[], base: Config, mix: readonly number[]): number[] {
  const arms = dims.map((d) => d.binOf(base[d.key]))
  let best = model.mixQuality(configFromArms(base, dims, arms), mix)
  for (let sweep = 0; sweep < 50; sweep++) {
    let improved = false
    for (let d = 0; d < dims.length; d++) {
      for (let a = 0; a < dims[d].values.length; a++) {
        const old = arms[d]
        if (a === old) continue
        arms[d] = a
        const q = model.mixQuality(configFromArms(base, dims, arms), mix)
        if (q > best + 1e-12) {
          best = q
          improved = true
        } else arms[d] = old
      }
    }
    if (!improved) break
  }
  return arms
}

export const WORKLOAD_POLICIES = ['profile', 'ts', 'ts-decay', 'ts-adaptive', 'oracle'] as const
export type WorkloadPolicy = (typeof WORKLOAD_POLICIES)[number]

function forgettingOf(policy: WorkloadPolicy): ForgettingSettings {
  return policy === 'ts-decay' ? forgettingDefaults('periodic') : policy === 'ts-adaptive' ? forgettingDefaults('adaptive') : {kind: 'none'}
}

export interface WorkloadOptions {
  steps: number
  runs: number
  seed: number
  sampler: SamplerKind
  /** Width of the reporting windows after the shift, in queries. */
  window: number
}

/** Expected quality per step of one run of one policy. */
function playWorkload(policy: WorkloadPolicy, run: number, options: WorkloadOptions, model: QualityModel, dims: readonly Dimension[], profile: Config): {quality: Float64Array; finalBest: number[]} {
  const shiftAt = Math.floor(options.steps / 2)
  const quality = new Float64Array(options.steps)
  const types = new Rng(streamSeed(options.seed, 'workload', run, 'types'))
  const outcomes = new Rng(streamSeed(options.seed, 'workload', run, 'outcomes'))
  if (policy === 'profile' || policy === 'oracle') {
    const before = policy === 'profile' ? profile : configFromArms(profile, dims, oracleArms(model, dims, profile, mixAt(0, shiftAt)))
    const after = policy === 'profile' ? profile : configFromArms(profile, dims, oracleArms(model, dims, profile, mixAt(shiftAt, shiftAt)))
    for (let t = 0; t < options.steps; t++) quality[t] = model.mixQuality(t < shiftAt ? before : after, mixAt(t, shiftAt))
    return {quality, finalBest: (policy === 'profile' ? dims.map((d) => d.binOf(profile[d.key])) : dims.map((d) => d.binOf(after[d.key])))}
  }
  const settings = {levels: 2, sampler: options.sampler, forgetting: forgettingOf(policy), tuned: [...RETRIEVAL_TUNED]}
  const init: TenantInit = {e: 'init', v: 1, tenant: `workload-${run}`, space: RETRIEVAL_SPACE.id, dims: '', profile, settings, seed: streamSeed(options.seed, 'workload', run, policy)}
  const learner = new TenantLearner(init, RETRIEVAL_SPACE)
  init.dims = dimensionsFingerprint(learner.bandit)
  // Uses reported in the future, by time: [time, query id].
  const uses: Array<[number, number]> = []
  let head = 0
  for (let t = 0; t < options.steps; t++) {
    const now = t * MS_PER_QUERY
    while (head < uses.length && uses[head][0] <= now) {
      learner.apply({e: 'used', id: String(uses[head][1]), t: uses[head][0]})
      head++
    }
    const {id, arms} = learner.sampleNext()
    learner.apply({e: 'q', id, t: now, arms})
    const config = learner.configOf(arms)
    const mix = mixAt(t, shiftAt)
    quality[t] = model.mixQuality(config, mix)
    const type = types.next() < mix[0] ? 0 : 1
    if (outcomes.next() < model.quality(config, type)) {
      const at = now + (1 + outcomes.int(USE_DELAY_MAX_S)) * MS_PER_QUERY
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
  return {quality, finalBest: Array.from(learner.bandit.bestArms())}
}

export interface WorkloadWindow {
  from: number
  to: number
  quality_mean: number
  quality_se: number
}

export interface WorkloadPolicyReport {
  /** Mean expected quality over the last `window` queries before the shift. */
  before_shift: WorkloadWindow
  /** Consecutive windows after the shift. */
  after_shift: WorkloadWindow[]
  /** Cumulative regret after the shift against the oracle (the best bins for the new mix). */
  regret_after_shift_mean: number
  regret_after_shift_se: number
  /** Values the bandits believe best at the end (run 0), for the parameters the model uses. */
  final_best: Record<string, string | number | boolean>
}

export interface WorkloadReport {
  steps: number
  runs: number
  shift_at: number
  synthetic_reward_model: true
  oracle_quality: {before: number; after: number}
  policies: Record<string, WorkloadPolicyReport>
}

function windowOf(runs: Float64Array[], from: number, to: number): WorkloadWindow {
  const perRun = runs.map((q) => mean(q.subarray(from, to)))
  return {from, to, quality_mean: mean(perRun), quality_se: runs.length > 1 ? standardError(perRun) : NaN}
}

export function simulateWorkload(options: WorkloadOptions, onProgress?: (policy: string, run: number) => void): WorkloadReport {
  const dims = dimensionsOf(RETRIEVAL_SPACE, RETRIEVAL_TUNED)
  const profile = defaultConfig(RETRIEVAL_SPACE)
  const model = new QualityModel(dims)
  const shiftAt = Math.floor(options.steps / 2)
  const oracle = [mixAt(0, shiftAt), mixAt(shiftAt, shiftAt)].map((mix) => model.mixQuality(configFromArms(profile, dims, oracleArms(model, dims, profile, mix)), mix))
  const used = new Set(WORKLOAD_TYPES.flatMap((t) => Object.keys(IDEALS[t])))
  const policies: Record<string, WorkloadPolicyReport> = {}
  for (const policy of WORKLOAD_POLICIES) {
    const runs: Float64Array[] = []
    let finalBest: number[] = []
    for (let run = 0; run < options.runs; run++) {
      const out = playWorkload(policy, run, options, model, dims, profile)
      runs.push(out.quality)
      if (run === 0) finalBest = out.finalBest
      onProgress?.(policy, run)
    }
    const after: WorkloadWindow[] = []
    for (let from = shiftAt; from < options.steps; from += options.window) after.push(windowOf(runs, from, Math.min(options.steps, from + options.window)))
    const regrets = runs.map((q) => {
      let r = 0
      for (let t = shiftAt; t < options.steps; t++) r += oracle[1] - q[t]
      return r
    })
    const best: Record<string, string | number | boolean> = {}
    dims.forEach((d, i) => {
      if (used.has(d.key)) best[d.key] = d.values[finalBest[i]]
    })
    policies[policy] = {
      before_shift: windowOf(runs, Math.max(0, shiftAt - options.window), shiftAt),
      after_shift: after,
      regret_after_shift_mean: mean(regrets),
      regret_after_shift_se: runs.length > 1 ? standardError(regrets) : NaN,
      final_best: best,
    }
  }
  return {steps: options.steps, runs: options.runs, shift_at: shiftAt, synthetic_reward_model: true, oracle_quality: {before: oracle[0], after: oracle[1]}, policies}
}
