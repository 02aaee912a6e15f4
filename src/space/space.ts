import {InputError, describeValue} from '../util/errors.js'
import {checkEnvName} from './env.js'
import {
  type Config,
  type ParamSpace,
  type ParamSpec,
  type SimplexGroup,
  type ScalarParam,
  SIMPLEX_SUM_TOLERANCE,
} from './types.js'

/** Every name a configuration of this space carries, in table order. */
export function configKeys(space: ParamSpace): string[] {
  const keys: string[] = []
  for (const p of space.params) {
    if (p.kind === 'simplex') for (const m of p.members) keys.push(m.name)
    else keys.push(p.name)
  }
  return keys
}

export function defaultConfig(space: ParamSpace): Config {
  const config: Config = {}
  for (const p of space.params) {
    if (p.kind === 'simplex') for (const m of p.members) config[m.name] = m.default
    else config[p.name] = p.default
  }
  return config
}

/**
 * The parameters the per-tenant bandits tune by default: those the table marks `online`, in table
 * order (a simplex group by its name); undefined when none is marked, which means every parameter.
 */
export function onlineTuned(space: ParamSpace): string[] | undefined {
  const names = space.params.filter((p) => p.online === true).map((p) => p.name)
  return names.length > 0 ? names : undefined
}

/**
 * The table without its `online` column: what search and configuration checks depend on. A study
 * stores this as its searched space and an engine profile's fingerprint hashes it, so marking which
 * parameters the bandits tune neither stops a study from continuing nor invalidates a profile.
 */
export function withoutOnline(space: ParamSpace): ParamSpace {
  if (!space.params.some((p) => p.online !== undefined)) return space
  return {...space, params: space.params.map(({online: _online, ...rest}) => rest as ParamSpec)}
}

/** Checks the table itself: non-empty ranges, defaults inside them, floors that fit. */
export function checkSpace(space: ParamSpace): void {
  const seen = new Set<string>()
  for (const p of space.params) {
    const where = `parameter space ${space.id}: ${p.name}`
    if (p.online !== undefined && typeof p.online !== 'boolean')
      throw new InputError(`${where}: online`, 'true or false', describeValue(p.online))
    for (const key of p.kind === 'simplex' ? p.members.map((m) => m.name) : [p.name]) {
      if (seen.has(key)) throw new InputError(where, 'unique parameter names', `duplicate ${key}`)
      seen.add(key)
    }
    for (const env of p.kind === 'simplex' ? p.members.map((m) => m.env) : [p.env]) {
      const problem = checkEnvName(env)
      if (problem) throw new InputError(`${where}: env`, problem, describeValue(env))
    }
    if (p.kind === 'float' || p.kind === 'int') {
      if (!(p.low < p.high)) throw new InputError(where, 'a range with low < high', `[${p.low}, ${p.high}]`)
      if (p.scale === 'log' && !(p.low > 0))
        throw new InputError(where, 'a positive lower bound on a log scale', String(p.low))
      if (p.kind === 'int' && (!Number.isInteger(p.low) || !Number.isInteger(p.high)))
        throw new InputError(where, 'integer bounds', `[${p.low}, ${p.high}]`)
    } else if (p.kind === 'categorical') {
      if (p.choices.length === 0) throw new InputError(where, 'at least one choice', 'none')
    } else {
      if (p.members.length < 2) throw new InputError(where, 'at least two simplex members', String(p.members.length))
      if (!(p.floor >= 0) || p.floor * p.members.length > 1 + SIMPLEX_SUM_TOLERANCE)
        throw new InputError(where, `floors that sum to at most 1 (${p.members.length} x floor <= 1)`, String(p.floor))
    }
  }
  validateConfig(space, defaultConfig(space), `parameter space ${space.id} defaults`)
}

/**
 * Validates a full configuration against the space; `where` names the source (a file, env).
 * Unknown names are errors: a typo must not silently leave a parameter at its default.
 */
export function validateConfig(
  space: ParamSpace,
  config: Config,
  where: string,
  label: (name: string) => string = (n) => n,
): void {
  const known = new Set(configKeys(space))
  for (const key of Object.keys(config)) {
    if (!known.has(key)) throw new InputError(`${where}: ${key}`, `a parameter of space ${space.id}`, 'an unknown name')
  }
  for (const p of space.params) {
    if (p.kind === 'simplex') validateSimplex(p, config, where, label)
    else validateScalar(p, config[p.name], where, label)
  }
}

