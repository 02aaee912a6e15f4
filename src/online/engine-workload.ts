/**
 * `kt online workload --data FILE`: the workload simulation with the real retrieval engine as the
 * reward model. The engine is built once per conversation (as `kt eval` builds it); the scored
 * questions of two categories are the two query pools: entity lookups = single-hop questions,
 * temporal = temporal questions (types.ts). Per simulated query the type is drawn from the mix,
 * a question of that type uniformly (with replacement), the tenant's learner picks the arms, and
 * engine.search(question, config, k) runs on the question's conversation: if an evidence turn is
 * in the top k, the node is "used" 1..USE_DELAY_MAX_S seconds later, otherwise the query's window
 * closes unused. The question and delay draws are seeded by run only (common random numbers):
 * every policy of a run sees the same questions.
 *
 * The reference ("tuned") is the best bins per phase by coordinate ascent, valued by the
 * mix-weighted hit rate over the pools. It is tuned IN-SAMPLE, on the very questions it is then
 * scored on: an upper reference for what fixed bins could do on these questions, not an oracle
 * (on new questions it would do worse).
 */
import {performance} from 'node:perf_hooks'
import type {MemoryDataset, QuestionCategory} from '../data/conversations/types.js'
import type {RetrievalEngine} from '../engine/retrieval/engine.js'
import {RETRIEVAL_SPACE} from '../engine/retrieval/space.js'
import {prepareEvaluation} from '../eval/harness.js'
import {defaultConfig, onlineTuned} from '../space/space.js'
import type {Config} from '../space/types.js'
import {InputError} from '../util/errors.js'
import {Rng} from '../util/rng.js'
import {type Dimension, configFromArms, dimensionsOf} from './bins.js'
import {streamSeed} from './sampling.js'
import {
  USE_DELAY_MAX_S,
  WORKLOAD_TYPES,
  type WorkloadEnvironment,
  type WorkloadOptions,
  type WorkloadPolicyReport,
  type WorkloadType,
  coordinateAscent,
  learnerPolicies,
  mixAt,
  runWorkload,
} from './workload.js'

/** The question category each workload type draws from (LoCoMo 4 single-hop, 2 temporal). */
const POOL_CATEGORIES: Record<WorkloadType, QuestionCategory> = {
  entity_lookup: 'single-hop',
  temporal: 'temporal',
}
/** A query counts as served well when an evidence turn is in the engine's top k (hit@k). */
export const DEFAULT_WORKLOAD_K = 10
/**
 * Queries per run with --data: 20000, like the synthetic model. On LoCoMo dev (2 conversations,
 * 1082 turns) 3 runs take 46-49 s in all on 2 loaded cores (src/online/README.md, "Workload simulation").
 */
export const ENGINE_WORKLOAD_STEPS = 20000
/**
 * Memoised configurations at most (each holds one hit flag per pool question); past this the memo
 * is cleared. Results do not depend on it (the engine is deterministic), only speed and memory.
 */
const MAX_MEMOISED_CONFIGS = 200_000

const NOT_COMPUTED = -1

/** A question of one of the two pools, with its evidence as turn indices of its conversation's engine. */
export interface PoolQuestion {
  readonly id: string
  readonly text: string
  /** Index into WORKLOAD_TYPES. */
  readonly type: number
  readonly engine: RetrievalEngine
  readonly evidence: Int32Array
}

/**
 * The scored questions (selectScoredQueries: not adversarial, with evidence) of the pools'
 * categories, entity lookups first. A dataset without both is an InputError naming the file.
 */
