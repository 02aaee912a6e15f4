/**
 * THE profile schema: every deployable configuration kt writes or reads (importance, retrieval,
 * routed retrieval, a user's engine) is one `kt_profile: 2` document, parsed by one zod schema and
 * one loader (src/deploy/load.ts). Field table: src/deploy/README.md.
 *
 * Everything a profile exports to a shell or a dotenv reader is either a strictly validated
 * identifier (names, env var names, run ids) or a value from a small safe alphabet; free text
 * (notes, reasons) may not hold control or line-separator characters and never reaches the
 * exported files except through `commentText`, which escapes anything outside printable ASCII.
 */
import {z} from 'zod'
import {createHash} from 'node:crypto'
import {join} from 'node:path'
import {InputError} from '../util/errors.js'
import {writeFileAtomic} from '../util/fs.js'
import {parseWith} from '../util/zod.js'
import {configKeys, configFromEnv, envName, validateConfig, withoutOnline} from '../space/space.js'
import type {Config, ParamSpace} from '../space/types.js'
import {checkEnvName} from '../space/env.js'
import {
  KEY_MESSAGE,
  KEY_PATTERN,
  MAX_TEXT_LENGTH,
  NAME_MESSAGE,
  NAME_PATTERN,
  SAFE_VALUE_MESSAGE,
  SAFE_VALUE_PATTERN,
  SPACE_ID_PATTERN,
  UNSAFE_TEXT,
} from '../space/names.js'

/** Version of the profile JSON format (`kt_profile`). 1 (no kind, validation as a metric string) is read and upgraded. */
export const PROFILE_FORMAT_VERSION = 2

/** What a profile configures: the importance scorer, the retrieval engine, the retrieval engine routed per query type, or a user's engine. */
export const PROFILE_KINDS = ['importance', 'retrieval', 'routed', 'engine'] as const
export type ProfileKind = (typeof PROFILE_KINDS)[number]

/** A profile's validation verdict: its run validated it and it passed, it failed, or nothing validated it. */
const VERDICTS = ['pass', 'fail', 'not-validated'] as const

/** The staged rollout every profile carries: share of traffic per stage and the gate to pass. */
export const ROLLOUT_STAGES = [
  {stage: 1, traffic_percent: 10, gate: 'no acceptance criterion regresses on live traffic for 24 h'},
  {stage: 2, traffic_percent: 50, gate: 'same criteria hold at 50% for 24 h'},
  {stage: 3, traffic_percent: 100, gate: 'full rollout; keep the previous profile for rollback'},
] as const

/** The names, keys, values and text of a profile: src/space/names.ts (the engine-file loader checks the same). */
export {KEY_PATTERN, NAME_PATTERN, SPACE_ID_PATTERN}
/** Run ids (`seed42-plan226273690f7b`, study names, `kt search` output ids). */
export const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,127}$/

/** A study's name as a profile's source_run: itself when it is a valid run id, else `study-<name>` with other characters as `_`. */
export function studySourceRun(study: string): string {
  return RUN_ID_PATTERN.test(study) ? study : `study-${study.replace(/[^A-Za-z0-9._:@+-]/g, '_')}`.slice(0, 128)
}
const name = z.string().regex(NAME_PATTERN, NAME_MESSAGE)
const runId = z.string().regex(RUN_ID_PATTERN, 'a run id of letters, digits and . _ : @ + - (at most 128)')
const key = z.string().regex(KEY_PATTERN, KEY_MESSAGE)
/** Free text: any printable characters, no control or line-separator characters. */
export const safeText = z
  .string()
  .max(MAX_TEXT_LENGTH)
  .refine((s) => !UNSAFE_TEXT.test(s), 'text without control, line-separator or bidi characters')
const value = z.union([z.number().finite(), z.boolean(), z.string().regex(SAFE_VALUE_PATTERN, SAFE_VALUE_MESSAGE)])
const envVar = z.string().superRefine((s, ctx) => {
  const problem = checkEnvName(s)
  if (problem) ctx.addIssue({code: z.ZodIssueCode.custom, message: problem})
})
const configSchema = z.record(key, value)

