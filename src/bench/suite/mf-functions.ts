/**
 * Multi-fidelity test functions from the literature, with a low fidelity that is biased, not only
 * noisy: Branin and Hartmann6 as in BOCA (Kandasamy et al. 2017, "Multi-fidelity Bayesian
 * optimisation with continuous approximations", appendix), and Park, Borehole and Currin with the
 * low-fidelity forms of Xiong, Qian & Wu (2013), as collected by Surjanovic & Bingham's Virtual
 * Library of Simulation Experiments; between the two fidelities the loss interpolates linearly in z.
 */
import type {Config} from '../../space/index.js'
import {benchFloat, num} from '../../search/benchmarks/common.js'
import {BRANIN_OPTIMUM} from '../../search/benchmarks/branin.js'
import {HARTMANN6_A, HARTMANN6_ALPHA, HARTMANN6_OPTIMUM, HARTMANN6_P} from '../../search/benchmarks/hartmann6.js'
import {minimize1d, type SuiteFunction} from './suite.js'

const xs = (c: Config, names: readonly string[]): number[] => names.map((n) => num(c, n))

/** BOCA's Branin: b(z) = b - 0.01 (1 - z), c(z) = c - 0.1 (1 - z), t(z) = t + 0.05 (1 - z). */
function braninAt(x1: number, x2: number, z: number): number {
  const b = 5.1 / (4 * Math.PI * Math.PI) - 0.01 * (1 - z)
  const c = 5 / Math.PI - 0.1 * (1 - z)
  const t = 1 / (8 * Math.PI) + 0.05 * (1 - z)
  const q = x2 - b * x1 * x1 + c * x1 - 6
  return q * q + 10 * (1 - t) * Math.cos(x1) + 10
}

/** BOCA's shift of Hartmann's alpha at fidelity z: alpha - 0.1 (1 - z) * delta. */
const H6_DELTA = [1, -1, 1, -1]

function hartmann6At(x: readonly number[], z: number): number {
  let total = 0
  for (let i = 0; i < 4; i++) {
    let inner = 0
    for (let j = 0; j < 6; j++) inner += HARTMANN6_A[i][j] * (x[j] - HARTMANN6_P[i][j]) ** 2
    total += (HARTMANN6_ALPHA[i] - 0.1 * (1 - z) * H6_DELTA[i]) * Math.exp(-inner)
  }
  return -total
}

/** Park (1991), the high fidelity of Xiong et al. (2013) on [0, 1]^4 (x1 > 0). */
function parkHigh(x: readonly number[]): number {
  const [x1, x2, x3, x4] = x
  const a =
    x1 > 0 ? (x1 / 2) * (Math.sqrt(1 + ((x2 + x3 * x3) * x4) / (x1 * x1)) - 1) : 0.5 * Math.sqrt((x2 + x3 * x3) * x4)
  return a + (x1 + 3 * x4) * Math.exp(1 + Math.sin(x3))
}

function parkLow(x: readonly number[]): number {
  const [x1, x2, x3] = x
  return (1 + Math.sin(x1) / 10) * parkHigh(x) - 2 * x1 + x2 * x2 + x3 * x3 + 0.5
}

const BOREHOLE = [
  ['rw', 0.05, 0.15],
  ['r', 100, 50000],
  ['Tu', 63070, 115600],
  ['Hu', 990, 1110],
  ['Tl', 63.1, 116],
  ['Hl', 700, 820],
  ['L', 1120, 1680],
  ['Kw', 9855, 12045],
] as const

/** Borehole water flow (Harper & Gupta 1983); `low`: Xiong et al.'s low fidelity. */
function borehole(x: readonly number[], low: boolean): number {
  const [rw, r, tu, hu, tl, hl, l, kw] = x
  const lr = Math.log(r / rw)
  const rest = (2 * l * tu) / (lr * rw * rw * kw) + tu / tl
  return low ? (5 * tu * (hu - hl)) / (lr * (1.5 + rest)) : (2 * Math.PI * tu * (hu - hl)) / (lr * (1 + rest))
}

