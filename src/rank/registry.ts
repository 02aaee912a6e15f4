import {existsSync, readFileSync, rmSync, statSync} from 'node:fs'
import {join} from 'node:path'
import {z} from 'zod'
import {InputError} from '../util/errors.js'
import {ensureDir, readJson, writeFileAtomic} from '../util/fs.js'
import {removeStaleTemps, withDirLock} from '../util/lock.js'
import type {LtrDataset} from './dataset.js'
import {scoreDataset} from './lambdamart.js'
import {fromSavedModel, readModel, sameScoringModel, writeModel, type SavedModel} from './model.js'
import {reportEvaluator, PRIMARY_CUTOFF, type NdcgEvaluator} from './ndcg.js'
import {PackedEnsemble} from './packed.js'
import {hasQueryLevelColumns} from './query-features.js'
import {alignColumns, compareScorers, COMPARISON_MIN_QUERIES, ENGINE_SCORE_FEATURE, formatMetric, formatNameList, METRIC_DIGITS, withEngineScoreFeature, type ScorerComparison} from './report.js'
import {defaultEngineOrder, describeEngineOrder, ENGINE_ORDER_CHOICES, engineOrderScores, type EngineOrder} from './engine-order.js'
import {readLtrFile} from './parse.js'
import {hashString} from '../util/rng.js'

/**
 * The reranker model registry: a folder with one JSON file per kept version and an index,
 * `registry.json`, naming the current version. Rules:
 * - deploy: a candidate replaces the current model only if its validation NDCG@10 is not worse
 *   (>=) than the better of the engine's own order (no reranker at all, see engine-order.ts; on
 *   --valid or the validation file the model records) and the current model's; otherwise it is
 *   rejected and nothing changes. When the engine's order is unknown the deploy is refused unless
 *   forced (the reason is kept with the version). The comparison uses
 *   the validation NDCG stored in each model, or, given a data set, both models re-scored on it
 *   (its columns picked by the model's feature names). Only models over the same feature columns
 *   are compared; a model without trees is refused; the current model deployed again is a no-op.
 * - the last KEEP_VERSIONS deployed versions are kept with their metrics; older ones are deleted.
 * - rollback: the previous kept version becomes current and the rolled-back one is dropped.
 * Writes are atomic: a model file is written whole before the index names it, and the index is
 * replaced by rename, so a crash leaves either the old or the new registry. Every deploy and
 * rollback holds the registry's lock (`<dir>/lock`, src/util/lock.ts) for its whole
 * read-modify-write; readers take no lock but re-read when the index changed under them.
 */

export const REGISTRY_INDEX = 'registry.json'
/** Versions kept (the issue: "the last three versions are kept with their metrics"). */
export const KEEP_VERSIONS = 3
export {DEFAULT_REGISTRY} from './defaults.js'

const METRIC = `ndcg@${PRIMARY_CUTOFF}` as const

export interface RegistryVersion {
  id: string
  file: string
  /** NDCG per split stored with the model at training time. */
  metrics: Record<string, Record<string, number>>
  trees: number
  deployed_at: string
  /** The model file it was deployed from. */
  source: string
  /** Validation NDCG@10 of the engine's own order (no reranker) it was compared with, when known. */
  engine_ndcg10?: number
  /** Why it was deployed without the comparison with the engine's own order (--force), when it was. */
  forced?: string
}

export interface RegistryIndex {
  format: 'kt-reranker-registry'
  current: string | null
  next_version: number
  /** Oldest first. */
  versions: RegistryVersion[]
}

