/**
 * Random search (Bergstra & Bengio 2012): every trial an independent uniform draw from the space
 * (log-uniform on log-scale parameters, uniform over the floored simplex), evaluated at the full
 * budget. The baseline every other optimiser must beat.
 */
import type {ParamSpace} from '../space/index.js'
import {Rng} from '../util/rng.js'
import {Encoding} from './encoding.js'
import type {Optimizer, Trial, TrialResult} from './types.js'

export interface RandomOptions {
  readonly seed: number
  /** Budget every trial runs at (the objective's maximum). */
  readonly budget?: number
  /** Trials to propose before answering 'done'; unbounded by default. */
  readonly maxTrials?: number
}

export class RandomOptimizer implements Optimizer {
  readonly name = 'random'
  readonly encoding: Encoding
  private readonly rng: Rng
  private nextTrialId = 0
  private readonly pending = new Set<number>()

  constructor(
    space: ParamSpace,
    private readonly options: RandomOptions,
  ) {
    this.encoding = new Encoding(space)
    this.rng = new Rng(options.seed)
  }

  ask(): Trial | 'done' {
    if (this.nextTrialId >= (this.options.maxTrials ?? Infinity)) return 'done'
    const id = this.nextTrialId++
    this.pending.add(id)
    const config = this.encoding.decode(this.encoding.sampleUniform(this.rng))
    return {id, configId: String(id), config, budget: this.options.budget ?? 1}
  }

  tell(trialId: number, _result: TrialResult): void {
    if (!this.pending.delete(trialId))
      throw new RangeError(`random: trial ${trialId} was never asked or was told twice`)
  }
}
