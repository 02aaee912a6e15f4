/**
 * Plain Hyperband (Li et al. 2018): BOHB's brackets of synchronous successive halving with every
 * configuration drawn uniformly at random (what BOHB does before it has a model, and with
 * random_fraction 1). The baseline that tells how much of BOHB's lead is its model's.
 */
import type {ParamSpace} from '../space/index.js'
import {Rng} from '../util/rng.js'
import {Encoding} from './encoding.js'
import {checkFidelity} from './hyperband.js'
import {HyperbandSchedule} from './successive-halving.js'
import type {Fidelity, Optimizer, Trial, TrialResult} from './types.js'

export interface HyperbandOptions {
  readonly seed: number
  /** The objective's budgets; single-fidelity objectives (min = max) run one configuration per bracket. */
  readonly fidelity: Fidelity
  /** Hyperband iterations (brackets) to run; unbounded by default. */
  readonly maxIterations?: number
}

export class HyperbandOptimizer implements Optimizer {
  readonly name = 'hyperband'
  readonly encoding: Encoding
  private readonly rng: Rng
  private readonly schedule: HyperbandSchedule

  constructor(space: ParamSpace, options: HyperbandOptions) {
    checkFidelity(options.fidelity)
    this.encoding = new Encoding(space)
    this.rng = new Rng(options.seed)
    this.schedule = new HyperbandSchedule(
      this.encoding,
      options.fidelity,
      options.maxIterations ?? Infinity,
      'hyperband',
      (budget) => options.fidelity.comparable !== false || budget >= options.fidelity.max,
    )
  }

  ask(): Trial | 'wait' | 'done' {
    return this.schedule.ask(() => ({
      vector: this.encoding.canonical(this.encoding.sampleUniform(this.rng)),
      modelBased: false,
    }))
  }

  tell(trialId: number, result: TrialResult): void {
    this.schedule.tell(trialId, result, () => {})
  }
}
