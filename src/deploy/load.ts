/**
 * THE profile loader: `kt deploy`, `kt rollback`, `kt eval --profile`, `kt online init --profile`,
 * `kt bench engine --profile`, `kt rerank log --profile` and the study all read profiles here.
 * It reads the current format (kt_profile 2) and upgrades the older files kt wrote (kt_profile 1,
 * routed profiles with `kt_routed_profile` or a `base` key), so no older file is silently read as
 * something else: every key is known, every value checked against its space.
 */
import {existsSync} from 'node:fs'
import {basename} from 'node:path'
import type {ParamSpace} from '../space/types.js'
import {defaultConfig, validateConfig} from '../space/space.js'
import {InputError, describeValue} from '../util/errors.js'
import {readJson} from '../util/fs.js'
import {
  checkProfile,
  envMap,
  notValidated,
  spaceFingerprint,
  validationFrom,
  NAME_PATTERN,
  PROFILE_FORMAT_VERSION,
  PROFILE_KINDS,
  ROLLOUT_STAGES,
  type Profile,
  type ProfileKind,
  type ProfileValidation,
} from './profile.js'
import {KIND_SPACES, ROUTED_QUERY_TYPES, resolveEngineSpace} from './spaces.js'

export interface LoadedProfile {
  readonly profile: Profile
  readonly space: ParamSpace
  readonly file: string
  /** How an older file was read (e.g. "kt_profile 1"), or null for a current one. */
  readonly upgradedFrom: string | null
}

export interface LoadOptions {
  /** Kinds the caller accepts (e.g. eval: retrieval and routed); others are a one-line error. */
  readonly kinds?: readonly ProfileKind[]
  /** The space of an engine profile when the caller already knows it. */
  readonly space?: ParamSpace
  /**
   * Also accept a plain object of parameter values of this space (missing ones take their defaults):
   * a hand-written configuration for `kt eval`, loaded as a not-validated retrieval profile.
   */
  readonly parametersOf?: ParamSpace
}

/**
 * The word that stands for a space's defaults where a profile file is expected (`kt eval --against
 * defaults`), and the name of the profile kt search writes to roll back to. A file of that name wins.
 */
export const DEFAULTS_PROFILE = 'defaults'

/** The JSON of a profile file, or no parameter values (the defaults) for DEFAULTS_PROFILE when no such file exists. */
export function readProfileValue(file: string): unknown {
  return file === DEFAULTS_PROFILE && !existsSync(file) ? {} : readJson(file)
}

/** Reads and checks a profile file. Errors are one line naming the file and the field. */
export function loadProfile(file: string, options: LoadOptions = {}): LoadedProfile {
  return parseProfile(options.parametersOf ? readProfileValue(file) : readJson(file), file, options)
}

/** Checks a parsed profile value (see loadProfile). */
export function parseProfile(value: unknown, file: string, options: LoadOptions = {}): LoadedProfile {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InputError(file, 'a kt profile (a JSON object with kt_profile)', describeValue(value))
  const obj = value as Record<string, unknown>
  let upgradedFrom: string | null = null
  let current: unknown = value
  if ('kt_profile' in obj && obj.kt_profile === 1) {
    current = upgradeV1(obj, file)
    upgradedFrom = 'kt_profile 1'
  } else if (
    'kt_routed_profile' in obj ||
    (!('kt_profile' in obj) && 'overrides' in obj && ('base' in obj || 'config' in obj))
  ) {
    current = upgradeRouted(obj, file)
    upgradedFrom =
      'kt_routed_profile' in obj
        ? 'kt_routed_profile 1'
        : 'base' in obj
          ? 'a routed profile of kt search (key base)'
          : 'a file of config and overrides'
  } else if (!('kt_profile' in obj)) {
    if (!options.parametersOf)
      throw new InputError(
        `${file}: kt_profile`,
        `a kt profile (kt_profile ${PROFILE_FORMAT_VERSION}, written by kt run or kt search --out)`,
        'a file without kt_profile',
      )
    const entry = configEntry(obj, file)
    current = fromParameters(entry ?? obj, file, options.parametersOf, entry ? `${file}: config` : file)
    upgradedFrom = entry ? 'a file of {config}' : 'a file of parameter values'
  } else if (obj.kt_profile !== PROFILE_FORMAT_VERSION) {
    throw new InputError(
      `${file}: kt_profile`,
      `${PROFILE_FORMAT_VERSION} (or 1, upgraded)`,
      describeValue(obj.kt_profile),
    )
  }
  const head = current as Record<string, unknown>
  const kind = head.kind
  if (typeof kind !== 'string' || !(PROFILE_KINDS as readonly string[]).includes(kind))
    throw new InputError(`${file}: kind`, `one of ${PROFILE_KINDS.join(', ')}`, describeValue(kind))
  if (options.kinds && !options.kinds.includes(kind as ProfileKind))
    throw new InputError(`${file}: kind`, `a ${options.kinds.join(' or ')} profile here`, describeValue(kind))
  const space = spaceFor(kind as ProfileKind, head, file, options)
  const profile = checkProfile(current, file, space, kind === 'routed' ? ROUTED_QUERY_TYPES : undefined)
  return {profile, space, file, upgradedFrom}
}

