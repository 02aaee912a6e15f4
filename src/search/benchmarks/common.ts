/** Helpers shared by the optimiser benchmark functions (../../../shared/benchmarks/optimizer-functions.md). */
import type {FloatParam, CategoricalParam, Config} from '../../space/index.js'
import {hashString, Rng} from '../../util/rng.js'
import {DEFAULT_ETA} from '../hyperband.js'
import type {Fidelity} from '../types.js'

/** Budgets {9, 27, 81, 243, 729} of the multi-fidelity benchmarks (eta = 3). */
export const BENCH_FIDELITY: Fidelity = {min: 9, max: 729, eta: DEFAULT_ETA}

/** A float parameter of a benchmark space (benchmarks are not deployed: env names are nominal). */
export function benchFloat(name: string, low: number, high: number, description: string): FloatParam {
  return {
    kind: 'float',
    name,
    low,
    high,
    scale: 'linear',
    default: (low + high) / 2,
    env: `KT_BENCH_${name.toUpperCase()}`,
    description,
  }
}

export function benchBinary(name: string, description: string): CategoricalParam {
  return {kind: 'categorical', name, choices: [0, 1], default: 0, env: `KT_BENCH_${name.toUpperCase()}`, description}
}

export function num(config: Config, name: string): number {
  return Number(config[name])
}

/**
 * The noise stream of one configuration and one channel: draw t of the stream is the t-th sample
 * the benchmark takes for that configuration, whatever the budget, so the estimate at b' reuses
 * the first b samples of the estimate at b (the contract's continuation).
 */
export function noiseStream(seed: number, configId: string, channel: string): Rng {
  return new Rng(hashString(`${seed >>> 0}:${configId}:${channel}`))
}

/**
 * Number of successes among draws [from, to) of a stream, each a success with probability p.
 * Draws before `from` are skipped (the samples a continued evaluation already counted).
 */
export function countSuccesses(stream: Rng, from: number, to: number, p: number): number {
  for (let t = 0; t < from; t++) stream.next()
  let k = 0
  for (let t = from; t < to; t++) if (stream.next() < p) k++
  return k
}

/** A checkpoint of a counting benchmark: successes per channel after `budget` samples. */
interface CountState {
  readonly counts: number[]
}

export function readCountState(state: unknown, channels: number): number[] | undefined {
  const counts = (state as CountState | undefined)?.counts
  return Array.isArray(counts) && counts.length === channels && counts.every((c) => Number.isInteger(c))
    ? [...counts]
    : undefined
}
