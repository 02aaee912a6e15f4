/**
 * `kt bench bandits`: what Thompson sampling costs per query. A tenant's bandits are warmed with
 * random feedback, then timed drawing one arm per dimension for many queries; the median over
 * repetitions is reported (timings depend on the machine and its load; nothing here is asserted
 * by tests).
 */
import {Rng} from '../util/rng.js'
import type {ParamSpace} from '../space/types.js'
import {defaultConfig, onlineTuned} from '../space/space.js'
import {median} from '../stats/summary.js'
import {type BanditSettings, DEFAULT_SAMPLER, TenantBandit} from '../online/bandit.js'
import {type SamplerKind, SAMPLER_KINDS} from '../online/sampling.js'
import {RETRIEVAL_SPACE} from '../engine/retrieval/space.js'

/** The budget: microseconds of sampling per query for 11 parameters. */
export const TARGET_US_PER_QUERY = 5
/** Queries of random feedback before timing, so posteriors hold evidence (about 100 per arm per dimension at 10 arms... spread unevenly as in use). */
const WARMUP_QUERIES = 2000
/** Parameters in the synthetic case (the budget is stated for 11). */
const SYNTHETIC_PARAMS = 11

/** Eleven float parameters of 10 bins each: 110 arms, the budget's case without simplex or categorical shortcuts. */
function syntheticSpace(): ParamSpace {
  return {
    id: 'bench-11',
    params: Array.from({length: SYNTHETIC_PARAMS}, (_, i) => ({
      kind: 'float' as const,
      name: `p${i}`,
      env: `BENCH_P${i}`,
      low: 0,
      high: 1,
      scale: 'linear' as const,
      default: 0.5,
      description: 'benchmark parameter',
    })),
  }
}

export interface BenchCase {
  space: string
  parameters: number
  dimensions: number
  arms: number
  levels: number
  sampler: SamplerKind
  default_sampler: boolean
  /** Drawing one arm per dimension (Thompson sampling) per query: median over repetitions. */
  sample_us_per_query: number
  /** The same, fastest repetition. */
  sample_us_per_query_best: number
  /** Sampling plus building the configuration object and counting the query (median). */
  choose_us_per_query: number
  /** Crediting one reward to every played arm and drawing the next query (the touched arms' draw parameters are recomputed), median. */
  feedback_and_sample_us: number
  /** Median sampling cost within the target. */
  meets_target: boolean
}

export interface BenchOptions {
  queries: number
  repetitions: number
  seed: number
}

/** Median and fastest time per item over repetitions, in µs (on a shared machine the fastest is the least disturbed). */
function time(repetitions: number, count: number, body: () => void): {median: number; best: number} {
  const times: number[] = []
  for (let r = 0; r < repetitions; r++) {
    const start = process.hrtime.bigint()
    body()
    times.push(Number(process.hrtime.bigint() - start) / 1000 / count)
  }
  return {median: median(times), best: Math.min(...times)}
}

function benchCase(
  space: ParamSpace,
  tuned: readonly string[] | undefined,
  levels: number,
  sampler: SamplerKind,
  options: BenchOptions,
): BenchCase {
  const settings: BanditSettings = {
    levels,
    sampler,
    forgetting: {kind: 'periodic', every: 500, fraction: 0.05},
    tuned: tuned ? [...tuned] : undefined,
  }
  const bandit = new TenantBandit(space, defaultConfig(space), settings)
  const rng = new Rng(options.seed)
  const arms = new Uint8Array(bandit.dims.length)
  for (let q = 0; q < WARMUP_QUERIES; q++) {
    bandit.sampleArms(rng, arms)
    bandit.countQuery(arms)
    bandit.observe(arms, rng.int(levels))
  }
  const n = options.queries
  let sink = 0
  const sample = time(options.repetitions, n, () => {
    for (let q = 0; q < n; q++) sink += bandit.sampleArms(rng, arms)[0]
  })
  const choose = time(options.repetitions, n, () => {
    for (let q = 0; q < n; q++) {
      const config = bandit.configOf(bandit.sampleArms(rng, arms))
      bandit.countQuery(arms)
      sink += Object.keys(config).length
    }
  })
  const levelsDrawn = Array.from({length: n}, () => rng.int(levels))
  const feedback = time(options.repetitions, n, () => {
    // Each feedback also makes the next draw recompute the touched arms' cached parameters, so time them together.
    for (let q = 0; q < n; q++) {
      bandit.observe(arms, levelsDrawn[q])
      bandit.sampleArms(rng, arms)
    }
  })
  if (sink === -1) throw new Error('unreachable')
  return {
    space: space.id,
    parameters: tuned ? tuned.length : space.params.length,
    dimensions: bandit.dims.length,
    arms: bandit.dims.reduce((s, d) => s + d.values.length, 0),
    levels,
    sampler,
    default_sampler: sampler === DEFAULT_SAMPLER,
    sample_us_per_query: sample.median,
    sample_us_per_query_best: sample.best,
    choose_us_per_query: choose.median,
    feedback_and_sample_us: feedback.median,
    meets_target: sample.median <= TARGET_US_PER_QUERY,
  }
}

/** Every case: the synthetic 11 x 10 space and the retrieval space's tuned set, binary and graded, every sampler. */
export function runBanditBench(options: BenchOptions): BenchCase[] {
  const cases: BenchCase[] = []
  for (const [space, tuned] of [
    [syntheticSpace(), undefined],
    [RETRIEVAL_SPACE, onlineTuned(RETRIEVAL_SPACE)],
  ] as const)
    for (const levels of [2, 4])
      for (const sampler of SAMPLER_KINDS) cases.push(benchCase(space, tuned, levels, sampler, options))
  return cases
}
