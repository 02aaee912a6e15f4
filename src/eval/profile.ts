import {loadProfile, type LoadedProfile} from '../deploy/load.js'
import {RETRIEVAL_SPACE} from '../engine/retrieval/space.js'
import type {RoutedOverrides} from '../engine/retrieval/classifier.js'
import type {Config} from '../space/types.js'

export interface RetrievalProfile {
  readonly config: Config
  readonly overrides?: RoutedOverrides
  /** The profile as loaded (name, kind, validation), for reports. */
  readonly loaded: LoadedProfile
}

/**
 * Reads the retrieval configuration of a profile through THE profile loader (src/deploy/load.ts):
 * a retrieval or routed kt profile (routed: base config plus per-query-type overrides), or a plain
 * JSON object of retrieval parameter values (missing ones take their defaults). Every key is
 * known and every value checked; errors name the file and the field.
 */
export function loadRetrievalProfile(file: string): RetrievalProfile {
  const loaded = loadProfile(file, {kinds: ['retrieval', 'routed'], parametersOf: RETRIEVAL_SPACE})
  const p = loaded.profile
  return {config: p.config, ...(p.kind === 'routed' ? {overrides: (p.overrides ?? {}) as RoutedOverrides} : {}), loaded}
}
