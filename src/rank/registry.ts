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
import {
  alignColumns,
  compareScorers,
  COMPARISON_MIN_QUERIES,
  ENGINE_SCORE_FEATURE,
  formatMetric,
  formatNameList,
  METRIC_DIGITS,
  withEngineScoreFeature,
  type ScorerComparison,
} from './report.js'
import {
  defaultEngineOrder,
  describeEngineOrder,
  ENGINE_ORDER_CHOICES,
  engineOrderScores,
  type EngineOrder,
} from './engine-order.js'
import {readLtrFile} from './parse.js'
import {hashString} from '../util/rng.js'
import {DEFAULT_CONFIDENCE} from '../stats/interval.js'
import {GATE_ROUGH_BELOW_QUERIES, RERANKER_NONINFERIORITY_MARGIN} from './defaults.js'
import {describeSeen, fileSha256, seenOverlap, seenUse} from './provenance.js'

/**
 * The reranker model registry: a folder with one JSON file per kept version and an index,
 * `registry.json`, naming the current version. Rules:
 * - deploy (the gate; src/rank/README.md, "Deploy gate"): the candidate and its baselines are
 *   scored on held-out data, never on data the candidate was trained or selected on (its train
 *   file, or the validation file early stopping and `kt rerank tune` chose it on: their figures
 *   are biased upward, and there a model of pure noise beats the engine; provenance.ts): --holdout,
 *   else the test file the model records. It replaces the current model only if it is
 *   non-inferior, by the lower bound of the paired bootstrap interval of (candidate - baseline)
 *   >= -margin, to both the engine's own order (no reranker at all, see engine-order.ts) and the
 *   current model; otherwise it is rejected and nothing changes. No held-out data, the model's
 *   own data, or an unknown engine order are refused unless forced with a reason (kept with the
 *   version, with what the gate said). Only models over the same feature columns are compared; a
 *   model without trees is refused; the current model deployed again is a no-op.
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
  /** NDCG@10 of the engine's own order (no reranker) on the held-out data it was compared on, when known. */
  engine_ndcg10?: number
  /** The held-out file the gate judged it on, its sha256, and the margin. */
  holdout?: string
  holdout_sha256?: string
  margin?: number
  /** Lower bounds of the paired intervals of (it - the engine's order) and (it - the model it replaced). */
  engine_delta_low?: number
  current_delta_low?: number
  /** Why it was deployed although the gate did not pass it (--force --reason), when it was, and what the gate said. */
  forced?: string
  overrode?: string
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
      holdout: z.string().optional(),
      holdout_sha256: z
        .string()
        .regex(/^[0-9a-f]{64}$/)
        .optional(),
      margin: z.number().nonnegative().optional(),
      engine_delta_low: z.number().optional(),
      current_delta_low: z.number().optional(),
      forced: z.string().optional(),
      overrode: z.string().optional(),
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
    throw new InputError(
      `${path} field ${issue.path.join('.') || '(top)'}`,
      `a kt reranker registry index (${issue.message})`,
    )
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

export interface DeployOutcome {
  deployed: boolean
  /** The version current after the call. */
  current: string | null
  /** The new version's id when deployed. */
  version?: string
  /** The current version's id when the candidate is the same model (nothing changed). */
  already?: string
  /** The candidate's NDCG@10 on the gate data; null when nothing was compared (the same model, or forced without held-out data). */
  candidate_ndcg10: number | null
  /** The current model's NDCG@10 on the gate data; null when there is none or nothing was compared. */
  current_ndcg10: number | null
  /** The held-out data file the gate scored the models on, or null. */
  compared_on: string | null
  /** The gate's data and rule; null when nothing was compared. */
  gate: GateRecord | null
  /** Version ids deleted to keep the last KEEP_VERSIONS. */
  removed: string[]
  reason: string
  /** NDCG@10 of the engine's own order (no reranker) on the gate data, or null when it was not compared (forced, or the same model). */
  engine_ndcg10: number | null
  /** How the engine's order was known and on which file ("the logged engine_score of test.jsonl"), or null. */
  engine_order: string | null
  /** Paired comparisons (candidate minus baseline, NDCG@10, bootstrap interval over the judged held-out queries, verdict) with the engine's order and the current model. */
  comparisons: DeployComparison[]
  /** What the reader should know about the verdict (rough intervals, a model without data hashes, ...). */
  notes: string[]
  /** Set when --force deployed what the gate did not pass: the reason given. */
  forced?: string
  /** With `forced`: what the gate said. */
  overrode?: string
}

