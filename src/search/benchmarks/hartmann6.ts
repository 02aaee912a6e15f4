/** Hartmann6 (6-D) on [0, 1]^6, as in the contract; f* = -3.322368011415513. */
import type {ParamSpace, Config} from '../../space/index.js'
import type {Objective} from '../types.js'
import {benchFloat, num} from './common.js'

/** Hartmann6's coefficients (Surjanovic & Bingham), shared with the suite's multi-fidelity variant. */
export const HARTMANN6_ALPHA = [1.0, 1.2, 3.0, 3.2]
export const HARTMANN6_A = [
  [10, 3, 17, 3.5, 1.7, 8],
  [0.05, 10, 17, 0.1, 8, 14],
  [3, 3.5, 1.7, 10, 17, 8],
  [17, 8, 0.05, 10, 0.1, 14],
]
export const HARTMANN6_P = [
  [1312, 1696, 5569, 124, 8283, 5886],
  [2329, 4135, 8307, 3736, 1004, 9991],
  [2348, 1451, 3522, 2883, 3047, 6650],
  [4047, 8828, 8732, 5743, 1091, 381],
].map((row) => row.map((v) => v * 1e-4))

export const HARTMANN6_OPTIMUM = -3.322368011415513
/** The minimiser (Surjanovic & Bingham, Virtual Library of Simulation Experiments). */
export const HARTMANN6_ARGMIN = [0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573]

export function hartmann6(x: readonly number[]): number {
  let total = 0
  for (let i = 0; i < 4; i++) {
    let inner = 0
    for (let j = 0; j < 6; j++) {
      const d = x[j] - HARTMANN6_P[i][j]
      inner += HARTMANN6_A[i][j] * d * d
    }
    total += HARTMANN6_ALPHA[i] * Math.exp(-inner)
  }
  return -total
}

const NAMES = ['x1', 'x2', 'x3', 'x4', 'x5', 'x6']

export const hartmann6Space: ParamSpace = {
  id: 'bench-hartmann6',
  params: NAMES.map((n) => benchFloat(n, 0, 1, `Hartmann6 ${n}`)),
}

export function hartmann6Objective(): Objective {
  const f = (c: Config): number => hartmann6(NAMES.map((n) => num(c, n)))
  return {
    id: 'hartmann6',
    space: hartmann6Space,
    optimum: HARTMANN6_OPTIMUM,
    trueLoss: f,
    evaluate: (config) => ({loss: f(config)}),
  }
}