function spaceFor(kind: ProfileKind, head: Record<string, unknown>, file: string, options: LoadOptions): ParamSpace {
  if (kind !== 'engine') return KIND_SPACES[kind]
  if (options.space) return options.space
  const engine = head.engine as Profile['engine'] | undefined
  if (typeof engine !== 'object' || engine === null || typeof engine.name !== 'string')
    throw new InputError(
      `${file}: engine`,
      'the engine (name, file, space_sha256) of an engine profile',
      describeValue(engine),
    )
  if (!NAME_PATTERN.test(engine.name))
    throw new InputError(
      `${file}: engine.name`,
      'a name of letters, digits, dot, dash or underscore starting with a letter or digit (at most 64)',
      describeValue(engine.name),
    )
  return resolveEngineSpace(engine, file)
}

/** A kt_profile 1 file: kind from its space, metric strings into the validation record and notes. */
function upgradeV1(obj: Record<string, unknown>, file: string): unknown {
  const space = obj.space
  if (space !== 'importance' && space !== 'retrieval')
    throw new InputError(`${file}: space`, 'importance or retrieval (a kt_profile 1 file)', describeValue(space))
  const metricsIn = obj.metrics
  if (typeof metricsIn !== 'object' || metricsIn === null || Array.isArray(metricsIn))
    throw new InputError(`${file}: metrics`, 'an object', describeValue(metricsIn))
  const metrics: Record<string, number | null> = {}
  const notes: string[] = []
  let recorded: unknown
  for (const [k, v] of Object.entries(metricsIn)) {
    if (k === 'validation_passed') recorded = v
    else if (typeof v === 'number' || v === null) metrics[k] = v
    else if (typeof v === 'string') notes.push(`${k}: ${v}`)
    else throw new InputError(`${file}: metrics.${k}`, 'a number, null or text', describeValue(v))
  }
  // kt_profile 1 recorded the verdict as a string ("true", "false", "reference", "not run") without its criteria
  const passed = recorded === 'true' || recorded === true
  const validation: ProfileValidation =
    passed || recorded === 'false' || recorded === false
      ? validationFrom(
          [{id: 'recorded-verdict', metric: 'validation_passed', op: '>=', threshold: 1, value: +passed, passed}],
          [],
          `kt_profile 1: its run recorded validation_passed "${passed}"${passed ? ' without the criteria' : ''}`,
        )
      : notValidated(
          `kt_profile 1: ${recorded === undefined ? 'no validation recorded' : `validation_passed ${JSON.stringify(recorded)}`}`,
        )
  const {kt_profile: _v, metrics: _m, ...rest} = obj
  return {
    kt_profile: PROFILE_FORMAT_VERSION,
    kind: space,
    ...rest,
    engine: null,
    env: envMap(KIND_SPACES[space]),
    metrics,
    notes,
    validation,
    leakage: [],
  }
}