export function workloadQuestions(
  engines: ReadonlyMap<string, RetrievalEngine>,
  queries: ReadonlyArray<{
    id: string
    conversation: string
    text: string
    category: QuestionCategory
    evidence: readonly string[]
  }>,
  file: string,
): PoolQuestion[] {
  const out: PoolQuestion[] = []
  const turnIndex = new Map<RetrievalEngine, Map<string, number>>()
  WORKLOAD_TYPES.forEach((type, typeIndex) => {
    for (const q of queries) {
      if (q.category !== POOL_CATEGORIES[type]) continue
      const engine = engines.get(q.conversation) as RetrievalEngine
      let index = turnIndex.get(engine)
      if (!index) turnIndex.set(engine, (index = new Map(engine.turnIds.map((id, i) => [id, i]))))
      // (the loaders keep only evidence ids present in the conversation; skip any other defensively)
      const evidence = Int32Array.from(q.evidence.flatMap((id) => (index.has(id) ? [index.get(id) as number] : [])))
      if (evidence.length > 0) out.push({id: q.id, text: q.text, type: typeIndex, engine, evidence})
    }
  })
  const counts = WORKLOAD_TYPES.map((_, k) => out.filter((q) => q.type === k).length)
  if (counts.some((n) => n === 0)) {
    throw new InputError(
      file,
      `scored questions of both workload types (${WORKLOAD_TYPES.map((t) => `${POOL_CATEGORIES[t]} for ${t}`).join(', ')}) with evidence`,
      WORKLOAD_TYPES.map((t, k) => `${counts[k]} ${POOL_CATEGORIES[t]}`).join(', '),
    )
  }
  return out
}

/**
 * Hits (an evidence turn in the engine's top k) per pool question and configuration, memoised by
 * the values of the tuned dimensions: a configuration's hits are computed at most once per question.
 */
export class EngineHits {
  /** Question indices per workload type. */
  readonly pools: number[][]
  /** Engine searches run, and hit lookups asked (searches / lookups = share not memoised). */
  searches = 0
  lookups = 0
  private readonly memo = new Map<string, Int8Array>()

  constructor(
    readonly questions: readonly PoolQuestion[],
    readonly dims: readonly Dimension[],
    readonly k: number,
  ) {
    this.pools = WORKLOAD_TYPES.map((_, type) => questions.flatMap((q, i) => (q.type === type ? [i] : [])))
  }

  /** 1 if an evidence turn of question `q` is in the top k under `config`, else 0. */
  hit(q: number, config: Config): number {
    this.lookups++
    const hits = this.hitsOf(config)
    let h = hits[q]
    if (h === NOT_COMPUTED) {
      h = searchHits(this.questions[q], config, this.k)
      hits[q] = h
      this.searches++
    }
    return h
  }

  /** Hit rate over each type's pool. */
  hitRates(config: Config): number[] {
    return this.pools.map((pool) => {
      let hits = 0
      for (const q of pool) hits += this.hit(q, config)
      return hits / pool.length
    })
  }

  /** Configurations memoised now. */
  get memoised(): number {
    return this.memo.size
  }

  /**
   * The memoised hits of a configuration, by the values of the tuned dimensions (the untuned ones
   * are the profile's in every configuration simulated). Only the flags are kept, not the Config:
   * holding every learner's Config alive would also hold the engine's resolved parameters for it.
   */
  private hitsOf(config: Config): Int8Array {
    let key = ''
    for (const d of this.dims) key += `${config[d.key]}|`
    let hits = this.memo.get(key)
    if (!hits) {
      if (this.memo.size >= MAX_MEMOISED_CONFIGS) this.memo.clear()
      hits = new Int8Array(this.questions.length).fill(NOT_COMPUTED)
      this.memo.set(key, hits)
    }
    return hits
  }
}

/** Whether the engine's top k for a question holds one of its evidence turns (0 or 1). */
function searchHits(q: PoolQuestion, config: Config, k: number): number {
  const ranked = q.engine.search(q.text, config, k)
  for (const t of ranked.turns) if (q.evidence.includes(t)) return 1
  return 0
}

/** Value of a configuration under a mix: the mix-weighted pool hit rates. */
function mixValue(rates: readonly number[], mix: readonly number[]): number {
  let v = 0
  for (let k = 0; k < mix.length; k++) v += mix[k] * rates[k]
  return v
}

/** Hit rates of one configuration: per type, and mix-weighted per phase. */
interface HitRates {
  by_type: Record<WorkloadType, number>
  /** Mix-weighted hit rate before and after the shift. */
  before: number
  after: number
}

interface TunedPhase {
  mix: number[]
  /** Mix-weighted pool hit rate of the tuned bins under the mix they were tuned for (in-sample). */
  hit_rate: number
  /** Their hit rates per type and under both phases' mixes (how far the other phase's best is from this one). */
  rates: HitRates
  /** Each dimension's played value, as final_best reports them (fusion members after their projection onto the simplex). */
  values: Record<string, string | number | boolean>
}