const CriterionSchema = z
  .object({
    id: name,
    description: safeText.optional(),
    metric: key,
    op: z.enum(['<', '<=', '>', '>=']),
    threshold: z.number().finite(),
    value: z.number().finite().nullable(),
    passed: z.boolean(),
    dataset: name.optional(),
    /** The confidence level of the interval a metric such as spearman_delta_abs_ci_low was read from. */
    confidence: z.number().gt(0).lt(1).optional(),
  })
  .strict()

const ValidationSchema = z
  .object({
    verdict: z.enum(VERDICTS),
    /** Always verdict === 'pass'; kept as a boolean for CI scripts that read it. */
    validation_passed: z.boolean(),
    /** What it was validated on (dataset ids), empty when not validated. */
    data: z.array(name),
    criteria: z.array(CriterionSchema),
    note: safeText.nullable(),
  })
  .strict()
  .refine((v) => v.validation_passed === (v.verdict === 'pass'), {
    message: 'validation_passed true exactly when verdict is "pass"',
    path: ['validation_passed'],
  })
  .refine((v) => v.verdict === 'not-validated' || v.criteria.length > 0, {
    message: 'the criteria behind a pass or fail verdict',
    path: ['criteria'],
  })
  .refine((v) => v.verdict === 'not-validated' || v.criteria.every((c) => c.passed) === (v.verdict === 'pass'), {
    message: 'a verdict that agrees with its criteria (pass exactly when every criterion passed)',
    path: ['verdict'],
  })

const LeakageSchema = z
  .object({
    dataset: name,
    signal: key,
    verdict: z.enum(['ok', 'leak', 'constant', 'too-few-rows']),
    dependence: z.number().finite().nullable(),
    /** True when the audit flags this signal as (nearly) a function of the label: the gate refuses the profile. */
    flagged: z.boolean(),
  })
  .strict()
  .refine((l) => l.flagged === (l.verdict === 'leak'), {
    message: 'flagged true exactly when verdict is "leak"',
    path: ['flagged'],
  })

const RoutingEntrySchema = z
  .object({
    type: key,
    base_score: z.number().finite(),
    best_score: z.number().finite(),
    gain: z.number().finite(),
    override: z.boolean(),
    keys: z.array(key),
    reason: safeText,
    study: runId.optional(),
  })
  .strict()

const EngineRefSchema = z
  .object({
    /** The engine's name (its file's `name`). */
    name,
    /** The engine file the profile was made from, as written then (informational; the space is resolved by name or file). */
    file: safeText.nullable(),
    /** sha256 of the engine's parameter table (spaceFingerprint): a profile made for another table is refused. */
    space_sha256: z.string().regex(/^[0-9a-f]{64}$/, '64 hex digits'),
  })
  .strict()

const ProfileSchema = z
  .object({
    kt_profile: z.literal(PROFILE_FORMAT_VERSION),
    kind: z.enum(PROFILE_KINDS),
    name,
    description: safeText.optional(),
    /** The parameter space's id: importance, retrieval, or the engine's space id. */
    space: z.string().regex(SPACE_ID_PATTERN, 'a space id of letters, digits and . _ : - (at most 64)'),
    /** Engine profiles: which engine and which version of its parameter table. null for the built-in kinds. */
    engine: EngineRefSchema.nullable(),
    /** Parameter values keyed by parameter name (every parameter of the space). */
    config: configSchema,
    /** The env var of each parameter, copied from the space table (checked against it on load). */
    env: z.record(key, envVar),
    /** Routed profiles: per query type, the parameters that differ from `config`. */
    overrides: z.record(key, configSchema).optional(),
    /** Routed profiles: why each type is or is not overridden. */
    routing: z
      .object({min_gain: z.number().finite(), per_type: z.array(RoutingEntrySchema)})
      .strict()
      .optional(),
    metrics: z.record(key, z.number().finite().nullable()),
    notes: z.array(safeText),
    validation: ValidationSchema,
    leakage: z.array(LeakageSchema),
    source_run: runId,
    rollout: z.array(
      z.object({stage: z.number().int().min(1), traffic_percent: z.number().min(0).max(100), gate: safeText}).strict(),
    ),
  })
  .strict()