function validateScalar(p: ScalarParam, value: unknown, where: string, label: (name: string) => string): void {
  const field = `${where}: ${label(p.name)}`
  if (p.kind === 'categorical') {
    if (!p.choices.includes(value as never))
      throw new InputError(field, `one of ${p.choices.map(String).join(', ')}`, describeValue(value))
    return
  }
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new InputError(field, `a finite number in [${p.low}, ${p.high}]`, describeValue(value))
  if (value < p.low || value > p.high) throw new InputError(field, `a number in [${p.low}, ${p.high}]`, String(value))
  if (p.kind === 'int' && !Number.isInteger(value)) throw new InputError(field, 'an integer', String(value))
}

function validateSimplex(p: SimplexGroup, config: Config, where: string, label: (name: string) => string): void {
  let sum = 0
  for (const m of p.members) {
    const value = config[m.name]
    const field = `${where}: ${label(m.name)}`
    if (typeof value !== 'number' || !Number.isFinite(value))
      throw new InputError(field, 'a finite number in [0, 1]', describeValue(value))
    if (value < p.floor - SIMPLEX_SUM_TOLERANCE || value > 1)
      throw new InputError(field, `a weight in [${p.floor}, 1]`, String(value))
    sum += value
  }
  if (Math.abs(sum - 1) > SIMPLEX_SUM_TOLERANCE)
    throw new InputError(
      `${where}: ${p.members.map((m) => label(m.name)).join(' + ')}`,
      `weights summing to 1 within ${SIMPLEX_SUM_TOLERANCE}`,
      String(sum),
    )
}

/** The env-var assignments that deploy a configuration, in table order. */
export function configToEnv(space: ParamSpace, config: Config): Array<[string, string]> {
  const out: Array<[string, string]> = []
  for (const p of space.params) {
    if (p.kind === 'simplex') for (const m of p.members) out.push([m.env, formatValue(config[m.name])])
    else out.push([p.env, formatValue(config[p.name])])
  }
  return out
}

/** Shortest text that parses back to exactly the same number (JS number printing round-trips). */
function formatValue(value: unknown): string {
  return String(value)
}

/**
 * Reads a configuration from environment variables: each variable that is set overrides the
 * default; an unparseable or out-of-range value is an error naming the variable.
 */
export function configFromEnv(space: ParamSpace, env: Record<string, string | undefined>): Config {
  const config = defaultConfig(space)
  for (const p of space.params) {
    if (p.kind === 'simplex') {
      const anySet = p.members.some((m) => env[m.env] !== undefined)
      if (!anySet) continue
      for (const m of p.members) {
        const raw = env[m.env]
        if (raw === undefined)
          throw new InputError(
            `environment: ${m.env}`,
            `all of ${p.members.map((x) => x.env).join(', ')} set together`,
            'unset',
          )
        config[m.name] = parseNumberVar(m.env, raw)
      }
    } else {
      const raw = env[p.env]
      if (raw === undefined) continue
      config[p.name] = p.kind === 'categorical' ? parseChoice(p.env, raw, p.choices) : parseNumberVar(p.env, raw)
    }
  }
  validateConfig(space, config, 'environment', (name) => envName(space, name))
  return config
}

function parseNumberVar(name: string, raw: string): number {
  const trimmed = raw.trim()
  const value = trimmed === '' ? Number.NaN : Number(trimmed)
  if (!Number.isFinite(value)) throw new InputError(`environment: ${name}`, 'a finite number', describeValue(raw))
  return value
}

function parseChoice(
  name: string,
  raw: string,
  choices: readonly (string | number | boolean)[],
): string | number | boolean {
  for (const c of choices) if (String(c) === raw.trim()) return c
  throw new InputError(`environment: ${name}`, `one of ${choices.map(String).join(', ')}`, describeValue(raw))
}

/** The env var that carries a parameter or simplex member. */
export function envName(space: ParamSpace, name: string): string {
  for (const p of space.params) {
    if (p.kind === 'simplex') {
      const m = p.members.find((x) => x.name === name)
      if (m) return m.env
    } else if (p.name === name) return p.env
  }
  return name
}

/** True if a scalar parameter's condition (if any) holds in the configuration. */
function isActive(param: ParamSpec, config: Config): boolean {
  if (param.kind === 'simplex' || !param.condition) return true
  return param.condition.values.some((v) => v === config[param.condition!.param])
}

/**
 * The configuration with every inactive conditional parameter at its default: what an engine is
 * given and what identifies the configuration.
 */
export function activeConfig(space: ParamSpace, config: Config): Config {
  if (!space.params.some((p) => p.kind !== 'simplex' && p.condition)) return config
  const out: Config = {...config}
  for (const p of space.params) if (p.kind !== 'simplex' && !isActive(p, config)) out[p.name] = p.default
  return out
}
