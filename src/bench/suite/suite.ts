/**
 * The broader optimiser suite of `kt bench optimizers --suite all`: multi-fidelity shapes where
 * an optimiser tuned on the four contract functions can lose (biased low fidelity, crossing
 * learning curves, many unimportant parameters, crash regions, heteroscedastic noise). Each
 * function is a noise-free loss at a fidelity z in [0, 1] (z = 1 at the largest budget) plus
 * Gaussian observation noise whose standard deviation shrinks as 1 / sqrt(b / b_min), as an
 * estimate from b samples would. Budgets are the contract's {9, 27, 81, 243, 729}; z is the
 * budget's position on the log scale, log(b / 9) / log(81).
 */
import type {Config, ParamSpace} from '../../space/index.js'
import {BENCH_FIDELITY, noiseStream} from '../../search/benchmarks/common.js'
import type {Objective} from '../../search/types.js'
import {InputError} from '../../util/errors.js'
import {MF_FUNCTIONS} from './mf-functions.js'
import {SHAPE_FUNCTIONS} from './shape-functions.js'

export interface SuiteFunction {
  readonly name: string
  /** Where the definition comes from (paper or library), or "kt" for a shape defined here. */
  readonly source: string
  readonly space: ParamSpace
  /** Noise-free loss of x at fidelity z in [0, 1]; z = 1 is the loss regret is measured on. */
  loss(x: Config, z: number): number
  /** The minimum of loss(x, 1). */
  readonly optimum: number
  /** Observation noise standard deviation at the smallest budget (may depend on x). */
  noise(x: Config): number
  /** Whether evaluating x fails at every budget (a crash region). */
  crashes?(x: Config): boolean
}

export const SUITE_FUNCTIONS: readonly SuiteFunction[] = [...MF_FUNCTIONS, ...SHAPE_FUNCTIONS]

export const SUITE_NAMES: readonly string[] = SUITE_FUNCTIONS.map((f) => f.name)

export function suiteFunction(name: string, where = '--function'): SuiteFunction {
  const f = SUITE_FUNCTIONS.find((s) => s.name === name)
  if (!f) throw new InputError(where, `one of ${SUITE_NAMES.join(', ')}`, name)
  return f
}

/** The fidelity z of a budget: its position between the smallest and the largest budget on the log scale. */
export function fidelityOf(budget: number): number {
  const {min, max} = BENCH_FIDELITY
  return Math.min(1, Math.max(0, Math.log(budget / min) / Math.log(max / min)))
}

/**
 * A suite function as an objective: noise drawn from the (seed, configuration, budget) stream, so
 * a run is reproducible whatever optimiser asks; a crash is a thrown error (a failed trial).
 */
export function suiteObjective(f: SuiteFunction): Objective {
  return {
    id: f.name,
    space: f.space,
    fidelity: BENCH_FIDELITY,
    brief: true,
    optimum: f.optimum,
    trueLoss: (x) => f.loss(x, 1),
    evaluate(x, budget, ctx) {
      if (f.crashes?.(x)) throw new Error(`${f.name}: crash region`)
      const sd = f.noise(x) * Math.sqrt(BENCH_FIDELITY.min / budget)
      const eps = sd > 0 ? noiseStream(ctx.seed, ctx.configId, `b${budget}`).normal() : 0
      return {loss: f.loss(x, fidelityOf(budget)) + sd * eps}
    },
  }
}

/** The minimum of a unimodal-enough function on [lo, hi]: a grid of `n` points, then golden-section search around the best. */
export function minimize1d(g: (t: number) => number, lo: number, hi: number, n = 2001): {x: number; value: number} {
  let best = lo
  for (let i = 0; i <= n; i++) {
    const t = lo + ((hi - lo) * i) / n
    if (g(t) < g(best)) best = t
  }
  let a = Math.max(lo, best - (hi - lo) / n)
  let b = Math.min(hi, best + (hi - lo) / n)
  const phi = (Math.sqrt(5) - 1) / 2
  for (let k = 0; k < 200; k++) {
    const c = b - phi * (b - a)
    const d = a + phi * (b - a)
    if (g(c) < g(d)) b = d
    else a = c
  }
  const x = (a + b) / 2
  return g(x) < g(best) ? {x, value: g(x)} : {x: best, value: g(best)}
}
