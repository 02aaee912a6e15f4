/**
 * How each tuned parameter becomes a set of bandit arms. Every dimension (a scalar parameter or
 * one member of a simplex group) is cut into at most ARMS_PER_PARAM arms:
 * - float: the range cut into equal bins in the parameter's own scale (log-scale parameters in
 *   log space); an arm plays the bin's centre in that scale (the geometric centre on a log scale).
 * - int: one arm per value when the range holds at most ARMS_PER_PARAM integers; otherwise the
 *   integer nearest each bin's centre (in the parameter's scale), nudged so the values stay
 *   distinct (narrow log-scale bins near the low end would otherwise round to the same integer).
 * - categorical: one arm per choice.
 * - simplex member: the member's feasible range [floor, 1 - (m-1) floor] cut into equal bins.
 *   Members are sampled independently, then the sampled weights are projected (Euclidean) onto
 *   the floored simplex {w_i >= floor, sum w = 1}. Feedback is credited to the bin each member
 *   drew, not to the projected weight: the projection couples the members, so the credit is an
 *   approximation, but it keeps every member an ordinary independent bandit.
 */
import type {Choice, Config, ParamSpace, ParamSpec, SimplexGroup} from '../space/types.js'
import {InputError} from '../util/errors.js'
import {projectFlooredSimplex} from '../util/simplex.js'

/** Bins per parameter range (the issue: "the parameter's range cut into 10 bins"). */
export const ARMS_PER_PARAM = 10

/** One bandit dimension: a scalar parameter or a simplex member. */
export interface Dimension {
  /** The configuration key this dimension sets. */
  readonly key: string
  /** The parameter (or simplex group) it belongs to. */
  readonly param: ParamSpec
  /** The value each arm plays. */
  readonly values: readonly Choice[]
  /** The arm whose bin holds a value (used to place the profile prior). */
  binOf(value: Choice): number
  /** Position of each arm on [0, 1] in the parameter's scale (categoricals: evenly spaced). */
  readonly positions: readonly number[]
}

/**
 * Where a played value sits in its dimension's range, on [0, 1] in the parameter's scale
 * (simplex members within [floor, 1 - (m-1) floor]; categoricals at their arm's position).
 */
export function unitOf(dim: Dimension, value: Choice): number {
  const p = dim.param
  if (p.kind === 'float' || p.kind === 'int') return toUnit(value as number, p.low, p.high, p.scale)
  if (p.kind === 'simplex') return toUnit(value as number, p.floor, 1 - (p.members.length - 1) * p.floor, 'linear')
  return dim.positions[dim.binOf(value)]
}

/** Maps a value to [0, 1] in a scale: linear, or the position of log(value) between log(low) and log(high). */
function toUnit(value: number, low: number, high: number, scale: 'linear' | 'log'): number {
  return scale === 'log' ? Math.log(value / low) / Math.log(high / low) : (value - low) / (high - low)
}

function fromUnit(unit: number, low: number, high: number, scale: 'linear' | 'log'): number {
  return scale === 'log' ? low * Math.pow(high / low, unit) : low + unit * (high - low)
}

/** Centre of bin i of n on [0, 1]. */
function binCentre(i: number, n: number): number {
  return (i + 0.5) / n
}

function clampBin(i: number, n: number): number {
  return i < 0 ? 0 : i >= n ? n - 1 : i
}

function nearestPosition(positions: readonly number[], unit: number): number {
  let best = 0
  for (let i = 1; i < positions.length; i++)
    if (Math.abs(positions[i] - unit) < Math.abs(positions[best] - unit)) best = i
  return best
}

function floatDimension(key: string, param: ParamSpec & {kind: 'float'}): Dimension {
  const n = ARMS_PER_PARAM
  const positions = Array.from({length: n}, (_, i) => binCentre(i, n))
  const values = positions.map((u) => fromUnit(u, param.low, param.high, param.scale))
  return {
    key,
    param,
    values,
    positions,
    binOf: (v) => clampBin(Math.floor(toUnit(v as number, param.low, param.high, param.scale) * n), n),
  }
}

