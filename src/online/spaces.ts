/**
 * The parameter spaces a tenant's bandits can tune, by id. The parameters, and which of them the
 * bandits tune by default (the `online` column, read by onlineTuned), live only in each space's table.
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

/** Folder (inside the tenants' folder) holding the parameter tables of engine files tenants tune. */
export const ENGINE_SPACES_DIR = 'engine-spaces'

function engineSpaceFile(dir: string, id: string): string {
  return join(dir, ENGINE_SPACES_DIR, `${id.replace(/[^A-Za-z0-9._-]+/g, '-')}.json`)
}

/**
 * Keeps an engine file's parameter table (space id `engine:<name>`) beside the tenants, so the
 * tenants created from it open later without the engine file. The whole table is kept, its
 * `online` column too: a tenant created later from the stored table tunes what the file marks.
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