/** The data the gate judged on, and its rule. */
interface GateRecord {
  file: string
  /** sha256 of the file's bytes (null for in-memory data without a file). */
  sha256: string | null
  /** "--holdout" or the model's recorded test file. */
  chosen_by: string
  margin: number
  rule: string
}

/** The candidate minus one baseline on the same held-out queries, with the non-inferiority verdict. */
export interface DeployComparison extends Omit<ScorerComparison, 'baseline'> {
  baseline: 'engine' | 'current'
  candidate_ndcg10: number
  baseline_ndcg10: number
  /** The data file both were scored on. */
  compared_on: string
  margin: number
  /** The interval's lower bound is >= -margin (false without an interval). */
  noninferior: boolean
}

export interface DeployOptions {
  /**
   * Held-out data to judge candidate and current model on (--holdout); default: the test file the
   * model records (its `data.test`) when it still exists. Data the candidate was trained or
   * selected on is refused unless forced.
   */
  holdout?: LtrDataset
  /** sha256 of the holdout's file (default: computed from `holdout.source` when that is a file). */
  holdoutSha256?: string
  /** How the engine's order is known (default: the logged engine score when the data has it). */
  engineOrder?: EngineOrder
  /** Deploy even when the gate does not pass (no held-out data, the model's own data, the engine's order unknown, not non-inferior): the reason, non-empty, recorded with the version. */
  force?: string
  /** Non-inferiority margin, absolute NDCG@10 (default RERANKER_NONINFERIORITY_MARGIN). */
  margin?: number
  now?: Date
  lockWaitMs?: number
}

/** Bootstrap seed of the deploy comparisons (the project's default seed, 42, with a label per baseline). */
const DEPLOY_SEED = 42

/** The gate's rule in words (reports, --json). */
function gateRule(margin: number, confidence = DEFAULT_CONFIDENCE): string {
  return `deploy when the lower bound of the ${Math.round(100 * confidence)}% paired bootstrap interval of ${METRIC} (candidate - baseline) on held-out queries is >= -${margin}, against the engine's own order and against the current model`
}

/** Per-query NDCG@10 comparison of the candidate's scores with a baseline's on `data`, and its non-inferiority verdict. */
function comparison(
  baseline: DeployComparison['baseline'],
  evaluator: NdcgEvaluator,
  candidate: Float64Array,
  other: Float64Array,
  on: string,
  margin: number,
): DeployComparison {
  const own = evaluator.perQuery(candidate, PRIMARY_CUTOFF)
  const theirs = evaluator.perQuery(other, PRIMARY_CUTOFF)
  const c = compareScorers('engine', own, theirs, hashString(`${DEPLOY_SEED}/deploy/${baseline}`))
  return {
    ...c,
    baseline,
    candidate_ndcg10: mean(own),
    baseline_ndcg10: mean(theirs),
    compared_on: on,
    margin,
    noninferior: c.low !== null && c.low >= -margin,
  }
}

function mean(values: Float64Array): number {
  let sum = 0
  for (const v of values) sum += v
  return sum / values.length
}

interface GateData {
  data: LtrDataset
  file: string
  sha256: string | null
  chosen_by: string
}

