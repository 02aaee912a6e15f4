/**
 * Grid search: the full Cartesian product of every parameter's grid, evaluated at the full budget.
 * Each float gets `pointsPerDim` evenly spaced values in its scale (log or linear, ends included),
 * each int its integers (or `pointsPerDim` evenly spaced ones if it has more), each categorical all
 * its choices, each floored simplex group the lattice of weights floor + m * step with sum 1
 * (4 weights, floor 0, step 0.05: C(23, 3) = 1771 points). The points are visited in a seeded
 * random order, so a search stopped early has still covered the space evenly.
 *
 * A grid is the grid it claims: a study whose trial limit is below its grid's size is refused
 * (checkGridLimit) unless the caller asks for a subset, and every grid study reports how many of
 * its points it evaluated (gridCoverage), so a stopped or subset grid never reads as the grid.
 */
import type {FloatParam, IntParam, ParamSpace, SimplexGroup} from '../space/index.js'
import {InputError} from '../util/errors.js'
import {Rng} from '../util/rng.js'
import {decodeNumber, Encoding} from './encoding.js'
import type {Config} from '../space/index.js'
import type {Optimizer, Trial, TrialResult} from './types.js'

/** Default lattice step of a simplex group (weights on a 5% lattice). */
export const DEFAULT_SIMPLEX_STEP = 0.05

/** Default grid values per numeric parameter when no point budget is given. */
export const DEFAULT_POINTS_PER_DIM = 5

/** Largest grid kt will enumerate (the visiting order is a permutation of all of it). */
export const MAX_GRID_POINTS = 20_000_000

/** Rounding of grid values and lattice weights, so 0.05 * 3 prints as 0.15. */
const LATTICE_DIGITS = 12

export interface GridOptions {
  readonly seed: number
  readonly budget?: number
  /** Values per numeric parameter; if absent, the largest count whose grid fits `maxPoints`. */
  readonly pointsPerDim?: number
  /** Target size used to pick pointsPerDim automatically (the evaluation budget of the study). */
  readonly maxPoints?: number
  readonly simplexStep?: number
  /** 'shuffled' (default, seeded) or 'lexicographic' (first parameter slowest). */
  readonly order?: 'shuffled' | 'lexicographic'
}

/** The values of one grid axis, each a partial configuration. */
type Axis = Config[]

/** Every grid axis of the space, in table order. */
export function gridAxes(space: ParamSpace, pointsPerDim: number, simplexStep: number): Axis[] {
  if (!(Number.isInteger(pointsPerDim) && pointsPerDim >= 2))
    throw new InputError('grid: points per dimension', 'an integer >= 2', String(pointsPerDim))
  return space.params.map((p): Axis => {
    if (p.kind === 'categorical') return p.choices.map((c) => ({[p.name]: c}))
    if (p.kind === 'simplex') return simplexLattice(p, simplexStep)
    return numericAxis(p, pointsPerDim).map((v) => ({[p.name]: v}))
  })
}

function numericAxis(p: FloatParam | IntParam, points: number): number[] {
  if (p.kind === 'int' && p.high - p.low + 1 <= points) {
    const values: number[] = []
    for (let v = p.low; v <= p.high; v++) values.push(v)
    return values
  }
  const values: number[] = []
  for (let i = 0; i < points; i++) {
    const t = i / (points - 1)
    let v: number
    if (p.kind === 'int') v = decodeNumber(p, t)
    else if (p.scale === 'log') v = Math.exp(Math.log(p.low) + t * (Math.log(p.high) - Math.log(p.low)))
    else v = p.low + t * (p.high - p.low)
    // 12 significant digits: the log-scale midpoint of 1..100 is 10, not 10.000000000000002.
    v = Math.min(p.high, Math.max(p.low, Number(v.toPrecision(LATTICE_DIGITS))))
    if (i === 0) v = p.low
    if (i === points - 1) v = p.high
    if (values[values.length - 1] !== v) values.push(v)
  }
  return values
}

