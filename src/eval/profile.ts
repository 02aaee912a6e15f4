import {parseProfile} from '../deploy/profile.js'
import {RETRIEVAL_SPACE} from '../engine/retrieval/space.js'
import {QUERY_TYPES, type RoutedOverrides} from '../engine/retrieval/classifier.js'
import {defaultConfig, validateConfig} from '../space/space.js'
import type {Config} from '../space/types.js'
import {InputError, describeValue} from '../util/errors.js'
import {readJson} from '../util/fs.js'

export interface RetrievalProfile {
  readonly config: Config
  readonly overrides?: RoutedOverrides
}

/**
 * Reads a retrieval profile: a deployable kt profile (`kt_profile`, space "retrieval"), or a
 * plain JSON object of parameter values (missing ones take their defaults), or
 * `{"config": {...}, "overrides": {"temporal": {...}, ...}}` with per-query-type overrides.
 * Everything is validated against RETRIEVAL_SPACE; errors name the file and the parameter.
 */
export function loadRetrievalProfile(file: string): RetrievalProfile {
  const value = readJson(file)
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InputError(file, 'a JSON object of retrieval parameters', describeValue(value))
  const obj = value as Record<string, unknown>
  if ('kt_profile' in obj) return {config: parseProfile(value, file, RETRIEVAL_SPACE).config}
  const hasSections = 'config' in obj || 'overrides' in obj
  const raw = hasSections ? obj.config ?? {} : obj
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new InputError(`${file}: config`, 'an object of parameter values', describeValue(raw))
  const config = {...defaultConfig(RETRIEVAL_SPACE), ...(raw as Config)}
  validateConfig(RETRIEVAL_SPACE, config, file)
  if (!hasSections || obj.overrides === undefined) return {config}
  const overrides = obj.overrides
  if (typeof overrides !== 'object' || overrides === null || Array.isArray(overrides)) throw new InputError(`${file}: overrides`, 'an object keyed by query type', describeValue(overrides))
  for (const [type, o] of Object.entries(overrides)) {
    if (!(QUERY_TYPES as readonly string[]).includes(type)) throw new InputError(`${file}: overrides.${type}`, `a query type (${QUERY_TYPES.join(', ')})`, describeValue(type))
    validateConfig(RETRIEVAL_SPACE, {...config, ...(o as Config)}, `${file}: overrides.${type}`)
  }
  return {config, overrides: overrides as RoutedOverrides}
}
