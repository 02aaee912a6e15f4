/**
 * The parameter spaces a tenant's bandits can tune, by id. The parameters, and which of them the
 * bandits tune by default (the `online` column, read by onlineTuned), live only in each space's table.
 */
import type {ParamSpace} from '../space/types.js'
import {existsSync, rmSync, rmdirSync} from 'node:fs'
import {join} from 'node:path'
import {checkSpace} from '../space/space.js'
import {InputError, describeValue} from '../util/errors.js'
import {ensureDir, readJson, writeFileAtomic} from '../util/fs.js'
import {withDirLock} from '../util/lock.js'
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

/** What the engine tables' lock error expects (library.ts tells it as tenant_busy). */
export const ENGINE_SPACES_BUSY = 'engine tables no other kt online init is changing'

/**
 * Runs `fn` holding the engine tables' lock (ENGINE_SPACES_DIR/lock in the tenants' folder). A
 * table is written, and a tenant of an engine space created, only under it: no init changes a
 * table another is creating a tenant from, and an init that fails takes back the table it wrote
 * before anyone could use it. Folders it had to make are removed again when left empty.
 */
export function withEngineSpacesLock<T>(dir: string, fn: () => T, waitMs?: number): T {
  const folder = join(dir, ENGINE_SPACES_DIR)
  const madeDir = !existsSync(dir)
  const madeFolder = !existsSync(folder)
  ensureDir(folder)
  try {
    return withDirLock(folder, {waitMs, expected: ENGINE_SPACES_BUSY, subject: `the engine tables of ${dir}`}, fn)
  } finally {
    if (madeFolder) removeIfEmpty(folder)
    if (madeDir) removeIfEmpty(dir)
  }
}

/** Removes a folder this process created, unless something else has appeared in it meanwhile. */
export function removeIfEmpty(folder: string): void {
  try {
    rmdirSync(folder)
  } catch {
    // another process put something there meanwhile, or it is gone: leave it
  }
}

/** What makes two tables the same for tenants: everything but the descriptions, keys in order. */
function tableText(value: unknown): string {
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip)
    if (typeof v !== 'object' || v === null) return v
    return Object.fromEntries(
      Object.keys(v)
        .filter((k) => k !== 'description')
        .sort()
        .map((k) => [k, strip((v as Record<string, unknown>)[k])]),
    )
  }
  return JSON.stringify(strip(value))
}

/**
 * Keeps an engine file's parameter table (space id `engine:<name>`) beside the tenants, so the
 * tenants created from it open later without the engine file. The whole table is kept, its
 * `online` column too: a tenant created later from the stored table tunes what the file marks.
 * Call it under withEngineSpacesLock. A table is written only where none is kept under its id;
 * the same table again (descriptions aside) changes nothing; a different one is refused in one
 * line naming `source` (the engine file) and the kept file, since the tenants created from the
 * kept table rely on its bins. Returns whether it wrote the file.
 */
export function keepEngineSpace(dir: string, space: ParamSpace, source: string = space.id): boolean {
  checkSpace(space)
  const file = engineSpaceFile(dir, space.id)
  if (existsSync(file)) {
    if (tableText(readJson(file)) === tableText(space)) return false
    throw new InputError(
      `${source}: parameters`,
      `the parameter table kept for ${space.id} in ${file}, which the tenants created from it read`,
      'a different table (to tune it: give the engine a new name, or keep its tenants in another --dir; the kept table and its tenants stay as they are)',
    )
  }
  writeFileAtomic(file, `${JSON.stringify(space, null, 2)}\n`)
  return true
}

/** Takes back a table keepEngineSpace wrote for an init that then failed (under withEngineSpacesLock). */
export function forgetEngineSpace(dir: string, id: string): void {
  rmSync(engineSpaceFile(dir, id), {force: true})
}

/** keepEngineSpace under the engine tables' lock. */
export function saveEngineSpace(dir: string, space: ParamSpace, source?: string): void {
  withEngineSpacesLock(dir, () => keepEngineSpace(dir, space, source))
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
  throw new InputError(
    where,
    `one of ${Object.keys(SPACES).join(', ')}, or an engine space kept by kt online init --engine`,
    describeValue(id),
  )
}
