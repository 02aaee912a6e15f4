/** How a new tenant learns (TenantSpec: the snake_case fields of POST /tenants and kt online init), checked and resolved. */
import {DEFAULT_FEEDBACK, DEFAULT_SAMPLER, DEFAULT_LEVELS, type BanditSettings} from './bandit.js'
import {MAX_PRIOR_STRENGTH} from './prior.js'
import {MAX_DECAY_EVERY_QUERIES, forgettingDefaults} from './forgetting.js'
import {spaceById} from './spaces.js'
import {MAX_IMPLICIT_WINDOW_MS} from './tenant.js'
import {OnlineError} from './online-error.js'
import {defaultConfig, onlineTuned} from '../space/space.js'
import type {Config, ParamSpace} from '../space/types.js'
import {describeValue} from '../util/errors.js'

/** How a new tenant learns; every field optional (the CLI's `kt online init` defaults). */
export interface TenantSpec {
  /** Parameter space id (default `retrieval`). */
  space?: string
  /** The prior: a configuration of the space (e.g. a deployed profile's `config`); default the space's defaults. */
  profile?: Config
  levels?: number
  sampler?: 'logit' | 'gaussian' | 'exact'
  forgetting?: 'periodic' | 'adaptive' | 'none'
  decay_every?: number
  decay_fraction?: number
  feedback?: 'implicit' | 'labels'
  implicit_window_ms?: number
  prior_strength?: number
  /** Parameters to tune (default: those the space's table marks `online`; none marked: all). */
  tuned?: string[]
  /** One set of bandits per query type (the type named in each choose). */
  per_type?: boolean
  seed?: number
}

const SPEC_KEYS = new Set([
  'space',
  'profile',
  'levels',
  'sampler',
  'forgetting',
  'decay_every',
  'decay_fraction',
  'feedback',
  'implicit_window_ms',
  'prior_strength',
  'tuned',
  'per_type',
  'seed',
])

/** The space, prior, settings and seed a spec describes (`space`: the space when the caller has it, e.g. an engine file's); errors name `where` and the field. */
export function resolveSpec(
  spec: TenantSpec,
  where = 'tenant spec',
  dir?: string,
  known?: ParamSpace,
): {space: ParamSpace; profile: Config; settings: BanditSettings; seed: number} {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec))
    throw new OnlineError('bad_request', where, 'an object', describeValue(spec))
  for (const key of Object.keys(spec))
    if (!SPEC_KEYS.has(key))
      throw new OnlineError(
        'bad_request',
        `${where}: ${key}`,
        `one of ${[...SPEC_KEYS].join(', ')}`,
        'an unknown field',
      )
  const field = <T>(key: keyof TenantSpec, ok: (v: unknown) => boolean, expected: string): T | undefined => {
    const v = spec[key]
    if (v === undefined) return undefined
    if (!ok(v)) throw new OnlineError('bad_request', `${where}: ${key}`, expected, describeValue(v))
    return v as T
  }
  const isInt = (v: unknown): boolean => Number.isInteger(v)
  const id = field<string>('space', (v) => typeof v === 'string', 'a space id')
  if (known && id !== undefined && id !== known.id)
    throw new OnlineError('bad_request', `${where}: space`, `the engine file's space ${known.id}`, describeValue(id))
  const space = known ?? spaceById(id ?? 'retrieval', `${where}: space`, dir)
  const profile =
    field<Config>(
      'profile',
      (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
      'a configuration object',
    ) ?? defaultConfig(space)
  const kind =
    field<'periodic' | 'adaptive' | 'none'>(
      'forgetting',
      (v) => v === 'periodic' || v === 'adaptive' || v === 'none',
      'periodic, adaptive or none',
    ) ?? 'periodic'
  const forgetting = forgettingDefaults(kind)
  const every = field<number>(
    'decay_every',
    (v) => isInt(v) && (v as number) >= 1 && (v as number) <= MAX_DECAY_EVERY_QUERIES,
    `an integer number of queries in 1..${MAX_DECAY_EVERY_QUERIES} (MAX_DECAY_EVERY_QUERIES; forgetting none never decays)`,
  )
  const fraction = field<number>(
    'decay_fraction',
    (v) => typeof v === 'number' && v > 0 && v < 1,
    'a fraction in (0, 1)',
  )
  if (every !== undefined || fraction !== undefined) {
    if (forgetting.kind !== 'periodic')
      throw new OnlineError(
        'bad_request',
        `${where}: decay_every/decay_fraction`,
        'them only with forgetting periodic',
        `forgetting ${forgetting.kind}`,
      )
    if (every !== undefined) forgetting.every = every
    if (fraction !== undefined) forgetting.fraction = fraction
  }
  const tuned =
    field<string[]>(
      'tuned',
      (v) => Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string'),
      'a non-empty array of parameter names',
    ) ?? onlineTuned(space)
  const settings: BanditSettings = {
    levels: field<number>('levels', isInt, 'an integer') ?? DEFAULT_LEVELS,
    sampler:
      field<'logit' | 'gaussian' | 'exact'>(
        'sampler',
        (v) => v === 'logit' || v === 'gaussian' || v === 'exact',
        'logit, gaussian or exact',
      ) ?? DEFAULT_SAMPLER,
    forgetting,
    tuned,
    feedback:
      field<'implicit' | 'labels'>('feedback', (v) => v === 'implicit' || v === 'labels', 'implicit or labels') ??
      DEFAULT_FEEDBACK,
  }
  const prior = field<number>(
    'prior_strength',
    (v) => isInt(v) && (v as number) >= 0 && (v as number) <= MAX_PRIOR_STRENGTH,
    `an integer in 0..${MAX_PRIOR_STRENGTH} (MAX_PRIOR_STRENGTH: beyond it float64 cannot tell the profile's arms apart)`,
  )
  if (prior !== undefined) settings.priorStrength = prior
  const window = field<number>(
    'implicit_window_ms',
    (v) => isInt(v) && (v as number) >= 1 && (v as number) <= MAX_IMPLICIT_WINDOW_MS,
    `a whole number of milliseconds in 1..${MAX_IMPLICIT_WINDOW_MS} (MAX_IMPLICIT_WINDOW_MS, a day)`,
  )
  if (window !== undefined) settings.implicitWindowMs = window
  if (field<boolean>('per_type', (v) => typeof v === 'boolean', 'true or false')) settings.perType = true
  const seed =
    field<number>(
      'seed',
      (v) => isInt(v) && (v as number) >= 0 && (v as number) <= 0xffffffff,
      'an integer in 0..2^32-1',
    ) ?? DEFAULT_SEED
  return {space, profile, settings, seed}
}

/** The project's default seed. */
export const DEFAULT_SEED = 42