/**
 * The lattice of a floored simplex: weights floor + m_i * step with sum m_i = M, where
 * M = (1 - k * floor) / step must be a whole number.
 */
export function simplexLattice(p: SimplexGroup, step: number): Axis {
  const k = p.members.length
  const free = 1 - k * p.floor
  const units = free / step
  const M = Math.round(units)
  if (!(step > 0) || Math.abs(units - M) > 1e-9 || M < 0)
    throw new InputError(
      `grid: simplex ${p.name}`,
      `a step that divides 1 - ${k} x ${p.floor} = ${round(free)}`,
      String(step),
    )
  const out: Axis = []
  const parts = new Array<number>(k).fill(0)
  const recurse = (i: number, left: number): void => {
    if (i === k - 1) {
      parts[i] = left
      const config: Config = {}
      let sum = 0
      for (let j = 0; j < k - 1; j++) {
        const w = round(p.floor + parts[j] * step)
        config[p.members[j].name] = w
        sum += w
      }
      config[p.members[k - 1].name] = round(1 - sum)
      out.push(config)
      return
    }
    for (let m = 0; m <= left; m++) {
      parts[i] = m
      recurse(i + 1, left - m)
    }
  }
  recurse(0, M)
  return out
}

function round(x: number): number {
  return Number(x.toFixed(LATTICE_DIGITS))
}

/** Grid size for a given points-per-dimension. */
export function gridSize(axes: Axis[]): number {
  return axes.reduce((n, a) => n * a.length, 1)
}

/** Points of the grid of a space at this resolution. */
export function gridPointCount(
  space: ParamSpace,
  pointsPerDim: number,
  simplexStep: number = DEFAULT_SIMPLEX_STEP,
): number {
  return gridSize(gridAxes(space, pointsPerDim, simplexStep))
}

/**
 * The most grid points a study with these limits can evaluate: every grid trial runs at the full
 * budget, so it costs one unit of a --budget (in units of the maximum budget). Undefined: no limit.
 */
export function gridTrialLimit(maxTrials: number | undefined, maxBudget: number | undefined): number | undefined {
  const limits = [maxTrials, maxBudget === undefined ? undefined : Math.floor(maxBudget + BUDGET_ROUNDING)].filter(
    (x): x is number => x !== undefined,
  )
  return limits.length ? Math.min(...limits) : undefined
}

/** Tolerance when a --budget in full-budget units counts grid trials (3 x (1/3) is 1). */
const BUDGET_ROUNDING = 1e-9

/**
 * Refuses a grid study that could not evaluate its whole grid within its limits, unless a subset
 * was asked for: a grid is the grid it claims, not a random sample of it.
 */
export function checkGridLimit(
  where: string,
  points: number,
  pointsPerDim: number,
  limit: number | undefined,
  subset: boolean | undefined,
  resuming = false,
): void {
  if (points > MAX_GRID_POINTS)
    throw new InputError(
      where,
      `at most ${MAX_GRID_POINTS} points (lower --grid-points, or take parameters out with --fix)`,
      `${points} points at ${pointsPerDim} values per numeric parameter`,
    )
  if (subset || limit === undefined || limit >= points) return
  throw new InputError(
    where,
    resuming
      ? `a trial limit (--trials, or --budget in full-budget units) of at least ${points}, the grid's size at ${pointsPerDim} values per numeric parameter (the study was not created with --grid-subset; or resume without new limits)`
      : `a trial limit (--trials, or --budget in full-budget units) of at least ${points}, the grid's size at ${pointsPerDim} values per numeric parameter (or --grid-subset to evaluate a seeded random ${limit} of its points)`,
    String(limit),
  )
}

/** How much of its grid a grid study evaluated (finished trials, ok or failed, each a distinct grid point). */
export interface GridCoverage {
  readonly points: number
  readonly pointsPerDim: number
  readonly evaluated: number
  /** Every point of the grid has a finished trial. */
  readonly complete: boolean
  /** The study was created to evaluate a seeded random subset (--grid-subset). */
  readonly subset: boolean
}

