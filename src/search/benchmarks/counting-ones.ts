/**
 * Counting ones (Falkner et al. 2018, section 5.1), 16-D mixed: 8 binary categoricals and 8
 * continuous coordinates in [0, 1]. True loss -(sum x_i + sum x_j), f* = -16. At budget b each
 * continuous x_j is estimated by k_j / b with k_j ~ Binomial(b, x_j); continuing from b to b' adds
 * b' - b samples to the first b.
 */
import type {Config, ParamSpace} from '../../space/index.js'
import type {Objective} from '../types.js'
import {BENCH_FIDELITY, benchBinary, benchFloat, countSuccesses, noiseStream, num, readCountState} from './common.js'

const COUNTING_ONES_BINARY = 8
const COUNTING_ONES_CONTINUOUS = 8
const COUNTING_ONES_OPTIMUM = -(COUNTING_ONES_BINARY + COUNTING_ONES_CONTINUOUS)

const BINARY = Array.from({length: COUNTING_ONES_BINARY}, (_, i) => `b${i + 1}`)
const CONTINUOUS = Array.from({length: COUNTING_ONES_CONTINUOUS}, (_, i) => `c${i + 1}`)

const countingOnesSpace: ParamSpace = {
  id: 'bench-counting-ones',
  params: [
    ...BINARY.map((n) => benchBinary(n, `Counting ones binary ${n}`)),
    ...CONTINUOUS.map((n) => benchFloat(n, 0, 1, `Counting ones continuous ${n}`)),
  ],
}

function binarySum(config: Config): number {
  return BINARY.reduce((s, n) => s + num(config, n), 0)
}

function countingOnesTrue(config: Config): number {
  return -(binarySum(config) + CONTINUOUS.reduce((s, n) => s + num(config, n), 0))
}

export function countingOnesObjective(): Objective {
  return {
    id: 'counting_ones',
    space: countingOnesSpace,
    fidelity: BENCH_FIDELITY,
    continuation: true,
    optimum: COUNTING_ONES_OPTIMUM,
    trueLoss: countingOnesTrue,
    evaluate(config, budget, ctx) {
      const previous =
        ctx.checkpoint && ctx.checkpoint.budget <= budget
          ? readCountState(ctx.checkpoint.state, CONTINUOUS.length)
          : undefined
      const from = previous ? ctx.checkpoint!.budget : 0
      const counts = CONTINUOUS.map((name, j) => {
        const p = num(config, name)
        return (previous ? previous[j] : 0) + countSuccesses(noiseStream(ctx.seed, ctx.configId, name), from, budget, p)
      })
      const estimate = counts.reduce((s, k) => s + k / budget, 0)
      return {loss: -(binarySum(config) + estimate), checkpoint: {counts}}
    },
  }
}
