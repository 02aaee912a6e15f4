/**
 * Branin (2-D), as in the contract: f(x1, x2) = a (x2 - b x1^2 + c x1 - r)^2 + s (1 - t) cos(x1) + s
 * on x1 in [-5, 10], x2 in [0, 15]; f* = 5 / (4 pi) at (-pi, 12.275), (pi, 2.275), (9.42478, 2.475).
 */
import type {ParamSpace} from '../../space/index.js'
import type {Objective} from '../types.js'
import {benchFloat, num} from './common.js'

const A = 1
const B = 5.1 / (4 * Math.PI * Math.PI)
const C = 5 / Math.PI
const R = 6
const S = 10
const T = 1 / (8 * Math.PI)

export const BRANIN_OPTIMUM = 5 / (4 * Math.PI)

export function branin(x1: number, x2: number): number {
  const q = x2 - B * x1 * x1 + C * x1 - R
  return A * q * q + S * (1 - T) * Math.cos(x1) + S
}

const braninSpace: ParamSpace = {
  id: 'bench-branin',
  params: [benchFloat('x1', -5, 10, 'Branin x1'), benchFloat('x2', 0, 15, 'Branin x2')],
}

export function braninObjective(): Objective {
  const f = (c: Record<string, unknown>): number => branin(num(c as never, 'x1'), num(c as never, 'x2'))
  return {
    id: 'branin',
    space: braninSpace,
    optimum: BRANIN_OPTIMUM,
    trueLoss: f,
    evaluate: (config) => ({loss: f(config)}),
  }
}