/** A deployable configuration with where it came from, what it measured and whether it was validated. */
export type Profile = z.infer<typeof ProfileSchema>
export type ProfileValidation = Profile['validation']
export type LeakageFinding = Profile['leakage'][number]
export type EngineRef = NonNullable<Profile['engine']>

/** The validation record of a profile nothing validated, with the reason. */
export function notValidated(note: string): ProfileValidation {
  return {verdict: 'not-validated', validation_passed: false, data: [], criteria: [], note}
}

/** A validation record from criteria (pass exactly when every one passed; none: not validated). */
export function validationFrom(
  criteria: ProfileValidation['criteria'],
  data: string[],
  note: string | null = null,
): ProfileValidation {
  if (criteria.length === 0) return notValidated(note ?? 'no acceptance criterion was evaluated')
  const passed = criteria.every((c) => c.passed)
  return {verdict: passed ? 'pass' : 'fail', validation_passed: passed, data, criteria, note}
}

/**
 * sha256 of a parameter table: two spaces with the same fingerprint accept the same configurations.
 * The bandits' `online` column is left out: marking it changes no configuration a profile holds.
 */
export function spaceFingerprint(space: ParamSpace): string {
  return createHash('sha256')
    .update(JSON.stringify(withoutOnline(space).params))
    .digest('hex')
}

/** The env var of every configuration key, from the space table. */
export function envMap(space: ParamSpace): Record<string, string> {
  return Object.fromEntries(configKeys(space).map((k) => [k, envName(space, k)]))
}

export interface MakeProfileOptions {
  readonly kind: ProfileKind
  readonly space: ParamSpace
  readonly name: string
  readonly config: Config
  readonly sourceRun: string
  readonly metrics?: Record<string, number | null>
  readonly validation?: ProfileValidation
  readonly leakage?: LeakageFinding[]
  readonly notes?: string[]
  readonly description?: string
  /** Engine profiles: the engine's name and file. */
  readonly engine?: {name: string; file: string | null}
  /** Routed profiles: per query type, the parameters that differ from the base. */
  readonly overrides?: Record<string, Config>
  readonly routing?: Profile['routing']
}

/**
 * Builds a profile and checks it exactly as the loader will (schema, space, env names), so kt never
 * writes a profile it would refuse to read.
 */
export function makeProfile(o: MakeProfileOptions): Profile {
  const profile: Profile = {
    kt_profile: PROFILE_FORMAT_VERSION,
    kind: o.kind,
    name: o.name,
    ...(o.description === undefined ? {} : {description: o.description}),
    space: o.space.id,
    engine:
      o.kind === 'engine'
        ? {name: o.engine?.name ?? o.space.id, file: o.engine?.file ?? null, space_sha256: spaceFingerprint(o.space)}
        : null,
    config: {...o.config},
    env: envMap(o.space),
    ...(o.kind === 'routed' ? {overrides: o.overrides ?? {}, ...(o.routing ? {routing: o.routing} : {})} : {}),
    metrics: {...(o.metrics ?? {})},
    notes: [...(o.notes ?? [])],
    validation: o.validation ?? notValidated('the profile was made without a validation'),
    leakage: [...(o.leakage ?? [])],
    source_run: o.sourceRun,
    rollout: ROLLOUT_STAGES.map((s) => ({...s})),
  }
  return checkProfile(profile, `profile ${o.name}`, o.space)
}

