import {z} from 'zod'
import {InputError, describeValue} from '../util/errors.js'
import {parseWith} from '../util/zod.js'
import {configFromEnv, configToEnv, validateConfig} from '../space/space.js'
import type {Config, ParamSpace} from '../space/types.js'

/** Version of the profile JSON format (`kt_profile`). */
export const PROFILE_FORMAT_VERSION = 1

/** The staged rollout every profile carries: share of traffic per stage and the gate to pass. */
export const ROLLOUT_STAGES = [
  {stage: 1, traffic_percent: 10, gate: 'no acceptance criterion regresses on live traffic for 24 h'},
  {stage: 2, traffic_percent: 50, gate: 'same criteria hold at 50% for 24 h'},
  {stage: 3, traffic_percent: 100, gate: 'full rollout; keep the previous profile for rollback'},
] as const

const ProfileSchema = z.object({
  kt_profile: z.literal(PROFILE_FORMAT_VERSION),
  name: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'a name of letters, digits, dot, dash or underscore (at most 64)'),
  space: z.string().min(1),
  config: z.record(z.union([z.number(), z.string(), z.boolean()])),
  metrics: z.record(z.union([z.number(), z.string(), z.null()])),
  source_run: z.string(),
  rollout: z.array(z.object({stage: z.number(), traffic_percent: z.number(), gate: z.string()})),
}).strict()

/** A deployable configuration with where it came from and what it measured. */
export type Profile = z.infer<typeof ProfileSchema>

export function makeProfile(space: ParamSpace, name: string, config: Config, metrics: Profile['metrics'], sourceRun: string): Profile {
  validateConfig(space, config, `profile ${name}`)
  return {kt_profile: PROFILE_FORMAT_VERSION, name, space: space.id, config, metrics, source_run: sourceRun, rollout: ROLLOUT_STAGES.map((s) => ({...s}))}
}

export function parseProfile(value: unknown, file: string, space: ParamSpace): Profile {
  if (typeof value === 'object' && value !== null && 'kt_routed_profile' in value)
    throw new InputError(file, 'a kt profile (kt_profile); this is a routed profile (base plus per-query-type overrides): use it with kt eval --profile')
  const data = parseWith(ProfileSchema, value, file)
  if (data.space !== space.id) throw new InputError(`${file}: space`, JSON.stringify(space.id), JSON.stringify(data.space))
  validateConfig(space, data.config, `${file}: config`)
  return data
}

export function profileJson(p: Profile): string {
  return `${JSON.stringify(p, null, 2)}\n`
}

/** A dotenv file: one VAR=value per line (values are plain numbers or identifiers: no quoting needed). */
export function renderEnvFile(space: ParamSpace, p: Profile): string {
  const lines = [`# kt profile ${p.name} (space ${space.id}, source run ${p.source_run})`]
  for (const [name, value] of configToEnv(space, p.config)) lines.push(`${name}=${value}`)
  return `${lines.join('\n')}\n`
}

/** Quotes a value for POSIX sh: single quotes, with each embedded ' written as '\''. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`
}

/** A POSIX shell script of exports; source it (`. profile.sh`) to apply the profile. */
export function renderShellScript(space: ParamSpace, p: Profile, heading = `kt profile ${p.name}`): string {
  const lines = ['#!/bin/sh', `# ${heading.replace(/\n/g, ' ')} (space ${space.id}, source run ${p.source_run})`]
  for (const [name, value] of configToEnv(space, p.config)) lines.push(`export ${name}=${shellQuote(value)}`)
  return `${lines.join('\n')}\n`
}

/** Parses a dotenv file into a variable map; errors name the file and line. */
export function parseEnvFile(text: string, file: string): Record<string, string> {
  const out: Record<string, string> = {}
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) return
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line)
    if (!m) throw new InputError(`${file}:${i + 1}`, 'a line NAME=value', describeValue(line))
    let value = m[2]
    if (/^'.*'$/.test(value)) value = value.slice(1, -1).replace(/'\\''/g, "'")
    else if (/^".*"$/.test(value)) value = value.slice(1, -1)
    out[m[1]] = value
  })
  return out
}

/** Loads a configuration from dotenv text, validated against the space (errors name the variable). */
export function configFromEnvFile(space: ParamSpace, text: string, file: string): Config {
  return configFromEnv(space, parseEnvFile(text, file))
}
