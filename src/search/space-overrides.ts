/**
 * Narrowing a ParamSpace for one search: `--fix NAME=VALUE` takes a parameter out of the search at a
 * value, `--range NAME=LOW:HIGH` changes a numeric range, `--floor GROUP=F` changes a simplex floor.
 * The result is a new table (the one ParamSpace type, without the bandits' `online` column, which
 * no search reads) plus the fixed values; every mistake is a one-line error naming the flag and the
 * parameter.
 */
import type {Config, ParamSpace, ParamSpec} from '../space/index.js'
import {checkSpace, configKeys, SIMPLEX_SUM_TOLERANCE, withoutOnline} from '../space/index.js'
import {InputError} from '../util/errors.js'

export interface SpaceOverrides {
  /** NAME=VALUE */
  readonly fix?: readonly string[]
  /** NAME=LOW:HIGH */
  readonly range?: readonly string[]
  /** GROUP=FLOOR */
  readonly floor?: readonly string[]
}

function splitAssignment(text: string, flag: string): [string, string] {
  const eq = text.indexOf('=')
  if (eq <= 0) throw new InputError(flag, 'NAME=VALUE', JSON.stringify(text))
  return [text.slice(0, eq).trim(), text.slice(eq + 1).trim()]
}

function parseNumber(text: string, where: string): number {
  const value = text === '' ? NaN : Number(text)
  if (!Number.isFinite(value)) throw new InputError(where, 'a finite number', JSON.stringify(text))
  return value
}

function unknown(space: ParamSpace, flag: string, name: string): InputError {
  return new InputError(
    `${flag} ${name}`,
    `a parameter of space ${space.id} (${configKeys(space).slice(0, 8).join(', ')}${configKeys(space).length > 8 ? ', ...' : ''})`,
    'an unknown name',
  )
}

export function applyOverrides(space: ParamSpace, overrides: SpaceOverrides): {space: ParamSpace; fixed: Config} {
  const params: ParamSpec[] = [...space.params]
  const indexOf = (name: string): number => params.findIndex((p) => p.name === name)
  for (const text of overrides.range ?? []) {
    const [name, value] = splitAssignment(text, '--range')
    const i = indexOf(name)
    if (i < 0) throw unknown(space, '--range', name)
    const p = params[i]
    if (p.kind !== 'float' && p.kind !== 'int') throw new InputError(`--range ${name}`, 'a numeric parameter', p.kind)
    const parts = value.split(':')
    if (parts.length !== 2) throw new InputError(`--range ${name}`, 'LOW:HIGH', JSON.stringify(value))
    const low = parseNumber(parts[0], `--range ${name} low`)
    const high = parseNumber(parts[1], `--range ${name} high`)
    if (!(low < high)) throw new InputError(`--range ${name}`, 'a non-empty range with LOW < HIGH', `${low}:${high}`)
    if (p.kind === 'int' && (!Number.isInteger(low) || !Number.isInteger(high)))
      throw new InputError(`--range ${name}`, 'integer bounds', `${low}:${high}`)
    if (p.scale === 'log' && !(low > 0))
      throw new InputError(`--range ${name}`, 'a positive LOW on a log scale', String(low))
    params[i] = {...p, low, high, default: Math.min(high, Math.max(low, p.default))}
  }
  for (const text of overrides.floor ?? []) {
    const [name, value] = splitAssignment(text, '--floor')
    const i = indexOf(name)
    if (i < 0) throw unknown(space, '--floor', name)
    const p = params[i]
    if (p.kind !== 'simplex') throw new InputError(`--floor ${name}`, 'a simplex group', p.kind)
    const floor = parseNumber(value, `--floor ${name}`)
    if (!(floor >= 0) || floor * p.members.length > 1 + SIMPLEX_SUM_TOLERANCE)
      throw new InputError(
        `--floor ${name}`,
        `floors that sum to at most 1 (${p.members.length} x ${floor} = ${floor * p.members.length})`,
        String(floor),
      )
    // Keep the default feasible: mix it with the uniform point until every weight clears the floor.
    params[i] = {...p, floor, members: p.members.map((m) => ({...m, default: 1 / p.members.length}))}
  }
  const fixed: Config = {}
  for (const text of overrides.fix ?? []) {
    const [name, value] = splitAssignment(text, '--fix')
    const i = indexOf(name)
    if (i < 0) {
      if (configKeys(space).includes(name))
        throw new InputError(
          `--fix ${name}`,
          'a scalar parameter (simplex members cannot be fixed one at a time)',
          'a simplex member',
        )
      throw unknown(space, '--fix', name)
    }
    const p = params[i]
    if (p.kind === 'simplex') throw new InputError(`--fix ${name}`, 'a scalar parameter', 'a simplex group')
    if (p.kind === 'categorical') {
      const choice = p.choices.find((c) => String(c) === value)
      if (choice === undefined)
        throw new InputError(`--fix ${name}`, `one of ${p.choices.map(String).join(', ')}`, JSON.stringify(value))
      fixed[name] = choice
    } else {
      const v = parseNumber(value, `--fix ${name}`)
      if (v < p.low || v > p.high || (p.kind === 'int' && !Number.isInteger(v)))
        throw new InputError(
          `--fix ${name}`,
          `${p.kind === 'int' ? 'an integer' : 'a number'} in [${p.low}, ${p.high}]`,
          String(v),
        )
      fixed[name] = v
    }
    params.splice(i, 1)
  }
  if (params.length === 0)
    throw new InputError('--fix', 'at least one parameter left to search', 'every parameter fixed')
  // the searched space carries no `online` column: a study stores it and compares it on a rerun
  const narrowed: ParamSpace = withoutOnline({id: space.id, params})
  checkSpace(narrowed)
  return {space: narrowed, fixed}
}