/** Schema, kind-specific fields and the space: the checks every profile passes, made or loaded. */
export function checkProfile(value: unknown, file: string, space: ParamSpace, queryTypes?: readonly string[]): Profile {
  const p = parseWith(ProfileSchema, value, file)
  if (p.space !== space.id) throw new InputError(`${file}: space`, JSON.stringify(space.id), JSON.stringify(p.space))
  if ((p.kind === 'engine') !== (p.engine !== null))
    throw new InputError(
      `${file}: engine`,
      p.kind === 'engine'
        ? 'the engine (name, file, space_sha256) of an engine profile'
        : `null for a ${p.kind} profile`,
      JSON.stringify(p.engine),
    )
  if (p.engine && p.engine.space_sha256 !== spaceFingerprint(space))
    throw new InputError(
      `${file}: engine.space_sha256`,
      `the fingerprint of engine ${p.engine.name}'s current parameter table (${spaceFingerprint(space).slice(0, 12)}...; the table changed since the profile was made)`,
      `${p.engine.space_sha256.slice(0, 12)}...`,
    )
  if ((p.kind === 'routed') !== (p.overrides !== undefined))
    throw new InputError(
      `${file}: overrides`,
      p.kind === 'routed'
        ? 'per-query-type overrides (an object, {} for none) in a routed profile'
        : `no overrides in a ${p.kind} profile`,
      p.overrides === undefined ? 'nothing' : 'overrides',
    )
  if (p.routing !== undefined && p.kind !== 'routed')
    throw new InputError(`${file}: routing`, `no routing in a ${p.kind} profile`, 'routing')
  const expectedEnv = envMap(space)
  for (const [k, v] of Object.entries(p.env))
    if (expectedEnv[k] !== v)
      throw new InputError(
        `${file}: env.${k}`,
        expectedEnv[k] === undefined ? `a parameter of space ${space.id}` : JSON.stringify(expectedEnv[k]),
        JSON.stringify(v),
      )
  for (const k of Object.keys(expectedEnv))
    if (!(k in p.env)) throw new InputError(`${file}: env.${k}`, `the env var of ${k} (${expectedEnv[k]})`, 'nothing')
  validateConfig(space, p.config, `${file}: config`)
  for (const [type, o] of Object.entries(p.overrides ?? {})) {
    if (queryTypes && !queryTypes.includes(type))
      throw new InputError(
        `${file}: overrides.${type}`,
        `a query type (${queryTypes.join(', ')})`,
        JSON.stringify(type),
      )
    validateConfig(space, {...p.config, ...o}, `${file}: overrides.${type}`)
  }
  const seen = new Set<string>()
  for (const e of Object.values(p.env)) {
    if (seen.has(e)) throw new InputError(`${file}: env`, 'a different env var for every parameter', `${e} twice`)
    seen.add(e)
  }
  return p
}

export function profileJson(p: Profile): string {
  return `${JSON.stringify(p, null, 2)}\n`
}

/**
 * A profile's three deployable forms, rendered (so every check has passed before anything is
 * written): `<base>.env`, `<base>.sh` (executable) and `<base>.json`, in that order.
 */
export function profileFiles(base: string, profile: Profile): Array<{path: string; text: string; mode?: number}> {
  return [
    {path: `${base}.env`, text: renderEnvFile(profile)},
    {path: `${base}.sh`, text: renderShellScript(profile), mode: 0o755},
    {path: `${base}.json`, text: profileJson(profile)},
  ]
}

/**
 * Writes a profile's three deployable forms beside each other, each atomically: `<base>.env`,
 * `<base>.sh` (executable) and `<base>.json`, `base` relative to `dir`; returns those relative
 * paths in that order.
 */
export function writeProfileFiles(
  dir: string,
  base: string,
  profile: Profile,
): [env: string, sh: string, json: string] {
  const files = profileFiles(base, profile)
  for (const f of files) writeFileAtomic(join(dir, f.path), f.text, f.mode)
  return files.map((f) => f.path) as [string, string, string]
}