export interface EngineWorkloadReport {
  reward_model: 'engine'
  synthetic_reward_model: false
  data: string
  k: number
  steps: number
  runs: number
  shift_at: number
  seed: number
  /** Questions per pool and the category each draws from. */
  pools: Record<WorkloadType, {category: QuestionCategory; questions: number}>
  /** The deployed profile's values of the tuned dimensions. */
  profile_values: Record<string, string | number | boolean>
  /** The deployed profile's hit@k over the pools (exact, every question). */
  profile_hit_rate: HitRates
  /** The profile's bins (the bandits' starting point; bins play their centres, not the profile's exact values). */
  profile_bins_hit_rate: HitRates
  tuned_reference: {
    in_sample: true
    note: string
    before: TunedPhase
    after: TunedPhase
  }
  /** quality = realised hit (0/1) per query; regret after the shift = sum of (tuned reference's hit - policy's hit) on the same questions. */
  policies: Record<string, WorkloadPolicyReport>
  /** Wall-clock figures (not results: they vary with the machine). */
  timing: {
    build_ms: number
    tuning_ms: number
    simulation_ms: number
    simulated_queries: number
    queries_per_second: number
    /** Engine searches while simulating (tuning_searches: while tuning the reference). */
    engine_searches: number
    tuning_searches: number
    /** Share of hit lookups answered from the memo. */
    memoised_share: number
    /** Configurations in the memo at the end. */
    memoised_configs: number
  }
}

const TUNED_REFERENCE_NOTE =
  'tuned in-sample: the best bins per phase by coordinate ascent on the very questions it is scored on; an upper reference, not a true oracle'

export interface EngineWorkloadOptions extends WorkloadOptions {
  k: number
}

function byType(rates: readonly number[]): Record<WorkloadType, number> {
  return Object.fromEntries(WORKLOAD_TYPES.map((t, k) => [t, rates[k]])) as Record<WorkloadType, number>
}

function hitRatesOf(hits: EngineHits, config: Config, mixes: readonly number[][]): HitRates {
  const rates = hits.hitRates(config)
  return {by_type: byType(rates), before: mixValue(rates, mixes[0]), after: mixValue(rates, mixes[1])}
}

/** The tuned reference for one mix: coordinate ascent over the bandits' bins from the profile's bins. */
function tuneForMix(
  hits: EngineHits,
  dims: readonly Dimension[],
  profile: Config,
  mix: readonly number[],
  mixes: readonly number[][],
): {arms: number[]; config: Config; phase: TunedPhase} {
  const {arms, value} = coordinateAscent(dims, profile, (config) => mixValue(hits.hitRates(config), mix))
  const config = configFromArms(profile, dims, arms)
  const values: Record<string, string | number | boolean> = {}
  for (const d of dims) values[d.key] = config[d.key]
  return {arms, config, phase: {mix: [...mix], hit_rate: value, rates: hitRatesOf(hits, config, mixes), values}}
}

/**
 * The engine as a workload environment: per step a type from the mix, a question of that type
 * (uniform, with replacement) and a use delay, all seeded by run only (every policy of a run sees
 * the same questions and delays); the step's quality is the question's hit under the played
 * configuration. Policies: the profile, the three learners, the tuned reference (per phase).
 */
export function engineEnvironment(
  hits: EngineHits,
  profile: Config,
  tuned: readonly [Config, Config],
  seed: number,
  tunedArms?: readonly number[],
  perType = false,
): WorkloadEnvironment {
  return {
    dims: hits.dims,
    profile,
    policies: [
      {name: 'profile', phases: [profile, profile]},
      ...learnerPolicies(perType),
      {name: 'tuned', phases: tuned, finalArms: tunedArms},
    ],
    reference: 'tuned',
    reportedKeys: hits.dims.map((d) => d.key),
    episode(run) {
      const draws = new Rng(streamSeed(seed, 'workload', run, 'questions'))
      const delays = new Rng(streamSeed(seed, 'workload', run, 'delays'))
      return {
        type: (_t, mix) => (draws.next() < mix[0] ? 0 : 1),
        serve(_t, config, _mix, type) {
          const pool = hits.pools[type]
          const q = pool[draws.int(pool.length)]
          const delay = 1 + delays.int(USE_DELAY_MAX_S)
          const hit = hits.hit(q, config)
          return {quality: hit, useDelayS: hit === 1 ? delay : 0}
        },
      }
    },
  }
}

