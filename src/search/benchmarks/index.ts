/** The optimiser benchmark functions of ../../../shared/benchmarks/optimizer-functions.md, by name. */
import {InputError} from '../../util/errors.js'
import type {Objective} from '../types.js'
import {braninObjective} from './branin.js'
import {countingOnesObjective} from './counting-ones.js'
import {hartmann6Objective} from './hartmann6.js'
import {simplexMfObjective, simplexObjective} from './simplex.js'

export const BENCHMARK_FUNCTIONS = ['branin', 'hartmann6', 'counting_ones', 'simplex', 'simplex_mf'] as const
export type BenchmarkName = (typeof BENCHMARK_FUNCTIONS)[number]

const FACTORIES: Record<BenchmarkName, () => Objective> = {
  branin: braninObjective,
  hartmann6: hartmann6Objective,
  counting_ones: countingOnesObjective,
  simplex: simplexObjective,
  simplex_mf: simplexMfObjective,
}

export function isBenchmarkName(name: string): name is BenchmarkName {
  return (BENCHMARK_FUNCTIONS as readonly string[]).includes(name)
}

export function benchmarkObjective(name: string, where = '--function'): Objective {
  if (!isBenchmarkName(name)) throw new InputError(where, `one of ${BENCHMARK_FUNCTIONS.join(', ')}`, name)
  // closed forms: an evaluation takes microseconds (see Objective.brief)
  return {...FACTORIES[name](), brief: true}
}

export * from './branin.js'
export * from './hartmann6.js'
export * from './counting-ones.js'
export * from './simplex.js'