const indexSchema = z.object({
  format: z.literal('kt-reranker-registry'),
  current: z.string().nullable(),
  next_version: z.number().int().positive(),
  versions: z.array(
    z.object({
      id: z.string(),
      file: z.string().regex(/^[\w.-]+$/),
      metrics: z.record(z.record(z.number())),
      trees: z.number().int().nonnegative(),
      deployed_at: z.string(),
      source: z.string(),
      engine_ndcg10: z.number().optional(),
      forced: z.string().optional(),
    }),
  ),
})

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
    throw new InputError(`${path} field ${issue.path.join('.') || '(top)'}`, `a kt reranker registry index (${issue.message})`)
  }
  const index = parsed.data as RegistryIndex
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
function withRegistryLock<T>(dir: string, waitMs: number | undefined, fn: () => T): T {
  return withDirLock(dir, {expected: 'a registry no other deploy or rollback is changing', subject: `registry ${dir}`, waitMs}, () => {
    removeStaleTemps(dir, REGISTRY_FILE_PATTERN)
    return fn()
  })
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

export interface DeployOutcome {
  deployed: boolean
  /** The version current after the call. */
  current: string | null
  /** The new version's id when deployed. */
  version?: string
  /** The current version's id when the candidate is the same model (nothing changed). */
  already?: string
  /** Null when nothing was compared (the candidate is the current model). */
  candidate_ndcg10: number | null
  current_ndcg10: number | null
  /** "stored validation metrics" or the data file both models were re-scored on. */
  compared_on: string
  /** Version ids deleted to keep the last KEEP_VERSIONS. */
  removed: string[]
  reason: string
  /** Validation NDCG@10 of the engine's own order (no reranker), or null when it was not compared (forced, or the same model). */
  engine_ndcg10: number | null
  /** How the engine's order was known and on which file ("the logged engine_score of valid.jsonl"), or null. */
  engine_order: string | null
  /** Paired comparisons (candidate minus baseline, NDCG@10, bootstrap interval over the judged queries) with the engine's order and, when re-scored on data, the current model. */
  comparisons: DeployComparison[]
  /** Set when --force deployed without the comparison with the engine's order: the reason given. */
  forced?: string
}

/** The candidate minus one baseline on the same validation queries. */
export interface DeployComparison extends Omit<ScorerComparison, 'baseline'> {
  baseline: 'engine' | 'current'
  candidate_ndcg10: number
  baseline_ndcg10: number
  /** The data file both were scored on. */
  compared_on: string
}

export interface DeployOptions {
  /** Re-score candidate and current model on this data (--valid); also the data for the engine's order. */
  compareOn?: LtrDataset
  /** How the engine's order is known (default: the logged engine score when the data has it). */
  engineOrder?: EngineOrder
  /** Deploy even when the engine's order is unknown (the comparison with it skipped): the reason, recorded with the version. */
  force?: string
  now?: Date
  lockWaitMs?: number
}

/** Bootstrap seed of the deploy comparisons (the project's default seed, 42, with a label per baseline). */
const DEPLOY_SEED = 42

/** Per-query NDCG@10 comparison of the candidate's scores with a baseline's on `data`. */
function comparison(baseline: DeployComparison['baseline'], evaluator: NdcgEvaluator, candidate: Float64Array, other: Float64Array, on: string): DeployComparison {
  const own = evaluator.perQuery(candidate, PRIMARY_CUTOFF)
  const theirs = evaluator.perQuery(other, PRIMARY_CUTOFF)
  const c = compareScorers('engine', own, theirs, hashString(`${DEPLOY_SEED}/deploy/${baseline}`))
  return {...c, baseline, candidate_ndcg10: mean(own), baseline_ndcg10: mean(theirs), compared_on: on}
}

function mean(values: Float64Array): number {
  let sum = 0
  for (const v of values) sum += v
  return sum / values.length
}

/**
 * The validation data the engine comparison uses: --valid, else the validation file the model
 * records it was trained with (when it still exists).
 */
function engineComparisonData(candidate: SavedModel, options: DeployOptions): LtrDataset | undefined {
  if (options.compareOn) return options.compareOn
  const recorded = candidate.data.valid
  return recorded !== undefined && existsSync(recorded) ? readLtrFile(recorded) : undefined
}

/** Formats a comparison for humans: "candidate 0.5800 vs engine's own order 0.7500: -0.1700 [95% -0.2500, -0.0900], 20 queries". */
export function formatComparison(c: DeployComparison): string {
  const signed = (x: number | null): string => (x === null || Number.isNaN(x) ? '-' : `${x >= 0 ? '+' : ''}${x.toFixed(METRIC_DIGITS)}`)
  const name = c.baseline === 'engine' ? 'the engine\'s own order (no reranker)' : 'the current model'
  const interval = c.low === null ? `no interval below ${COMPARISON_MIN_QUERIES} judged queries` : `paired bootstrap ${Math.round(100 * c.confidence)}% [${signed(c.low)}, ${signed(c.high)}]`
  return `vs ${name} on ${c.compared_on}: ${formatMetric(c.candidate_ndcg10)} vs ${formatMetric(c.baseline_ndcg10)}, ${signed(c.delta)} (${interval}, ${c.queries} judged queries)`
}

/** Validation NDCG@10 of a saved model: re-scored on `data` (columns aligned to it) if given, else its stored metric. */
function validationNdcg(saved: SavedModel, data: LtrDataset | undefined, where: string): number {
  if (data) return reportEvaluator(data).report(scoreDataset(fromSavedModel(saved), data))[METRIC]
  const value = saved.metrics.valid?.[METRIC]
  if (value === undefined) throw new InputError(`${where} field metrics.valid`, `a validation ${METRIC} (train with --valid, or deploy with --valid DATA)`, 'none')
  return value
}

/**
 * A candidate must read the same columns, in the same order, as the current model (otherwise their
 * validation numbers come from different feature spaces), and a model with query-level columns the
 * same recorded pool. Refusals are one-line InputErrors naming the candidate file and field.
 */
function checkSameFeatures(candidate: SavedModel, candidatePath: string, current: SavedModel, currentId: string): void {
  const want = current.feature_names
  const got = candidate.feature_names
  const differs = want.length !== got.length || want.some((name, i) => name !== got[i])
  if (differs) {
    let at = 0
    while (at < want.length && want[at] === got[at]) at++
    throw new InputError(
      `${candidatePath} field feature_names`,
      `the current model ${currentId}'s features (${formatNameList(want)}); a model over other features needs its own --registry`,
      `${formatNameList(got)} (column ${at + 1}: ${got[at] ?? 'none'} instead of ${want[at] ?? 'none'})`,
    )
  }
  if (hasQueryLevelColumns(want) && candidate.pool !== undefined && current.pool !== undefined && candidate.pool !== current.pool) {
    throw new InputError(`${candidatePath} field pool`, `${current.pool}, the pool the current model ${currentId}'s query-level columns were computed over`, String(candidate.pool))
  }
}

/**
 * The --valid data laid out in the model's columns: the logged engine score appended when the
 * model reads it, then the columns picked by name (alignColumns). A file lacking a model column,
 * or logged with another pool than a query-level model's, is a one-line InputError naming it.
 */
export function validationData(data: LtrDataset, saved: SavedModel, modelPath: string): LtrDataset {
  const appendScore = saved.feature_names.includes(ENGINE_SCORE_FEATURE) && !data.featureNames.includes(ENGINE_SCORE_FEATURE) && data.engineScores !== undefined
  const aligned = alignColumns(appendScore ? withEngineScoreFeature(data) : data, saved.feature_names, `the features of ${modelPath}`)
  if (hasQueryLevelColumns(saved.feature_names) && saved.pool !== undefined && data.pool !== undefined && data.pool !== saved.pool) {
    throw new InputError(`${data.source} field pool`, `${saved.pool}, the pool ${modelPath}'s query-level columns were computed over`, String(data.pool))
  }
  return aligned
}

/**
 * Deploys the model at `modelPath` if it is not worse than the current one (see module comment).
 * Refused (InputError): a model without trees, or one over other features than the current model.
 * A candidate that scores exactly like the current version changes nothing (`already`).
 */
export function deploy(dir: string, modelPath: string, options: DeployOptions = {}): DeployOutcome {
  const candidate = readModel(modelPath)
  if (candidate.trees.length === 0) {
    throw new InputError(`${modelPath} field trees`, 'at least one tree (a model without trees scores every candidate equally)', 'none')
  }
  // The comparison with no reranker at all depends only on the candidate and the data: done before taking the lock.
  const engineData = engineComparisonData(candidate, options)
  const order = options.engineOrder ?? (engineData ? defaultEngineOrder(engineData) : undefined)
  let engine: DeployComparison | undefined
  if (engineData && order) {
    const data = validationData(engineData, candidate, modelPath)
    engine = comparison('engine', reportEvaluator(data), scoreDataset(fromSavedModel(candidate), data), engineOrderScores(engineData, order), engineData.source)
  } else if (options.force === undefined) {
    const where = engineData ? engineData.source : options.compareOn ? options.compareOn.source : `${modelPath} field data.valid`
    throw new InputError(
      where,
      `validation data whose engine order is known, to compare the candidate with no reranker at all (--valid with a kt feature log that has engine_score, or --engine-order ${ENGINE_ORDER_CHOICES}; or --force to deploy compared with the current model only)`,
      engineData ? 'a file without engine_score, and no --engine-order' : 'no --valid and no existing validation file recorded in the model',
    )
  }
  const engineOrder = engine && order ? `${describeEngineOrder(order)} of ${engine.compared_on}` : null
  ensureDir(dir)
  return withRegistryLock(dir, options.lockWaitMs, () => deployLocked(dir, modelPath, candidate, options, engine, engineOrder))
}

function deployLocked(dir: string, modelPath: string, candidate: SavedModel, options: DeployOptions, engine: DeployComparison | undefined, engineOrder: string | null): DeployOutcome {
  const gate = {engine_ndcg10: engine?.baseline_ndcg10 ?? null, engine_order: engineOrder, ...(engine ? {} : {forced: options.force})}
  const index = readRegistry(dir)
  const current = currentVersion(index)
  const currentModel = current ? readVersionModel(dir, current) : undefined
  if (current && currentModel) {
    checkSameFeatures(candidate, modelPath, currentModel, current.id)
    if (sameScoringModel(candidate, currentModel)) {
      return {
        deployed: false, already: current.id, current: current.id, candidate_ndcg10: null, current_ndcg10: null, compared_on: 'nothing (same model)', removed: [],
        reason: `already deployed as ${current.id} (same feature_names and trees): nothing changed`, engine_ndcg10: null, engine_order: null, comparisons: [],
      }
    }
  }
  const compareOn = options.compareOn ? validationData(options.compareOn, candidate, modelPath) : undefined
  const comparedOn = compareOn ? compareOn.source : 'stored validation metrics'
  const candidateScore = validationNdcg(candidate, compareOn, modelPath)
  const currentScore = current && currentModel ? validationNdcg(currentModel, compareOn, join(dir, current.file)) : null
  const comparisons: DeployComparison[] = engine ? [engine] : []
  if (compareOn && currentModel) {
    comparisons.push(comparison('current', reportEvaluator(compareOn), scoreDataset(fromSavedModel(candidate), compareOn), scoreDataset(fromSavedModel(currentModel), compareOn), compareOn.source))
  }
  const outcome = {current: index.current, candidate_ndcg10: candidateScore, current_ndcg10: currentScore, compared_on: comparedOn, removed: [], ...gate, comparisons}
  // The gate: not worse than the better of the engine's own order and the current model.
  if (engine && engine.candidate_ndcg10 < engine.baseline_ndcg10) {
    return {
      ...outcome, deployed: false,
      reason: `rejected: validation ${METRIC} ${formatMetric(engine.candidate_ndcg10)} is worse than the engine's own order with no reranker (${formatMetric(engine.baseline_ndcg10)}, ${engineOrder})`,
    }
  }
  if (currentScore !== null && candidateScore < currentScore) {
    return {
      ...outcome, deployed: false,
      reason: `rejected: validation ${METRIC} ${formatMetric(candidateScore)} is worse than current ${index.current}'s ${formatMetric(currentScore)}`,
    }
  }
  const id = `v${index.next_version}`
  const file = `${id}.json`
  writeModel(join(dir, file), candidate)
  const version: RegistryVersion = {
    id, file, metrics: candidate.metrics, trees: candidate.trees.length,
    deployed_at: (options.now ?? new Date()).toISOString(), source: modelPath,
    ...(engine ? {engine_ndcg10: engine.baseline_ndcg10} : {forced: options.force}),
  }
  const versions = [...index.versions, version]
  const removed = versions.splice(0, Math.max(0, versions.length - KEEP_VERSIONS))
  writeRegistry(dir, {...index, current: id, next_version: index.next_version + 1, versions})
  for (const old of removed) rmSync(join(dir, old.file), {force: true})
  const engineNote = engine ? `, >= the engine's own order ${formatMetric(engine.baseline_ndcg10)}` : ` (FORCED without the comparison with the engine's own order: ${options.force})`
  return {
    ...outcome, deployed: true, current: id, version: id,
    removed: removed.map((v) => v.id),
    reason: currentScore === null ? `deployed: first version, validation ${METRIC} ${formatMetric(candidateScore)}${engineNote}` : `deployed: validation ${METRIC} ${formatMetric(candidateScore)} >= current ${formatMetric(currentScore)}${engineNote}`,
  }
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
      return new InputError(`${join(dir, version.file)} field trees`, `${version.trees} trees (as ${REGISTRY_INDEX} lists for ${version.id})`, String(saved.trees.length)).message
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
    throw new InputError(join(dir, REGISTRY_INDEX), 'an earlier kept version to roll back to', at < 0 ? 'no deployed model' : `only ${index.current}`)
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
export function loadDeployed(dir: string): {version: RegistryVersion; packed: PackedEnsemble; saved: SavedModel; file: string} | undefined {
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
  return {version: found.version, packed: new PackedEnsemble(fromSavedModel(found.saved)), saved: found.saved, file: join(dir, found.version.file)}
}
