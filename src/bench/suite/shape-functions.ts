/**
 * Shapes defined here, where the literature has the idea but no one fixed function: an embedded
 * high-dimensional function (REMBO, Wang et al. 2016: 20 parameters, 4 matter), a learning-curve
 * family whose curves cross (fast starters plateau high, as in the learning-curve extrapolation
 * literature: Domhan et al. 2015), a mixed categorical-continuous function with interactions, a
 * crash region (failed trials), and heteroscedastic noise largest near one of the optima.
 */
import type {Config} from '../../space/index.js'
import {benchBinary, benchFloat, num} from '../../search/benchmarks/common.js'
import {branin, BRANIN_OPTIMUM} from '../../search/benchmarks/branin.js'
import {hartmann6, HARTMANN6_OPTIMUM} from '../../search/benchmarks/hartmann6.js'
import {minimize1d, type SuiteFunction} from './suite.js'

const EMBEDDED_DIMS = 20
/** The 4 coordinates of the 20 that matter (two Branin copies, rescaled from [0, 1]). */
const EMBEDDED_ACTIVE = [3, 7, 12, 18]
const embeddedNames = Array.from({length: EMBEDDED_DIMS}, (_, i) => `x${i + 1}`)

function embedded(c: Config): number {
  const u = EMBEDDED_ACTIVE.map((i) => num(c, embeddedNames[i]))
  return branin(-5 + 15 * u[0], 15 * u[1]) + branin(-5 + 15 * u[2], 15 * u[3])
}

/**
 * Learning curves y(t) = y_inf + (1 - y_inf) exp(-k t), t = b / b_max in (0, 1]: the rate k grows
 * with the learning rate, and so does the plateau y_inf, so the fastest starters look best at low
 * budgets and are not the best at b_max.
 */
function curve(c: Config, z: number): number {
  const lr = num(c, 'lr')
  const plateau = 0.05 + 0.5 * lr * lr + 0.3 * (num(c, 'width') - 0.7) ** 2 + 0.2 * (num(c, 'decay') - 0.4) ** 2
  const t = 81 ** (z - 1)
  return plateau + (1 - plateau) * Math.exp(-(2 + 30 * lr) * t) + 0.1 * (num(c, 'warmup') - 0.5) ** 2 * t
}

const curveOptimum = minimize1d((lr) => curve({lr, width: 0.7, decay: 0.4, warmup: 0.5}, 1), 0, 1).value

/** Per optimiser level: an offset and where the 4 continuous parameters are best (interactions). */
const MIXED_OPTIMIZERS = [
  {offset: 0.3, centre: [0.2, 0.8, 0.5, 0.3]},
  {offset: 0.0, centre: [0.7, 0.3, 0.6, 0.8]},
  {offset: 0.15, centre: [0.5, 0.5, 0.1, 0.5]},
  {offset: 0.5, centre: [0.9, 0.1, 0.9, 0.1]},
]
/** Offsets of the 3 schedules, by optimiser level: the best schedule depends on the optimiser. */
const MIXED_SCHEDULES = [
  [0.2, 0.0, 0.4],
  [0.3, 0.25, 0.0],
  [0.0, 0.1, 0.3],
  [0.1, 0.2, 0.0],
]
const MIXED_WEIGHTS = [4, 2, 1, 0.5]

function mixed(c: Config): number {
  const o = Number(c.optimizer)
  const s = Number(c.schedule)
  const {offset, centre} = MIXED_OPTIMIZERS[o]
  let loss = offset + MIXED_SCHEDULES[o][s] + (num(c, 'bias') === 1 ? 0 : 0.05)
  for (let j = 0; j < 4; j++) loss += MIXED_WEIGHTS[j] * (num(c, `u${j + 1}`) - centre[j]) ** 2
  return loss
}

const H6_NAMES = ['x1', 'x2', 'x3', 'x4', 'x5', 'x6']
const h6 = (c: Config): number => hartmann6(H6_NAMES.map((n) => num(c, n)))

export const SHAPE_FUNCTIONS: readonly SuiteFunction[] = [
  {
    name: 'embedded20',
    source: 'REMBO (Wang et al. 2016): 20 parameters, 4 matter',
    space: {id: 'suite-embedded20', params: embeddedNames.map((n) => benchFloat(n, 0, 1, `embedded ${n}`))},
    loss: (c) => embedded(c),
    optimum: 2 * BRANIN_OPTIMUM,
    noise: () => 2,
  },
  {
    name: 'learning_curves',
    source: 'kt: crossing learning curves (Domhan et al. 2015 shapes)',
    space: {
      id: 'suite-learning-curves',
      params: ['lr', 'width', 'decay', 'warmup'].map((n) => benchFloat(n, 0, 1, `curve ${n}`)),
    },
    loss: curve,
    optimum: curveOptimum,
    noise: () => 0.02,
  },
  {
    name: 'mixed',
    source: 'kt: 2 categoricals (4 and 3 levels), 1 binary, 4 floats, interactions',
    space: {
      id: 'suite-mixed',
      params: [
        {
          kind: 'categorical',
          name: 'optimizer',
          choices: [0, 1, 2, 3],
          default: 0,
          env: 'KT_BENCH_OPTIMIZER',
          description: 'level',
        },
        {
          kind: 'categorical',
          name: 'schedule',
          choices: [0, 1, 2],
          default: 0,
          env: 'KT_BENCH_SCHEDULE',
          description: 'level',
        },
        benchBinary('bias', 'binary'),
        ...['u1', 'u2', 'u3', 'u4'].map((n) => benchFloat(n, 0, 1, `mixed ${n}`)),
      ],
    },
    loss: (c) => mixed(c),
    optimum: 0,
    noise: () => 0.1,
  },
  {
    // about 40% of the space crashes (x4 > 0.5 with x1 < 0.5, or x5 > 0.8); the optimum (x1 0.20, x4 0.28, x5 0.31) does not
    name: 'crash_hartmann6',
    source: 'Hartmann6 with a crash region (kt)',
    space: {id: 'suite-crash-hartmann6', params: H6_NAMES.map((n) => benchFloat(n, 0, 1, `Hartmann6 ${n}`))},
    loss: (c) => h6(c),
    optimum: HARTMANN6_OPTIMUM,
    noise: () => 0.1,
    crashes: (c) => (num(c, 'x4') > 0.5 && num(c, 'x1') < 0.5) || num(c, 'x5') > 0.8,
  },
  {
    // noise grows towards x2 = 15, where one of Branin's three optima lies: lucky draws cluster there
    name: 'hetero_branin',
    source: 'Branin with heteroscedastic noise (kt)',
    space: {
      id: 'suite-hetero-branin',
      params: [benchFloat('x1', -5, 10, 'Branin x1'), benchFloat('x2', 0, 15, 'Branin x2')],
    },
    loss: (c) => branin(num(c, 'x1'), num(c, 'x2')),
    optimum: BRANIN_OPTIMUM,
    noise: (c) => 0.1 + 8 * (num(c, 'x2') / 15) ** 3,
  },
]
