/**
 * A parameter space is one declarative table. Search, bandits, profiles, env-var loading and the
 * generated docs all read it; there is no second list of parameters anywhere. Its columns: name,
 * kind, range or choices, scale, default, env var, description, condition, and `online` (whether
 * the per-tenant bandits tune the parameter by default).
 */
type Scale = 'linear' | 'log'

interface Described {
  /** Dotted identifier, e.g. `bm25.k1` or `importance.decay`. */
  readonly name: string
  /** Human description, used in docs and --help output. */
  readonly description: string
  /**
   * The per-tenant bandits tune this parameter (a simplex group: all its members) by default
   * (`kt online init` without --tuned). A space that marks none tunes every parameter. Absent
   * means false; search, profiles and configurations ignore it (withoutOnline).
   */
  readonly online?: boolean
}

/**
 * A condition on a scalar parameter: it is active only while another (categorical or int)
 * parameter takes one of `values`. Inactive parameters keep their default (activeConfig), so an
 * engine never sees a value it would ignore and equal configurations stay equal.
 */
export interface Condition {
  readonly param: string
  readonly values: readonly Choice[]
}

interface Conditional {
  readonly condition?: Condition
}

export interface FloatParam extends Described, Conditional {
  readonly kind: 'float'
  readonly low: number
  readonly high: number
  readonly scale: Scale
  readonly default: number
  /** Environment variable that sets this parameter in a deployed profile. */
  readonly env: string
}

export interface IntParam extends Described, Conditional {
  readonly kind: 'int'
  readonly low: number
  readonly high: number
  readonly scale: Scale
  readonly default: number
  readonly env: string
}

export type Choice = string | number | boolean

export interface CategoricalParam extends Described, Conditional {
  readonly kind: 'categorical'
  readonly choices: readonly Choice[]
  readonly default: Choice
  readonly env: string
}

/** One coordinate of a simplex group. */
export interface SimplexMember {
  readonly name: string
  readonly env: string
  readonly description: string
  readonly default: number
}

/**
 * Weights that sum to 1 with each at least `floor` (the floored simplex). Members appear in a
 * configuration under their own names, so a configuration stays a flat record.
 */
export interface SimplexGroup extends Described {
  readonly kind: 'simplex'
  readonly floor: number
  readonly members: readonly SimplexMember[]
}

export type ScalarParam = FloatParam | IntParam | CategoricalParam
export type ParamSpec = ScalarParam | SimplexGroup

export interface ParamSpace {
  /** Short identifier of the space, e.g. `importance` or `retrieval`. */
  readonly id: string
  readonly params: readonly ParamSpec[]
}

/** A configuration: every scalar parameter and every simplex member by name. */
export type Config = Record<string, Choice>

/** Tolerance for "sums to 1" checks on simplex groups. */
export const SIMPLEX_SUM_TOLERANCE = 1e-9