/** The engine-backed workload simulation over a loaded memory dataset. */
export function simulateEngineWorkload(
  dataset: MemoryDataset,
  options: EngineWorkloadOptions,
  onProgress?: (message: string) => void,
): EngineWorkloadReport {
  const t0 = performance.now()
  onProgress?.(`building the engine for ${dataset.conversations.length} conversations`)
  const prepared = prepareEvaluation(dataset)
  const questions = workloadQuestions(prepared.engines, prepared.selection.queries, dataset.source)
  const buildMs = performance.now() - t0
  const dims = dimensionsOf(RETRIEVAL_SPACE, onlineTuned(RETRIEVAL_SPACE))
  const profile = defaultConfig(RETRIEVAL_SPACE)
  const hits = new EngineHits(questions, dims, options.k)
  const shiftAt = Math.floor(options.steps / 2)
  const mixes = [mixAt(0, shiftAt), mixAt(shiftAt, shiftAt)]

  const t1 = performance.now()
  const tuned = mixes.map((mix, phase) => {
    onProgress?.(`tuning the in-sample reference for the ${phase === 0 ? 'first' : 'second'} phase's mix`)
    return tuneForMix(hits, dims, profile, mix, mixes)
  })
  const tuningMs = performance.now() - t1
  const tuningSearches = hits.searches

  const env = engineEnvironment(
    hits,
    profile,
    [tuned[0].config, tuned[1].config],
    options.seed,
    tuned[1].arms,
    options.perType,
  )
  const t2 = performance.now()
  const lookups0 = hits.lookups
  const searches0 = hits.searches
  const total = env.policies.length * options.runs * options.steps
  const policyIndex = new Map(env.policies.map((p, i) => [p.name, i]))
  const policies = runWorkload(env, options, (p) => {
    const done = ((policyIndex.get(p.policy) as number) * options.runs + p.run) * options.steps + p.step
    const seconds = (performance.now() - t2) / 1000
    onProgress?.(
      `${p.policy} run ${p.run + 1}/${options.runs}: ${Math.round((100 * done) / total)}% of ${total} queries, ${seconds > 0 ? Math.round(done / seconds) : 0} queries/s`,
    )
  })
  const simulationMs = performance.now() - t2
  const lookups = hits.lookups - lookups0
  const searches = hits.searches - searches0
  return {
    reward_model: 'engine',
    synthetic_reward_model: false,
    data: dataset.source,
    k: options.k,
    steps: options.steps,
    runs: options.runs,
    shift_at: shiftAt,
    seed: options.seed,
    pools: Object.fromEntries(
      WORKLOAD_TYPES.map((t, k) => [t, {category: POOL_CATEGORIES[t], questions: hits.pools[k].length}]),
    ) as EngineWorkloadReport['pools'],
    profile_values: Object.fromEntries(dims.map((d) => [d.key, profile[d.key]])),
    profile_hit_rate: hitRatesOf(hits, profile, mixes),
    profile_bins_hit_rate: hitRatesOf(
      hits,
      configFromArms(
        profile,
        dims,
        dims.map((d) => d.binOf(profile[d.key])),
      ),
      mixes,
    ),
    tuned_reference: {in_sample: true, note: TUNED_REFERENCE_NOTE, before: tuned[0].phase, after: tuned[1].phase},
    policies,
    timing: {
      build_ms: buildMs,
      tuning_ms: tuningMs,
      simulation_ms: simulationMs,
      simulated_queries: total,
      queries_per_second: total / (simulationMs / 1000),
      engine_searches: searches,
      tuning_searches: tuningSearches,
      memoised_share: lookups > 0 ? 1 - searches / lookups : 0,
      memoised_configs: hits.memoised,
    },
  }
}
