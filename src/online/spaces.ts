/**
 * The parameter spaces a tenant's bandits can tune, by id, and which of their parameters the
 * bandits tune by default. The parameters themselves live only in each space's table.
 */
import type {ParamSpace} from '../space/types.js'
import {existsSync} from 'node:fs'
import {join} from 'node:path'
import {checkSpace} from '../space/space.js'
import {InputError, describeValue} from '../util/errors.js'
import {readJson, writeFileAtomic} from '../util/fs.js'
import {RETRIEVAL_SPACE} from '../engine/retrieval/space.js'
import {IMPORTANCE_SPACE} from '../engine/importance/space.js'

const SPACES: Record<string, ParamSpace> = {
  [RETRIEVAL_SPACE.id]: RETRIEVAL_SPACE,
  [IMPORTANCE_SPACE.id]: IMPORTANCE_SPACE,
}

/**
 * Parameters of the retrieval space the bandits tune per tenant by default: eleven query-time
 * parameters that plausibly differ between query mixes (text matching, entity seeding, how far
 * activation spreads, temporal edges, recency, and the fusion weights; the fusion simplex is one
 * parameter with three bandit dimensions). The rest stay at the deployed profile's values.
 * Eleven is the size the sampling budget (5 µs per query) is stated for.
 */
export const RETRIEVAL_TUNED = [
  'bm25.k1',
  'bm25.b',
  'seeds.count',
  'seeds.entity',
  'spread.retention',
  'spread.max_depth',
  'spread.inhibition',
  'edge.temporal',
  'actr.decay',
  'actr.alpha',
  'fusion',
] as const

/** Default tuned parameters per space id (absent: every parameter). */
export const DEFAULT_TUNED: Record<string, readonly string[]> = {[RETRIEVAL_SPACE.id]: RETRIEVAL_TUNED}

/** Folder (inside the tenants' folder) holding the parameter tables of engine files tenants tune. */
export const ENGINE_SPACES_DIR = 'engine-spaces'

function engineSpaceFile(dir: string, id: string): string {
  return join(dir, ENGINE_SPACES_DIR, `${id.replace(/[^A-Za-z0-9._-]+/g, '-')}.json`)
}

/**
 * Keeps an engine file's parameter table (space id `engine:<name>`) beside the tenants, so the
 * tenants created from it open later without the engine file.
 */
export function saveEngineSpace(dir: string, space: ParamSpace): void {
  checkSpace(space)
  writeFileAtomic(engineSpaceFile(dir, space.id), `${JSON.stringify(space, null, 2)}\n`)
}

/**
 * The space with this id; an unknown id is an InputError naming `where`. Engine spaces
 * (`engine:<name>`) are read from the tenants' folder `dir` (saveEngineSpace).
 */
export function spaceById(id: string, where = 'space', dir?: string): ParamSpace {
  const space = SPACES[id]
  if (space) return space
  if (dir !== undefined && id.startsWith('engine:') && existsSync(engineSpaceFile(dir, id))) {
    const stored = readJson(engineSpaceFile(dir, id)) as ParamSpace
    checkSpace(stored)
    if (stored.id === id) return stored
  }
  throw new InputError(where, `one of ${Object.keys(SPACES).join(', ')}, or an engine space kept by kt online init --engine`, describeValue(id))
}

export function spaceIds(): string[] {
  return Object.keys(SPACES)
}
