import {existsSync, readFileSync, rmSync, statSync} from 'node:fs'
import {join} from 'node:path'
import {z} from 'zod'
import {InputError} from '../util/errors.js'
import {readJson, writeFileAtomic} from '../util/fs.js'
import {removeStaleTemps, withDirLock} from '../util/lock.js'
import {fromSavedModel, readModel, writeModel, type SavedModel} from './model.js'
import {PackedEnsemble} from './packed.js'

/**
 * The reranker model registry: a folder with one JSON file per kept version and an index,
 * `registry.json`, naming the current version. Versions enter only through the deploy gate
 * (deploy.ts); the last KEEP_VERSIONS are kept with their metrics, older ones are deleted; rollback
 * makes the previous kept version current and drops the rolled-back one. Writes are atomic (a model
 * file is written whole before the index names it, and the index is replaced by rename), and every
 * deploy and rollback holds the registry's lock (`<dir>/lock`, src/util/lock.ts) for its whole
 * read-modify-write; readers take no lock but re-read when the index changed under them.
 */

export const REGISTRY_INDEX = 'registry.json'
/** Versions kept (the issue: "the last three versions are kept with their metrics"). */
export const KEEP_VERSIONS = 3

const versionSchema = z.object({
  id: z.string(),
  file: z.string().regex(/^[\w.-]+$/),
  /** NDCG per split stored with the model at training time. */
  metrics: z.record(z.record(z.number())),
  trees: z.number().int().nonnegative(),
  deployed_at: z.string(),
  /** The model file it was deployed from. */
  source: z.string(),
  /** NDCG@10 of the engine's own order (no reranker) on the held-out data it was compared on, when known. */
  engine_ndcg10: z.number().optional(),
  /** The held-out file the gate judged it on, its sha256, and the margin. */
  holdout: z.string().optional(),
  holdout_sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
  margin: z.number().nonnegative().optional(),
  /** Lower bounds of the paired intervals of (it - the engine's order) and (it - the model it replaced). */
  engine_delta_low: z.number().optional(),
  current_delta_low: z.number().optional(),
  /** Why it was deployed although the gate did not pass it (--force --reason), and what the gate said. */
  forced: z.string().optional(),
  overrode: z.string().optional(),
})
const indexSchema = z.object({
  format: z.literal('kt-reranker-registry'),
  current: z.string().nullable(),
  next_version: z.number().int().positive(),
  /** Oldest first. */
  versions: z.array(versionSchema),
})
export type RegistryVersion = z.infer<typeof versionSchema>
export type RegistryIndex = z.infer<typeof indexSchema>

function emptyIndex(): RegistryIndex {
  return {format: 'kt-reranker-registry', current: null, next_version: 1, versions: []}
}

/** Reads the registry index (an absent folder or index is an empty registry). */
export function readRegistry(dir: string): RegistryIndex {
  // a file given as the registry would read as an empty one ("no reranker deployed")
  if (existsSync(dir) && !statSync(dir).isDirectory()) throw new InputError(dir, 'a reranker registry folder', 'a file')
  const path = join(dir, REGISTRY_INDEX)
  if (!existsSync(path)) return emptyIndex()
  const parsed = indexSchema.safeParse(readJson(path))
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw new InputError(
      `${path} field ${issue.path.join('.') || '(top)'}`,
      `a kt reranker registry index (${issue.message})`,
    )
  }
  const index = parsed.data
  if (index.current !== null && !index.versions.some((v) => v.id === index.current)) {
    throw new InputError(`${path} field current`, 'the id of a kept version', index.current)
  }
  return index
}

/** Files of the registry that writeFileAtomic writes: the index and the version models. */
const REGISTRY_FILE_PATTERN = /^(registry\.json|v\d+\.json)$/

/**
 * Runs one read-modify-write of the registry under its lock (src/util/lock.ts, the lock the online
 * store and the deploy history use), so two deploys, or a deploy and a rollback, run at once queue
 * instead of losing an update or deleting a file the other's index names. Temp files a killed
 * writer left are removed first (under the lock nobody else is writing).
 */
export function withRegistryLock<T>(dir: string, waitMs: number | undefined, fn: () => T): T {
  return withDirLock(
    dir,
    {expected: 'a registry no other deploy or rollback is changing', subject: `registry ${dir}`, waitMs},
    () => {
      removeStaleTemps(dir, REGISTRY_FILE_PATTERN)
      return fn()
    },
  )
}

/** Most index re-reads a lock-free reader makes while writers keep changing the registry under it. */
const CONSISTENT_READ_ATTEMPTS = 20

/**
 * Runs a lock-free read of the registry (index plus version files) and returns it only if the index
 * was the same before and after: a deploy or rollback that replaced the index meanwhile (and may
 * have removed a file the old index named) makes it read again. Readers need no write access.
 */
