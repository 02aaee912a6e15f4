import {IMPORTANCE_SPACE} from '../engine/importance/space.js'
import {RETRIEVAL_SPACE} from '../engine/retrieval/space.js'
import {QUERY_TYPES} from '../engine/retrieval/classifier.js'
import type {ParamSpace} from '../space/types.js'
import {InputError, describeValue} from '../util/errors.js'
import type {EngineRef, ProfileKind} from './profile.js'
import {existsSync} from 'node:fs'
import {dirname, isAbsolute, relative, resolve, sep} from 'node:path'
import {loadEngineFile} from '../adapters/file.js'

/** The space of each built-in profile kind (engine profiles name their own). */
export const KIND_SPACES: Readonly<Record<Exclude<ProfileKind, 'engine'>, ParamSpace>> = {
  importance: IMPORTANCE_SPACE,
  retrieval: RETRIEVAL_SPACE,
  routed: RETRIEVAL_SPACE,
}

/** Query types a routed profile may override (the retrieval engine's classifier). */
export const ROUTED_QUERY_TYPES: readonly string[] = QUERY_TYPES

/**
 * Finds the parameter space of an engine profile from its engine reference (name and file, as
 * written in the profile) and the profile file's path; undefined when this resolver does not know
 * the engine. src/adapters registers one (an engine file's parameter table is a ParamSpace).
 */
export type EngineSpaceResolver = (engine: EngineRef, profileFile: string) => ParamSpace | undefined

/**
 * The engine reference a profile written to `profileDir` carries: the engine file relative to that
 * folder (where findEngine looks first), so no absolute path is written and a moved clone still finds it.
 */
export function engineRefFor(
  spec: {readonly name: string; readonly file: string},
  profileDir: string,
): {name: string; file: string} {
  return {name: spec.name, file: relative(resolve(profileDir), resolve(spec.file)).split(sep).join('/')}
}

/**
 * The engine file an engine profile names, as an absolute path, with its spec: absolute, or
 * relative to the profile's folder, then to the working folder; only if it exists and declares
 * the same engine name.
 */
function findEngine(
  engine: EngineRef,
  profileFile: string,
): {file: string; spec: ReturnType<typeof loadEngineFile>} | undefined {
  if (!engine.file) return undefined
  const candidates = isAbsolute(engine.file)
    ? [engine.file]
    : [resolve(dirname(profileFile), engine.file), resolve(engine.file)]
  const file = candidates.find((f) => existsSync(f))
  if (!file) return undefined
  const spec = loadEngineFile(file)
  return spec.name === engine.name ? {file: resolve(file), spec} : undefined
}

/** The absolute path of the engine file an engine profile names (see findEngine), or undefined. */
export function findEngineFile(engine: EngineRef, profileFile: string): string | undefined {
  return findEngine(engine, profileFile)?.file
}

/** The default resolver: the space of the engine file the profile names. */
const engineFileResolver: EngineSpaceResolver = (engine, profileFile) => findEngine(engine, profileFile)?.spec.space

const engineResolvers: EngineSpaceResolver[] = [engineFileResolver]

/** Adds a resolver for engine profiles' spaces (called once by the module that knows engine files). */
export function registerEngineSpaceResolver(resolver: EngineSpaceResolver): void {
  if (!engineResolvers.includes(resolver)) engineResolvers.push(resolver)
}

/** The space of an engine profile, or a one-line error saying which engine could not be found. */
export function resolveEngineSpace(engine: EngineRef, profileFile: string): ParamSpace {
  for (const r of engineResolvers) {
    const space = r(engine, profileFile)
    if (space) return space
  }
  throw new InputError(
    `${profileFile}: engine`,
    'an engine kt can find to check the values against',
    `none found for ${describeValue(engine.name)}${engine.file ? ` (file ${describeValue(engine.file)})` : ''}`,
  )
}