/** Text for a comment line: printable ASCII only; anything else (newlines, NUL, U+2028, ...) becomes a \u{...} escape. */
export function commentText(text: string): string {
  return text.replace(/[^\x20-\x7e]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`)
}

/** A value as exported: numbers and booleans as JS prints them, strings checked against SAFE_VALUE_PATTERN. */
function exportValue(value: unknown, where: string): string {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new InputError(where, 'a finite number', String(value))
    return String(value)
  }
  if (typeof value === 'boolean') return String(value)
  if (typeof value === 'string' && SAFE_VALUE_PATTERN.test(value)) return value
  throw new InputError(
    where,
    'a number, boolean or a value of letters, digits and . _ : / + @ % , -',
    JSON.stringify(value),
  )
}

/**
 * The env var carrying a routed override: the parameter's own var, `__`, the query type in upper
 * case (KT_BM25_K1__TEMPORAL). The engine reads the base vars and, for a query of that type,
 * the override.
 */
function overrideEnvName(env: string, type: string): string {
  const name = `${env}__${type.toUpperCase().replace(/[^A-Z0-9_]/g, '_')}`
  const problem = checkEnvName(name)
  if (problem) throw new InputError(`override ${type} of ${env}`, problem, name)
  return name
}

/** Every assignment a profile exports, in table order (routed overrides after the base). */
export function profileAssignments(p: Profile): Array<[string, string]> {
  const out: Array<[string, string]> = []
  for (const [param, env] of Object.entries(p.env)) {
    const problem = checkEnvName(env)
    if (problem) throw new InputError(`profile ${p.name}: env.${param}`, problem, JSON.stringify(env))
    out.push([env, exportValue(p.config[param], `profile ${p.name}: config.${param}`)])
  }
  for (const [type, o] of Object.entries(p.overrides ?? {}))
    for (const [param, v] of Object.entries(o))
      out.push([overrideEnvName(p.env[param], type), exportValue(v, `profile ${p.name}: overrides.${type}.${param}`)])
  return out
}

function heading(p: Profile, what = `kt profile ${p.name}`): string {
  return `# ${commentText(`${what} (kind ${p.kind}, space ${p.space}, source run ${p.source_run}, validation ${p.validation.verdict})`)}`
}

/**
 * A dotenv file: one VAR=value per line. Values come from SAFE_VALUE_PATTERN (or are numbers and
 * booleans), so no quoting is needed and sh, `set -a; .`, dotenv, docker and systemd all read the
 * same text.
 */
export function renderEnvFile(p: Profile): string {
  const lines = [heading(p)]
  for (const [name, v] of profileAssignments(p)) lines.push(`${name}=${v}`)
  return `${lines.join('\n')}\n`
}

/** Quotes a value for POSIX sh: single quotes, with each embedded ' written as '\''. */
export function shellQuote(value: string): string {
  if (value.includes('\0')) throw new InputError('shell value', 'text without NUL characters', 'a NUL')
  return `'${value.replace(/'/g, `'\\''`)}'`
}

/** A POSIX shell script of exports; source it (`. profile.sh`) to apply the profile. */
export function renderShellScript(p: Profile, what?: string): string {
  const lines = ['#!/bin/sh', heading(p, what)]
  for (const [name, v] of profileAssignments(p)) lines.push(`export ${name}=${shellQuote(v)}`)
  return `${lines.join('\n')}\n`
}

/** Parses a dotenv file into a variable map; errors name the file and line. */
export function parseEnvFile(text: string, file: string): Record<string, string> {
  const out: Record<string, string> = {}
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) return
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line)
    if (!m)
      throw new InputError(
        `${file}:${i + 1}`,
        'a line NAME=value',
        commentText(line.length > 40 ? `${line.slice(0, 37)}...` : line),
      )
    let v = m[2]
    if (/^'.*'$/.test(v)) v = v.slice(1, -1).replace(/'\\''/g, "'")
    else if (/^".*"$/.test(v)) v = v.slice(1, -1)
    out[m[1]] = v
  })
  return out
}

/** Loads a configuration from dotenv text, validated against the space (errors name the variable). */
export function configFromEnvFile(space: ParamSpace, text: string, file: string): Config {
  return configFromEnv(space, parseEnvFile(text, file))
}
