/**
 * The constrained simplex ("fusion weights"), 4-D: weights summing to 1, each >= 0.05. Maximise
 * A(w) = exp(-(w - c)^T H (w - c)); loss = -A(w). The floor is active at the optimum
 * w* = (203/380, 23/95, 33/190, 0.05), A* = exp(-17/1900).
 * simplex_mf: at budget b (queries) each query is correct with probability A(w); the observed loss
 * is -(correct among the first b) / b, continued like counting ones.
 */
import type {Config, ParamSpace} from '../../space/index.js'
import type {Objective} from '../types.js'
import {BENCH_FIDELITY, countSuccesses, noiseStream, num, readCountState} from './common.js'

const CENTER = [0.55, 0.25, 0.2, 0.0]
const H = [
  [4, 2, 0, 0],
  [2, 6, 0, 0],
  [0, 0, 3, 0],
  [0, 0, 0, 2],
]
/** The floor every weight keeps. */
const SIMPLEX_FLOOR = 0.05
export const SIMPLEX_ARGMAX = [203 / 380, 23 / 95, 33 / 190, 0.05]
export const SIMPLEX_BEST_ACCURACY = Math.exp(-17 / 1900)

const MEMBERS = ['w1', 'w2', 'w3', 'w4']

export const simplexSpace: ParamSpace = {
  id: 'bench-simplex',
  params: [
    {
      kind: 'simplex',
      name: 'w',
      floor: SIMPLEX_FLOOR,
      description: 'Fusion weights',
      members: MEMBERS.map((name) => ({
        name,
        env: `KT_BENCH_${name.toUpperCase()}`,
        description: `weight ${name}`,
        default: 0.25,
      })),
    },
  ],
}

export function simplexAccuracy(w: readonly number[]): number {
  let q = 0
  for (let i = 0; i < 4; i++) for (let j = 0; j < 4; j++) q += (w[i] - CENTER[i]) * H[i][j] * (w[j] - CENTER[j])
  return Math.exp(-q)
}

function weights(config: Config): number[] {
  return MEMBERS.map((m) => num(config, m))
}

export function simplexObjective(): Objective {
  const f = (c: Config): number => -simplexAccuracy(weights(c))
  return {
    id: 'simplex',
    space: simplexSpace,
    optimum: -SIMPLEX_BEST_ACCURACY,
    trueLoss: f,
    evaluate: (config) => ({loss: f(config)}),
  }
}

export function simplexMfObjective(): Objective {
  const f = (c: Config): number => -simplexAccuracy(weights(c))
  return {
    id: 'simplex_mf',
    space: simplexSpace,
    fidelity: BENCH_FIDELITY,
    continuation: true,
    optimum: -SIMPLEX_BEST_ACCURACY,
    trueLoss: f,
    evaluate(config, budget, ctx) {
      const previous =
        ctx.checkpoint && ctx.checkpoint.budget <= budget ? readCountState(ctx.checkpoint.state, 1) : undefined
      const from = previous ? ctx.checkpoint!.budget : 0
      const correct =
        (previous ? previous[0] : 0) +
        countSuccesses(noiseStream(ctx.seed, ctx.configId, 'queries'), from, budget, -f(config))
      return {loss: -correct / budget, metrics: {accuracy: correct / budget}, checkpoint: {counts: [correct]}}
    },
  }
}