/** The held-out data the gate judges on: --holdout, else the test file the model records (when it still exists). */
function gateData(candidate: SavedModel, options: DeployOptions): GateData | undefined {
  if (options.holdout) {
    const file = options.holdout.source
    const sha256 = options.holdoutSha256 ?? (existsSync(file) && statSync(file).isFile() ? fileSha256(file) : null)
    return {data: options.holdout, file, sha256, chosen_by: '--holdout'}
  }
  const recorded = candidate.data.test
  if (recorded === undefined || !existsSync(recorded)) return undefined
  return {
    data: readLtrFile(recorded),
    file: recorded,
    sha256: fileSha256(recorded),
    chosen_by: 'the test file the model records (data.test)',
  }
}

const signed = (x: number | null): string =>
  x === null || Number.isNaN(x) ? '-' : `${x >= 0 ? '+' : ''}${x.toFixed(METRIC_DIGITS)}`

/** Formats a comparison for humans: "vs the engine's own order (no reranker) on F: 0.5800 vs 0.7500, -0.1700 (paired bootstrap 95% [-0.2500, -0.0900], 20 judged queries): NOT non-inferior (lower bound -0.2500 < -0.01)". */
export function formatComparison(c: DeployComparison): string {
  const name = c.baseline === 'engine' ? "the engine's own order (no reranker)" : 'the current model'
  const interval =
    c.low === null
      ? `no interval below ${COMPARISON_MIN_QUERIES} judged queries`
      : `paired bootstrap ${Math.round(100 * c.confidence)}% [${signed(c.low)}, ${signed(c.high)}]`
  const verdict =
    c.low === null
      ? 'NOT shown non-inferior (no interval)'
      : c.noninferior
        ? `non-inferior (lower bound ${signed(c.low)} >= -${c.margin})`
        : `NOT shown non-inferior (lower bound ${signed(c.low)} < -${c.margin})`
  return `vs ${name} on ${c.compared_on}: ${formatMetric(c.candidate_ndcg10)} vs ${formatMetric(c.baseline_ndcg10)}, ${signed(c.delta)} (${interval}, ${c.queries} judged queries): ${verdict}`
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
  if (
    hasQueryLevelColumns(want) &&
    candidate.pool !== undefined &&
    current.pool !== undefined &&
    candidate.pool !== current.pool
  ) {
    throw new InputError(
      `${candidatePath} field pool`,
      `${current.pool}, the pool the current model ${currentId}'s query-level columns were computed over`,
      String(candidate.pool),
    )
  }
}

/**
 * The gate data laid out in the model's columns: the logged engine score appended when the
 * model reads it, then the columns picked by name (alignColumns). A file lacking a model column,
 * or logged with another pool than a query-level model's, is a one-line InputError naming it.
 */
function validationData(data: LtrDataset, saved: SavedModel, modelPath: string): LtrDataset {
  const appendScore =
    saved.feature_names.includes(ENGINE_SCORE_FEATURE) &&
    !data.featureNames.includes(ENGINE_SCORE_FEATURE) &&
    data.engineScores !== undefined
  const aligned = alignColumns(
    appendScore ? withEngineScoreFeature(data) : data,
    saved.feature_names,
    `the features of ${modelPath}`,
  )
  if (
    hasQueryLevelColumns(saved.feature_names) &&
    saved.pool !== undefined &&
    data.pool !== undefined &&
    data.pool !== saved.pool
  ) {
    throw new InputError(
      `${data.source} field pool`,
      `${saved.pool}, the pool ${modelPath}'s query-level columns were computed over`,
      String(data.pool),
    )
  }
  return aligned
}

/** `--force`'s reason: one non-empty line (it is kept in registry.json and printed). */
const MAX_REASON_CHARS = 2000