export function readConsistent<T>(dir: string, read: (index: RegistryIndex) => T): T {
  const path = join(dir, REGISTRY_INDEX)
  const indexText = (): string | undefined => {
    try {
      return readFileSync(path, 'utf8')
    } catch {
      return undefined
    }
  }
  let result: T
  for (let attempt = 1; ; attempt++) {
    const before = indexText()
    result = read(readRegistry(dir))
    if (indexText() === before || attempt >= CONSISTENT_READ_ATTEMPTS) return result
  }
}

function writeRegistry(dir: string, index: RegistryIndex): void {
  writeFileAtomic(join(dir, REGISTRY_INDEX), JSON.stringify(index, null, 2) + '\n')
}

export function currentVersion(index: RegistryIndex): RegistryVersion | undefined {
  return index.versions.find((v) => v.id === index.current)
}

/** Loads the saved model of a kept version. */
export function readVersionModel(dir: string, version: RegistryVersion): SavedModel {
  return readModel(join(dir, version.file))
}

/**
 * Writes `candidate` as the next version, makes it current and deletes versions beyond
 * KEEP_VERSIONS (call under withRegistryLock, with the index read under it).
 */
export function addVersion(
  dir: string,
  index: RegistryIndex,
  candidate: SavedModel,
  fields: Omit<RegistryVersion, 'id' | 'file' | 'metrics' | 'trees'>,
): {version: RegistryVersion; removed: string[]} {
  const id = `v${index.next_version}`
  const version: RegistryVersion = {
    id,
    file: `${id}.json`,
    metrics: candidate.metrics,
    trees: candidate.trees.length,
    ...fields,
  }
  writeModel(join(dir, version.file), candidate)
  const versions = [...index.versions, version]
  const removed = versions.splice(0, Math.max(0, versions.length - KEEP_VERSIONS))
  writeRegistry(dir, {...index, current: id, next_version: index.next_version + 1, versions})
  for (const old of removed) rmSync(join(dir, old.file), {force: true})
  return {version, removed: removed.map((v) => v.id)}
}

/**
 * What is wrong with a kept version's model file, as the one-line message of its InputError
 * (missing, not JSON, not a valid model, or not the number of trees the index lists); undefined
 * when it loads.
 */
export function versionProblem(dir: string, version: RegistryVersion): string | undefined {
  try {
    const saved = readVersionModel(dir, version)
    if (saved.trees.length !== version.trees) {
      return new InputError(
        `${join(dir, version.file)} field trees`,
        `${version.trees} trees (as ${REGISTRY_INDEX} lists for ${version.id})`,
        String(saved.trees.length),
      ).message
    }
    return undefined
  } catch (error) {
    if (error instanceof InputError) return error.message.replace(/\s*\n\s*/g, ' ')
    throw error
  }
}

export interface RollbackOutcome {
  current: string
  removed: string
}

/** Makes the previous kept version current and drops the rolled-back one. */
export function rollback(dir: string, options: {lockWaitMs?: number} = {}): RollbackOutcome {
  // No folder: nothing deployed (and nothing to lock); readRegistry says so in the error below.
  if (!existsSync(dir)) return rollbackLocked(dir)
  return withRegistryLock(dir, options.lockWaitMs, () => rollbackLocked(dir))
}

function rollbackLocked(dir: string): RollbackOutcome {
  const index = readRegistry(dir)
  const at = index.versions.findIndex((v) => v.id === index.current)
  if (at <= 0) {
    throw new InputError(
      join(dir, REGISTRY_INDEX),
      'an earlier kept version to roll back to',
      at < 0 ? 'no deployed model' : `only ${index.current}`,
    )
  }
  const previous = index.versions[at - 1]
  readVersionModel(dir, previous) // the version rolled back to must load before anything changes
  const [dropped] = index.versions.splice(at, 1)
  writeRegistry(dir, {...index, current: previous.id})
  rmSync(join(dir, dropped.file), {force: true})
  return {current: previous.id, removed: dropped.id}
}

/**
 * The current model, read and packed for inference, with the file it was read from; undefined
 * when nothing is deployed.
 */
export function loadDeployed(
  dir: string,
): {version: RegistryVersion; packed: PackedEnsemble; saved: SavedModel; file: string} | undefined {
  const found = readConsistent(dir, (index) => {
    const version = currentVersion(index)
    if (!version) return undefined
    try {
      return {version, saved: readVersionModel(dir, version)}
    } catch (error) {
      return error as Error // maybe removed by a rollback meanwhile: readConsistent reads again if so
    }
  })
  if (found instanceof Error) throw found
  if (!found) return undefined
  return {
    version: found.version,
    packed: new PackedEnsemble(fromSavedModel(found.saved)),
    saved: found.saved,
    file: join(dir, found.version.file),
  }
}
