import {IMPORTANCE_SPACE} from '../engine/importance/space.js'
import {RETRIEVAL_SPACE} from '../engine/retrieval/space.js'
import type {ParamSpace} from '../space/types.js'
import {InputError, describeValue} from '../util/errors.js'
import {readJson} from '../util/fs.js'

/** The parameter spaces a kt profile can belong to, by id. */
export const DEPLOYABLE_SPACES: readonly ParamSpace[] = [IMPORTANCE_SPACE, RETRIEVAL_SPACE]

export function spaceById(id: string, where = 'space'): ParamSpace {
  const space = DEPLOYABLE_SPACES.find((s) => s.id === id)
  if (!space) throw new InputError(where, `one of ${DEPLOYABLE_SPACES.map((s) => s.id).join(', ')}`, describeValue(id))
  return space
}

/** The space a profile file names in its `space` field. */
export function spaceOfProfileFile(file: string): ParamSpace {
  const value = readJson(file) as {space?: unknown} | null
  return spaceById(typeof value?.space === 'string' ? value.space : String(value?.space), `${file}: space`)
}