function checkReason(reason: string | undefined): string | undefined {
  if (reason === undefined) return undefined

  if (!reason.trim() || reason.length > MAX_REASON_CHARS || /[\u0000-\u001f\u007f\u2028\u2029]/.test(reason)) {
    throw new InputError(
      '--reason',
      `why the deploy is forced, one line of text (at most ${MAX_REASON_CHARS} characters) with --force`,
      reason.trim() ? JSON.stringify(reason.slice(0, 40)) : 'nothing',
    )
  }
  return reason
}

/** Everything the gate measured before taking the registry's lock (it depends only on the candidate and the data). */
interface PreGate {
  gate: GateData | undefined
  record: GateRecord | null
  /** The candidate's NDCG@10 on the gate data (judged queries). */
  candidateNdcg10: number | null
  engine: DeployComparison | undefined
  engineOrder: string | null
  /** Why the gate refuses regardless of the comparisons (only when forced: otherwise these throw). */
  refusals: string[]
  notes: string[]
  margin: number
}

/**
 * Deploys the model at `modelPath` if the gate passes (see the module comment and src/rank/README.md,
 * "Deploy gate"). Refused (InputError, exit 2): a model without trees, one over other features than
 * the current model, no held-out data, held-out data the model was trained or selected on, or an
 * unknown engine order (the last three unless forced). Rejected (deployed false, exit 1): not
 * shown non-inferior to the engine's order or the current model. A candidate that scores exactly
 * like the current version changes nothing (`already`).
 */
export function deploy(dir: string, modelPath: string, options: DeployOptions = {}): DeployOutcome {
  const force = checkReason(options.force)
  const margin = options.margin ?? RERANKER_NONINFERIORITY_MARGIN
  if (!(Number.isFinite(margin) && margin >= 0))
    throw new InputError('--margin', 'a non-negative absolute NDCG@10 difference', String(margin))
  const candidate = readModel(modelPath)
  if (candidate.trees.length === 0) {
    throw new InputError(
      `${modelPath} field trees`,
      'at least one tree (a model without trees scores every candidate equally)',
      'none',
    )
  }
  const pre: PreGate = {
    gate: gateData(candidate, options),
    record: null,
    candidateNdcg10: null,
    engine: undefined,
    engineOrder: null,
    refusals: [],
    notes: [],
    margin,
  }
  const {gate} = pre
  if (!gate) {
    const got =
      candidate.data.test !== undefined
        ? `${candidate.data.test}, which no longer exists`
        : 'none (trained without --test), and no --holdout'
    if (force === undefined)
      throw new InputError(
        `${modelPath} field data.test`,
        'held-out data to judge the model on: --holdout FILE, data it was neither trained nor selected on (e.g. the test split that kt rerank log writes); or --force --reason',
        got,
      )
    pre.refusals.push(`no held-out data to judge it on (data.test: ${got})`)
  } else {
    pre.record = {file: gate.file, sha256: gate.sha256, chosen_by: gate.chosen_by, margin, rule: gateRule(margin)}
    const seen = seenUse(candidate, gate.file, gate.sha256 ?? undefined)
    if (seen) {
      const what = `${describeSeen(seen.split)}${seen.by === 'content' ? ` (the same content: sha256 ${gate.sha256!.slice(0, 12)}...)` : ''}`
      if (force === undefined) {
        throw new InputError(
          gate.file,
          `held-out data the model was neither trained nor selected on, to judge ${modelPath} (pass --holdout with a held-out file, e.g. the test split that kt rerank log writes; or --force --reason)`,
          what,
        )
      }
      pre.refusals.push(`${gate.file} is ${what}`)
    } else {
      // not the same file: does it share queries with one (a subset of valid, or a file joined from several)?
      const {overlap, unchecked} = seenOverlap(candidate, gate.data)
      if (overlap) {
        const what = `${overlap.shared} of its ${overlap.of} judged queries (e.g. qid ${overlap.example}) also in its ${overlap.split === 'train' ? 'training' : 'validation'} file ${overlap.file}`
        if (force === undefined) {
          throw new InputError(
            gate.file,
            `held-out data sharing no query with the data the model was trained or selected on, to judge ${modelPath} (pass --holdout with a held-out file, e.g. the test split that kt rerank log writes; or --force --reason)`,
            what,
          )
        }
        pre.refusals.push(`${gate.file} has ${what}`)
      }
      if (unchecked.length > 0)
        pre.notes.push(`query overlap with ${unchecked.join(', ')} not checked (gone, or changed since training)`)
    }
    if (candidate.data_sha256 === undefined)
      pre.notes.push(
        `${modelPath} records no data hashes (saved by an older kt): the held-out file was checked against its training and validation files by path only`,
      )
    else if (
      gate.chosen_by !== '--holdout' &&
      candidate.data_sha256.test !== undefined &&
      candidate.data_sha256.test !== gate.sha256
    )
      pre.notes.push(`${gate.file} changed since training (its sha256 differs from the recorded one)`)
    const data = validationData(gate.data, candidate, modelPath)
    const evaluator = reportEvaluator(data)
    const scores = scoreDataset(fromSavedModel(candidate), data)
    pre.candidateNdcg10 = evaluator.report(scores)[METRIC]
    const order = options.engineOrder ?? defaultEngineOrder(gate.data)
    if (order) {
      pre.engine = comparison('engine', evaluator, scores, engineOrderScores(gate.data, order), gate.file, margin)
      pre.engineOrder = `${describeEngineOrder(order)} of ${gate.file}`
    } else if (force === undefined) {
      throw new InputError(
        gate.file,
        `held-out data whose engine order is known, to compare the candidate with no reranker at all (a kt feature log with engine_score, or --engine-order ${ENGINE_ORDER_CHOICES}; or --force --reason to deploy compared with the current model only)`,
        'a file without engine_score, and no --engine-order',
      )
    } else {
      pre.refusals.push(`the engine's own order in ${gate.file} is unknown (no engine_score, no --engine-order)`)
    }
  }
  ensureDir(dir)
  return withRegistryLock(dir, options.lockWaitMs, () => deployLocked(dir, modelPath, candidate, options, force, pre))
}