/** A routed profile of an older kt: `config` (kt_routed_profile 1) or `base` (kt search --per-type --out) plus overrides. */
function upgradeRouted(obj: Record<string, unknown>, file: string): unknown {
  const known = new Set([
    'kt_routed_profile',
    'space',
    'source_run',
    'config',
    'base',
    'overrides',
    'per_type',
    'min_gain',
  ])
  for (const k of Object.keys(obj))
    if (!known.has(k))
      throw new InputError(
        `${file}: ${k}`,
        `no unknown fields in a routed profile (${[...known].join(', ')})`,
        'an unknown field',
      )
  if ('config' in obj === 'base' in obj)
    throw new InputError(
      `${file}: config`,
      'the base configuration (config, or base in kt search files), exactly once',
      'config' in obj ? 'both config and base' : 'neither',
    )
  if (obj.space !== undefined && obj.space !== 'retrieval')
    throw new InputError(`${file}: space`, '"retrieval"', describeValue(obj.space))
  const sourceRun = typeof obj.source_run === 'string' ? obj.source_run : 'unknown'
  const notes =
    obj.per_type === undefined ? [] : ['upgraded from an older routed profile; per-type scores kept in routing']
  return {
    kt_profile: PROFILE_FORMAT_VERSION,
    kind: 'routed',
    name: 'routed',
    space: 'retrieval',
    engine: null,
    // a partial base takes the defaults for the rest (an unknown name is still an error)
    config: isObject(obj.config ?? obj.base)
      ? {...defaultConfig(KIND_SPACES.routed), ...((obj.config ?? obj.base) as Record<string, unknown>)}
      : (obj.config ?? obj.base),
    env: envMap(KIND_SPACES.routed),
    overrides: obj.overrides,
    ...(Array.isArray(obj.per_type)
      ? {routing: {min_gain: typeof obj.min_gain === 'number' ? obj.min_gain : 0, per_type: obj.per_type}}
      : {}),
    metrics: {},
    notes,
    validation: notValidated('an older routed profile records no validation'),
    leakage: [],
    source_run: sourceRun,
    rollout: ROLLOUT_STAGES.map((s) => ({...s})),
  }
}

/** Keys a profile listing entry (kt search's profiles.json) may carry beside its config: read, not used. */
const ENTRY_KEYS = new Set([
  'config',
  'profile',
  'name',
  'description',
  'trial',
  'trial_id',
  'metrics',
  'on_front',
  'constraints',
  'cost',
  'rationale',
])

/**
 * The parameter values of a `{config}` file (a profile's config on its own, or an entry of kt
 * search's profiles.json): undefined when the object is not of that form.
 */
function configEntry(obj: Record<string, unknown>, file: string): Record<string, unknown> | undefined {
  if (!isObject(obj.config)) return undefined
  for (const key of Object.keys(obj))
    if (!ENTRY_KEYS.has(key) && !/^(tuning|holdout)_/.test(key))
      throw new InputError(
        `${file}: ${key}`,
        `parameter values under config, beside only ${[...ENTRY_KEYS].filter((k) => k !== 'config').join(', ')} or tuning_*/holdout_* (an entry of kt search's profiles.json)`,
        'another key',
      )
  return obj.config
}

/** A plain object of parameter values: the space's defaults for the rest, not validated. */
function fromParameters(obj: Record<string, unknown>, file: string, space: ParamSpace, where = file): unknown {
  const config = {...defaultConfig(space), ...(obj as Record<string, never>)}
  validateConfig(space, config, where)
  const stem = basename(file).replace(/\.json$/i, '')
  const kind: ProfileKind = space.id === 'retrieval' || space.id === 'importance' ? space.id : 'engine'
  return {
    kt_profile: PROFILE_FORMAT_VERSION,
    kind,
    name: NAME_PATTERN.test(stem) ? stem : 'parameters',
    space: space.id,
    engine:
      kind === 'engine'
        ? {name: NAME_PATTERN.test(space.id) ? space.id : 'engine', file: null, space_sha256: spaceFingerprint(space)}
        : null,
    config,
    env: envMap(space),
    metrics: {},
    notes: [],
    validation: notValidated('a file of parameter values records no validation'),
    leakage: [],
    source_run: 'hand-written',
    rollout: ROLLOUT_STAGES.map((s) => ({...s})),
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