/** Currin et al. (1988) exponential function on [0, 1]^2 (its limit 1 at x2 = 0). */
function currinHigh(x1: number, x2: number): number {
  const e = x2 > 0 ? 1 - Math.exp(-1 / (2 * x2)) : 1
  return (e * (2300 * x1 ** 3 + 1900 * x1 ** 2 + 2092 * x1 + 60)) / (100 * x1 ** 3 + 500 * x1 ** 2 + 4 * x1 + 20)
}

function currinLow(x1: number, x2: number): number {
  const lo = Math.max(0, x2 - 0.05)
  return (
    (currinHigh(x1 + 0.05, x2 + 0.05) +
      currinHigh(x1 + 0.05, lo) +
      currinHigh(x1 - 0.05, x2 + 0.05) +
      currinHigh(x1 - 0.05, lo)) /
    4
  )
}

const H6_NAMES = ['x1', 'x2', 'x3', 'x4', 'x5', 'x6']
const UNIT4 = ['x1', 'x2', 'x3', 'x4']

export const MF_FUNCTIONS: readonly SuiteFunction[] = [
  {
    name: 'branin_mf',
    source: 'BOCA (Kandasamy et al. 2017)',
    space: {
      id: 'suite-branin-mf',
      params: [benchFloat('x1', -5, 10, 'Branin x1'), benchFloat('x2', 0, 15, 'Branin x2')],
    },
    loss: (c, z) => braninAt(num(c, 'x1'), num(c, 'x2'), z),
    optimum: BRANIN_OPTIMUM,
    noise: () => 0.5,
  },
  {
    name: 'hartmann6_mf',
    source: 'BOCA (Kandasamy et al. 2017)',
    space: {id: 'suite-hartmann6-mf', params: H6_NAMES.map((n) => benchFloat(n, 0, 1, `Hartmann6 ${n}`))},
    loss: (c, z) => hartmann6At(xs(c, H6_NAMES), z),
    optimum: HARTMANN6_OPTIMUM,
    noise: () => 0.05,
  },
  {
    // maximised (loss -f): increasing in every coordinate on [0, 1]^4, so the optimum is the corner 1
    name: 'park_mf',
    source: 'Park (1991); low fidelity of Xiong et al. (2013)',
    space: {id: 'suite-park-mf', params: UNIT4.map((n) => benchFloat(n, 0, 1, `Park ${n}`))},
    loss: (c, z) => {
      const x = xs(c, UNIT4)
      return -(z * parkHigh(x) + (1 - z) * parkLow(x))
    },
    optimum: -parkHigh([1, 1, 1, 1]),
    noise: () => 0.5,
  },
  {
    // minimised: monotone in every input, so the optimum is the corner below (rw, Tu, Hu, Tl, Kw low; r, Hl, L high)
    name: 'borehole_mf',
    source: 'Harper & Gupta (1983); low fidelity of Xiong et al. (2013)',
    space: {id: 'suite-borehole-mf', params: BOREHOLE.map(([n, lo, hi]) => benchFloat(n, lo, hi, `Borehole ${n}`))},
    loss: (c, z) => {
      const x = BOREHOLE.map(([n]) => num(c, n))
      return z * borehole(x, false) + (1 - z) * borehole(x, true)
    },
    optimum: borehole([0.05, 50000, 63070, 990, 63.1, 820, 1680, 9855], false),
    noise: () => 1,
  },
  {
    // maximised (loss -f): the factor 1 - exp(-1 / (2 x2)) is largest (1) at x2 = 0
    name: 'currin_mf',
    source: 'Currin et al. (1988); low fidelity of Xiong et al. (2013)',
    space: {id: 'suite-currin-mf', params: [benchFloat('x1', 0, 1, 'Currin x1'), benchFloat('x2', 0, 1, 'Currin x2')]},
    loss: (c, z) => {
      const x1 = num(c, 'x1')
      const x2 = num(c, 'x2')
      return -(z * currinHigh(x1, x2) + (1 - z) * currinLow(x1, x2))
    },
    optimum: minimize1d((t) => -currinHigh(t, 0), 0, 1).value,
    noise: () => 0.3,
  },
]
