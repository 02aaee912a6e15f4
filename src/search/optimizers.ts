/** The optimisers by name, so commands, studies and benchmarks build them one way. */
import type {ParamSpace} from '../space/index.js'
import {InputError} from '../util/errors.js'
import {BohbOptimizer, SINGLE_FIDELITY, type BohbOptions} from './bohb.js'
import {autoPointsPerDim, DEFAULT_POINTS_PER_DIM, DEFAULT_SIMPLEX_STEP, GridOptimizer, gridTrialLimit} from './grid.js'
import {HyperbandOptimizer} from './hyperband-optimizer.js'
import {RandomOptimizer} from './random.js'
import type {Fidelity, Optimizer} from './types.js'

export const OPTIMIZER_NAMES = ['grid', 'random', 'bohb', 'hyperband'] as const
export type OptimizerName = (typeof OPTIMIZER_NAMES)[number]

/** Options of every optimiser, resolved once when a study is created and stored with it. */
export interface OptimizerSettings {
  readonly gridPoints?: number
  readonly simplexStep?: number
  /** Grid only: the trial limit may be below the grid's size (a seeded random subset); otherwise such a grid is refused. */
  readonly gridSubset?: boolean
  readonly bohb?: Omit<BohbOptions, 'seed' | 'fidelity'>
}

export function checkOptimizerName(name: string, where = '--optimizer'): OptimizerName {
  if (!(OPTIMIZER_NAMES as readonly string[]).includes(name))
    throw new InputError(where, `one of ${OPTIMIZER_NAMES.join(', ')}`, name)
  return name as OptimizerName
}

/**
 * Fills in what depends on the study size (the grid resolution: the largest grid that fits the
 * trial limit, --trials or --budget) so a resumed study rebuilds the same optimiser even if it is
 * continued with a larger trial limit.
 */
export function resolveSettings(
  name: OptimizerName,
  space: ParamSpace,
  settings: OptimizerSettings,
  maxTrials: number | undefined,
  maxBudget?: number,
): OptimizerSettings {
  if (name !== 'grid') return settings
  const simplexStep = settings.simplexStep ?? DEFAULT_SIMPLEX_STEP
  const limit = gridTrialLimit(maxTrials, maxBudget)
  const gridPoints =
    settings.gridPoints ?? (limit !== undefined ? autoPointsPerDim(space, limit, simplexStep) : DEFAULT_POINTS_PER_DIM)
  return {...settings, gridPoints, simplexStep}
}

export function createOptimizer(
  name: string,
  space: ParamSpace,
  seed: number,
  fidelity: Fidelity | undefined,
  settings: OptimizerSettings = {},
): Optimizer {
  const budget = (fidelity ?? SINGLE_FIDELITY).max
  switch (checkOptimizerName(name)) {
    case 'grid':
      return new GridOptimizer(space, {
        seed,
        budget,
        pointsPerDim: settings.gridPoints,
        simplexStep: settings.simplexStep,
      })
    case 'random':
      return new RandomOptimizer(space, {seed, budget})
    case 'bohb':
      return new BohbOptimizer(space, {...settings.bohb, seed, fidelity})
    case 'hyperband':
      return new HyperbandOptimizer(space, {seed, fidelity: fidelity ?? SINGLE_FIDELITY})
  }
}