function intDimension(key: string, param: ParamSpec & {kind: 'int'}): Dimension {
  const count = param.high - param.low + 1
  let values: number[]
  if (count <= ARMS_PER_PARAM) {
    values = Array.from({length: count}, (_, i) => param.low + i)
  } else {
    values = Array.from({length: ARMS_PER_PARAM}, (_, i) =>
      Math.round(fromUnit(binCentre(i, ARMS_PER_PARAM), param.low, param.high, param.scale)),
    )
    // Keep the values strictly increasing inside [low, high]: push duplicates up, then pull
    // any overflow at the top back down (there is room: count > ARMS_PER_PARAM).
    for (let i = 1; i < values.length; i++) if (values[i] <= values[i - 1]) values[i] = values[i - 1] + 1
    for (let i = values.length - 1; i >= 0; i--) {
      const cap = i === values.length - 1 ? param.high : values[i + 1] - 1
      if (values[i] > cap) values[i] = cap
    }
  }
  const positions = values.map((v) => toUnit(v, param.low, param.high, param.scale))
  return {
    key,
    param,
    values,
    positions,
    binOf: (v) => nearestPosition(positions, toUnit(v as number, param.low, param.high, param.scale)),
  }
}

function categoricalDimension(key: string, param: ParamSpec & {kind: 'categorical'}): Dimension {
  const values = [...param.choices]
  const positions = values.map((_, i) => (values.length === 1 ? 0.5 : i / (values.length - 1)))
  return {key, param, values, positions, binOf: (v) => Math.max(0, values.indexOf(v))}
}

function simplexMemberDimension(key: string, group: SimplexGroup): Dimension {
  const n = ARMS_PER_PARAM
  const low = group.floor
  const high = 1 - (group.members.length - 1) * group.floor
  const positions = Array.from({length: n}, (_, i) => binCentre(i, n))
  const values = positions.map((u) => fromUnit(u, low, high, 'linear'))
  return {
    key,
    param: group,
    values,
    positions,
    binOf: (v) => clampBin(Math.floor(toUnit(v as number, low, high, 'linear') * n), n),
  }
}

/**
 * The bandit dimensions of a space, in table order. `tuned` restricts them to the named parameters
 * (a simplex group by its group name); the others stay at the profile's value.
 */
export function dimensionsOf(space: ParamSpace, tuned?: readonly string[]): Dimension[] {
  if (tuned) {
    for (const name of tuned)
      if (!space.params.some((p) => p.name === name))
        throw new InputError(`tuned parameters: ${name}`, `a parameter of space ${space.id}`, 'an unknown name')
  }
  const dims: Dimension[] = []
  for (const p of space.params) {
    if (tuned && !tuned.includes(p.name)) continue
    if (p.kind === 'float') dims.push(floatDimension(p.name, p))
    else if (p.kind === 'int') dims.push(intDimension(p.name, p))
    else if (p.kind === 'categorical') dims.push(categoricalDimension(p.name, p))
    else for (const m of p.members) dims.push(simplexMemberDimension(m.name, p))
  }
  return dims
}

export {projectFlooredSimplex}

/**
 * The configuration an arm choice plays: the base configuration (the profile) with every tuned
 * dimension set to its arm's value, simplex groups projected back onto their floored simplex.
 */
export function configFromArms(base: Config, dims: readonly Dimension[], arms: ArrayLike<number>): Config {
  const config: Config = {...base}
  const groups = new Set<SimplexGroup>()
  for (let d = 0; d < dims.length; d++) {
    const dim = dims[d]
    config[dim.key] = dim.values[arms[d]]
    if (dim.param.kind === 'simplex') groups.add(dim.param)
  }
  for (const group of groups) {
    const keys = group.members.map((m) => m.name)
    const projected = projectFlooredSimplex(
      keys.map((k) => config[k] as number),
      group.floor,
    )
    keys.forEach((k, i) => (config[k] = projected[i]))
  }
  return config
}