function deployLocked(
  dir: string,
  modelPath: string,
  candidate: SavedModel,
  options: DeployOptions,
  force: string | undefined,
  pre: PreGate,
): DeployOutcome {
  const {gate, engine, margin} = pre
  const notes = [...pre.notes]
  const index = readRegistry(dir)
  const current = currentVersion(index)
  const currentModel = current ? readVersionModel(dir, current) : undefined
  if (current && currentModel) {
    checkSameFeatures(candidate, modelPath, currentModel, current.id)
    if (sameScoringModel(candidate, currentModel)) {
      return {
        deployed: false,
        already: current.id,
        current: current.id,
        candidate_ndcg10: null,
        current_ndcg10: null,
        compared_on: null,
        gate: null,
        removed: [],
        reason: `already deployed as ${current.id} (same feature_names and trees): nothing changed`,
        engine_ndcg10: null,
        engine_order: null,
        comparisons: [],
        notes: [],
      }
    }
  }
  const comparisons: DeployComparison[] = engine ? [engine] : []
  if (gate && currentModel && current) {
    const data = validationData(gate.data, candidate, modelPath) // the current model reads the same columns (checked above)
    comparisons.push(
      comparison(
        'current',
        reportEvaluator(data),
        scoreDataset(fromSavedModel(candidate), data),
        scoreDataset(fromSavedModel(currentModel), data),
        gate.file,
        margin,
      ),
    )
    const seen = seenUse(currentModel, gate.file, gate.sha256 ?? undefined)
    if (seen)
      notes.push(
        `${gate.file} is the current model ${current.id}'s ${seen.split === 'train' ? 'training' : 'validation'} data: the comparison with it favours ${current.id}`,
      )
  }
  const judged = comparisons[0]?.queries
  if (judged !== undefined && judged < GATE_ROUGH_BELOW_QUERIES)
    notes.push(
      `only ${judged} judged held-out queries: below ${GATE_ROUGH_BELOW_QUERIES} the bootstrap interval undercovers, so the verdict is rough`,
    )
  const candidateScore = pre.candidateNdcg10
  const currentScore = comparisons.find((c) => c.baseline === 'current')?.baseline_ndcg10 ?? null
  const outcome = {
    current: index.current,
    candidate_ndcg10: candidateScore,
    current_ndcg10: currentScore,
    compared_on: gate?.file ?? null,
    gate: pre.record,
    removed: [] as string[],
    engine_ndcg10: engine?.baseline_ndcg10 ?? null,
    engine_order: pre.engineOrder,
    comparisons,
    notes,
  }
  const failing = comparisons.filter((c) => !c.noninferior)
  const failure = (c: DeployComparison): string => {
    const name =
      c.baseline === 'engine'
        ? `the engine's own order with no reranker (${pre.engineOrder})`
        : `current ${index.current}`
    const bound =
      c.low === null
        ? `no interval (fewer than ${COMPARISON_MIN_QUERIES} judged queries)`
        : `lower bound ${signed(c.low)} < -${margin}`
    return `not shown non-inferior to ${name}: ${METRIC} ${formatMetric(c.candidate_ndcg10)} vs ${formatMetric(c.baseline_ndcg10)}, ${signed(c.delta)}, ${bound}`
  }
  const gateSays = [...pre.refusals, ...failing.map(failure)]
  if (gateSays.length > 0 && force === undefined) {
    return {
      ...outcome,
      deployed: false,
      reason: `rejected on held-out ${gate!.file}: ${failing.map(failure).join('; ')}`,
    }
  }
  const forced = gateSays.length > 0 ? force : undefined
  const id = `v${index.next_version}`
  const file = `${id}.json`
  writeModel(join(dir, file), candidate)
  const low = (baseline: DeployComparison['baseline']): number | null | undefined =>
    comparisons.find((c) => c.baseline === baseline)?.low
  const version: RegistryVersion = {
    id,
    file,
    metrics: candidate.metrics,
    trees: candidate.trees.length,
    deployed_at: (options.now ?? new Date()).toISOString(),
    source: modelPath,
    ...(engine ? {engine_ndcg10: engine.baseline_ndcg10} : {}),
    ...(gate ? {holdout: gate.file, ...(gate.sha256 === null ? {} : {holdout_sha256: gate.sha256}), margin} : {}),
    ...(low('engine') != null ? {engine_delta_low: low('engine')!} : {}),
    ...(low('current') != null ? {current_delta_low: low('current')!} : {}),
    ...(forced === undefined ? {} : {forced, overrode: gateSays.join('; ')}),
  }
  const versions = [...index.versions, version]
  const removed = versions.splice(0, Math.max(0, versions.length - KEEP_VERSIONS))
  writeRegistry(dir, {...index, current: id, next_version: index.next_version + 1, versions})
  for (const old of removed) rmSync(join(dir, old.file), {force: true})
  const what = current ? `replaces ${current.id}` : 'first version'
  const reason =
    forced !== undefined
      ? `deployed (${what}), FORCED: ${forced}; the gate said: ${gateSays.join('; ')}`
      : `deployed (${what}): non-inferior on held-out ${gate!.file} (${comparisons.map((c) => `vs ${c.baseline === 'engine' ? "the engine's order" : `current ${current!.id}`} ${signed(c.delta)}, lower bound ${signed(c.low)}`).join('; ')}; margin ${margin})`
  return {
    ...outcome,
    deployed: true,
    current: id,
    version: id,
    removed: removed.map((v) => v.id),
    reason,
    ...(forced === undefined ? {} : {forced, overrode: gateSays.join('; ')}),
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