export function gridCoverage(
  points: number,
  pointsPerDim: number,
  finishedConfigIds: Iterable<string>,
  subset: boolean | undefined,
): GridCoverage {
  const evaluated = new Set(finishedConfigIds).size
  return {points, pointsPerDim, evaluated, complete: evaluated >= points, subset: subset === true}
}

/** One line: `grid: evaluated 10 of 65,536 points (2 values per numeric parameter), a seeded random subset`. */
export function gridCoverageLine(c: GridCoverage): string {
  const what = c.complete
    ? 'the whole grid'
    : c.subset
      ? 'a seeded random subset (--grid-subset)'
      : 'INCOMPLETE: stopped before the whole grid'
  return `grid: evaluated ${c.evaluated.toLocaleString('en-US')} of ${c.points.toLocaleString('en-US')} points (${c.pointsPerDim} values per numeric parameter), ${what}`
}

/** The largest points-per-dimension (>= 2) whose grid has at most maxPoints points. */
export function autoPointsPerDim(space: ParamSpace, maxPoints: number, simplexStep: number): number {
  let points = 2
  const hasNumeric = space.params.some((p) => p.kind === 'float' || p.kind === 'int')
  if (!hasNumeric) return points
  while (gridSize(gridAxes(space, points + 1, simplexStep)) <= maxPoints && points < maxPoints) points++
  return points
}

export class GridOptimizer implements Optimizer {
  readonly name = 'grid'
  readonly axes: Axis[]
  readonly size: number
  readonly pointsPerDim: number
  private readonly order: Uint32Array | undefined
  private nextTrialId = 0
  private readonly pending = new Set<number>()

  constructor(
    space: ParamSpace,
    private readonly options: GridOptions,
  ) {
    new Encoding(space) // validates the table
    const step = options.simplexStep ?? DEFAULT_SIMPLEX_STEP
    this.pointsPerDim =
      options.pointsPerDim ??
      (options.maxPoints !== undefined ? autoPointsPerDim(space, options.maxPoints, step) : DEFAULT_POINTS_PER_DIM)
    this.axes = gridAxes(space, this.pointsPerDim, step)
    this.size = gridSize(this.axes)
    if (this.size > MAX_GRID_POINTS)
      throw new InputError('grid', `at most ${MAX_GRID_POINTS} points (lower --grid-points)`, String(this.size))
    if ((options.order ?? 'shuffled') === 'shuffled') {
      const order = new Uint32Array(this.size)
      for (let i = 0; i < this.size; i++) order[i] = i
      const rng = new Rng(options.seed)
      for (let i = this.size - 1; i > 0; i--) {
        const j = rng.int(i + 1)
        const t = order[i]
        order[i] = order[j]
        order[j] = t
      }
      this.order = order
    }
  }

  /** The configuration at a grid index (mixed radix, the last axis fastest). */
  pointAt(index: number): Config {
    const picks = new Array<number>(this.axes.length)
    let rest = index
    for (let a = this.axes.length - 1; a >= 0; a--) {
      picks[a] = rest % this.axes[a].length
      rest = Math.floor(rest / this.axes[a].length)
    }
    const config: Config = {}
    this.axes.forEach((axis, a) => Object.assign(config, axis[picks[a]]))
    return config
  }

  ask(): Trial | 'done' {
    if (this.nextTrialId >= this.size) return 'done'
    const id = this.nextTrialId++
    this.pending.add(id)
    const index = this.order ? this.order[id] : id
    return {
      id,
      configId: `g${index}`,
      config: this.pointAt(index),
      budget: this.options.budget ?? 1,
      info: {grid_index: index},
    }
  }

  tell(trialId: number, _result: TrialResult): void {
    if (!this.pending.delete(trialId)) throw new RangeError(`grid: trial ${trialId} was never asked or was told twice`)
  }
}
