import {loadProfile, type LoadedProfile} from '../deploy/load.js'
import {RETRIEVAL_SPACE} from '../engine/retrieval/space.js'
import type {RoutedOverrides} from '../engine/retrieval/classifier.js'
import type {Config} from '../space/types.js'
import type {MemoryDataset} from '../data/conversations/types.js'

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

/**
 * The quality `kt eval --profile` reports for a configuration (base plus per-type overrides) on a
 * memory dataset: the engine's overall `metric` over every scored question. Studies record it in
 * the profiles they write, so the number a profile carries is the number kt eval gives back.
 */
export async function evalQuality(
  data: string | MemoryDataset,
  config: Config,
  overrides: RoutedOverrides | undefined,
  metric: string,
): Promise<number | null> {
  const {loadMemoryDataset} = await import('../data/conversations/index.js')
  const {prepareEvaluation, evaluateSystem} = await import('./harness.js')
  const prepared = prepareEvaluation(typeof data === 'string' ? loadMemoryDataset(data) : data, {overrides})
  const value = (evaluateSystem(prepared, 'engine', config).report.overall as Record<string, number>)[metric]
  return typeof value === 'number' && Number.isFinite(value) ? value : null
}
