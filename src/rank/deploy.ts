import {existsSync, statSync} from 'node:fs'
import {DEFAULT_CONFIDENCE} from '../stats/interval.js'
import {MAX_TEXT_LENGTH, UNSAFE_TEXT} from '../space/names.js'
import {InputError} from '../util/errors.js'
import {ensureDir} from '../util/fs.js'
import {hashString} from '../util/rng.js'
import {compareScorers, COMPARISON_MIN_QUERIES, judgedMean, type ScorerComparison} from './compare.js'
import type {LtrDataset} from './dataset.js'
import {GATE_ROUGH_BELOW_QUERIES, RERANKER_NONINFERIORITY_MARGIN} from './defaults.js'
import {
  defaultEngineOrder,
  describeEngineOrder,
  ENGINE_ORDER_CHOICES,
  engineOrderScores,
  type EngineOrder,
} from './engine-order.js'
import {scoreDataset} from './lambdamart.js'
import {fromSavedModel, readModel, sameScoringModel, type SavedModel} from './model.js'
import {PRIMARY_CUTOFF, reportEvaluator, type NdcgEvaluator} from './ndcg.js'
import {readLtrFile} from './parse.js'
import {describeSeen, fileSha256, seenOverlap, seenUse} from './provenance.js'
import {hasQueryLevelColumns} from './query-features.js'
import {addVersion, currentVersion, readRegistry, readVersionModel, withRegistryLock} from './registry.js'
import {alignColumns, ENGINE_SCORE_FEATURE, formatNameList, withEngineScoreFeature} from './splits.js'
import {formatMetric, signed} from './table.js'

/**
 * `kt rerank deploy`, the reranker's deploy gate (src/rank/README.md, "Deploy gate"): the candidate
 * and its baselines are scored on held-out data, never on data the candidate was trained or
 * selected on (its train file, or the validation file early stopping and `kt rerank tune` chose it
 * on: there a model of pure noise beats the engine; provenance.ts): --holdout, else the test file
 * the model records. It becomes the registry's current version only if non-inferior, by the lower
 * bound of the paired bootstrap interval of (candidate - baseline) >= -margin, to both the engine's
 * own order (no reranker, engine-order.ts) and the current model; otherwise nothing changes. No
 * held-out data, the model's own data, or an unknown engine order are refused unless forced with a
 * reason (kept with the version, with what the gate said). Only models over the same feature
 * columns are compared; a model without trees is refused; the current model again is a no-op.
 */

const METRIC = `ndcg@${PRIMARY_CUTOFF}` as const

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
  const c = compareScorers(baseline, own, theirs, hashString(`${DEPLOY_SEED}/deploy/${baseline}`))
  return {
    ...c,
    candidate_ndcg10: judgedMean(own),
    baseline_ndcg10: judgedMean(theirs),
    compared_on: on,
    margin,
    noninferior: c.low !== null && c.low >= -margin,
  }
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
    const sha256 = existsSync(file) && statSync(file).isFile() ? fileSha256(file) : null
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

/** `--force`'s reason: one line of safe text, kept in registry.json and printed. */
function checkReason(reason: string | undefined): string | undefined {
  if (reason === undefined) return undefined
  if (!reason.trim() || reason.length > MAX_TEXT_LENGTH || UNSAFE_TEXT.test(reason)) {
    throw new InputError(
      '--reason',
      `why the deploy is forced, one line of text (at most ${MAX_TEXT_LENGTH} characters) with --force`,
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
  engine?: DeployComparison
  engineOrder: string | null
  /** Why the gate refuses regardless of the comparisons (only when forced: otherwise these throw). */
  refusals: string[]
  notes: string[]
  margin: number
}

/**
 * Deploys the model at `modelPath` if the gate passes (the module comment). Refused (InputError,
 * exit 2): a model without trees, one over other features than the current model, no held-out data,
 * held-out data the model was trained or selected on, or an unknown engine order (the last three
 * unless forced). Rejected (deployed false, exit 1): not shown non-inferior to the engine's order or
 * the current model. A candidate that scores exactly like the current version changes nothing
 * (`already`). Runs under the registry's lock (registry.ts) from reading the index to writing it.
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
  const pre = judgeAgainstEngine(candidate, modelPath, options, force, margin)
  ensureDir(dir)
  return withRegistryLock(dir, options.lockWaitMs, () => deployLocked(dir, modelPath, candidate, options, force, pre))
}

/** The gate's work before the lock: the held-out data, its checks, and the comparison with the engine's order. */
function judgeAgainstEngine(
  candidate: SavedModel,
  modelPath: string,
  options: DeployOptions,
  force: string | undefined,
  margin: number,
): PreGate {
  const gate = gateData(candidate, options)
  const pre: PreGate = {gate, record: null, candidateNdcg10: null, engineOrder: null, refusals: [], notes: [], margin}
  if (!gate) {
    const got =
      candidate.data.test !== undefined
        ? `${candidate.data.test}, which no longer exists`
        : 'none (trained without --test), and no --holdout'
    refuseUnlessForced(
      pre,
      force,
      `${modelPath} field data.test`,
      'held-out data to judge the model on: --holdout FILE, data it was neither trained nor selected on (e.g. the test split that kt rerank log writes); or --force --reason',
      got,
      `no held-out data to judge it on (data.test: ${got})`,
    )
    return pre
  }
  pre.record = {file: gate.file, sha256: gate.sha256, chosen_by: gate.chosen_by, margin, rule: gateRule(margin)}
  checkHeldOut(candidate, modelPath, gate, force, pre)
  const data = validationData(gate.data, candidate, modelPath)
  const evaluator = reportEvaluator(data)
  const scores = scoreDataset(fromSavedModel(candidate), data)
  pre.candidateNdcg10 = evaluator.report(scores)[METRIC]
  const order = options.engineOrder ?? defaultEngineOrder(gate.data)
  if (order) {
    pre.engine = comparison('engine', evaluator, scores, engineOrderScores(gate.data, order), gate.file, margin)
    pre.engineOrder = `${describeEngineOrder(order)} of ${gate.file}`
  } else {
    refuseUnlessForced(
      pre,
      force,
      gate.file,
      `held-out data whose engine order is known, to compare the candidate with no reranker at all (a kt feature log with engine_score, or --engine-order ${ENGINE_ORDER_CHOICES}; or --force --reason to deploy compared with the current model only)`,
      'a file without engine_score, and no --engine-order',
      `the engine's own order in ${gate.file} is unknown (no engine_score, no --engine-order)`,
    )
  }
  return pre
}

/** Throws the refusal (InputError `where`, `expected`, `got`) unless forced; forced, records `refusal`. */
function refuseUnlessForced(
  pre: PreGate,
  force: string | undefined,
  where: string,
  expected: string,
  got: string,
  refusal: string,
): void {
  if (force === undefined) throw new InputError(where, expected, got)
  pre.refusals.push(refusal)
}

/** Refuses held-out data the model was trained or selected on (the same file or content, or shared queries); notes what could not be checked. */
function checkHeldOut(
  candidate: SavedModel,
  modelPath: string,
  gate: GateData,
  force: string | undefined,
  pre: PreGate,
): void {
  const hint = `to judge ${modelPath} (pass --holdout with a held-out file, e.g. the test split that kt rerank log writes; or --force --reason)`
  const seen = seenUse(candidate, gate.file, gate.sha256 ?? undefined)
  if (seen) {
    const what = `${describeSeen(seen.split)}${seen.by === 'content' ? ` (the same content: sha256 ${gate.sha256!.slice(0, 12)}...)` : ''}`
    refuseUnlessForced(
      pre,
      force,
      gate.file,
      `held-out data the model was neither trained nor selected on, ${hint}`,
      what,
      `${gate.file} is ${what}`,
    )
  } else {
    // not the same file: does it share queries with one (a subset of valid, or a file joined from several)?
    const {overlap, unchecked} = seenOverlap(candidate, gate.data)
    if (overlap) {
      const what = `${overlap.shared} of its ${overlap.of} judged queries (e.g. qid ${overlap.example}) also in its ${overlap.split === 'train' ? 'training' : 'validation'} file ${overlap.file}`
      refuseUnlessForced(
        pre,
        force,
        gate.file,
        `held-out data sharing no query with the data the model was trained or selected on, ${hint}`,
        what,
        `${gate.file} has ${what}`,
      )
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
}

/** The gate's work under the lock: the comparison with the current model, the verdict and the new version. */
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
    if (sameScoringModel(candidate, currentModel)) return alreadyDeployed(current.id)
  }
  const comparisons: DeployComparison[] = engine ? [engine] : []
  if (gate && currentModel && current) {
    const data = validationData(gate.data, candidate, modelPath) // the current model reads the same columns (checked above)
    const scores = (model: SavedModel): Float64Array => scoreDataset(fromSavedModel(model), data)
    comparisons.push(
      comparison('current', reportEvaluator(data), scores(candidate), scores(currentModel), gate.file, margin),
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
  const outcome = {
    current: index.current,
    candidate_ndcg10: pre.candidateNdcg10,
    current_ndcg10: comparisons.find((c) => c.baseline === 'current')?.baseline_ndcg10 ?? null,
    compared_on: gate?.file ?? null,
    gate: pre.record,
    removed: [] as string[],
    engine_ndcg10: engine?.baseline_ndcg10 ?? null,
    engine_order: pre.engineOrder,
    comparisons,
    notes,
  }
  const failures = comparisons.filter((c) => !c.noninferior).map((c) => failureText(c, pre, index.current))
  const gateSays = [...pre.refusals, ...failures]
  if (gateSays.length > 0 && force === undefined)
    return {...outcome, deployed: false, reason: `rejected on held-out ${gate!.file}: ${failures.join('; ')}`}
  const forced = gateSays.length > 0 ? force : undefined
  const override = forced === undefined ? {} : {forced, overrode: gateSays.join('; ')}
  const low = (baseline: DeployComparison['baseline']): number | null | undefined =>
    comparisons.find((c) => c.baseline === baseline)?.low
  const {version, removed} = addVersion(dir, index, candidate, {
    deployed_at: (options.now ?? new Date()).toISOString(),
    source: modelPath,
    ...(engine ? {engine_ndcg10: engine.baseline_ndcg10} : {}),
    ...(gate ? {holdout: gate.file, ...(gate.sha256 === null ? {} : {holdout_sha256: gate.sha256}), margin} : {}),
    ...(low('engine') != null ? {engine_delta_low: low('engine')!} : {}),
    ...(low('current') != null ? {current_delta_low: low('current')!} : {}),
    ...override,
  })
  const what = current ? `replaces ${current.id}` : 'first version'
  const reason =
    forced !== undefined
      ? `deployed (${what}), FORCED: ${forced}; the gate said: ${gateSays.join('; ')}`
      : `deployed (${what}): non-inferior on held-out ${gate!.file} (${comparisons.map((c) => `vs ${c.baseline === 'engine' ? "the engine's order" : `current ${current!.id}`} ${signed(c.delta)}, lower bound ${signed(c.low)}`).join('; ')}; margin ${margin})`
  return {...outcome, deployed: true, current: version.id, version: version.id, removed, reason, ...override}
}

/** The outcome of deploying the current model again: nothing changes. */
function alreadyDeployed(id: string): DeployOutcome {
  return {
    deployed: false,
    already: id,
    current: id,
    candidate_ndcg10: null,
    current_ndcg10: null,
    compared_on: null,
    gate: null,
    removed: [],
    reason: `already deployed as ${id} (same feature_names and trees): nothing changed`,
    engine_ndcg10: null,
    engine_order: null,
    comparisons: [],
    notes: [],
  }
}

/** Why a comparison fails the gate, in one clause. */
function failureText(c: DeployComparison, pre: PreGate, current: string | null): string {
  const name =
    c.baseline === 'engine' ? `the engine's own order with no reranker (${pre.engineOrder})` : `current ${current}`
  const bound =
    c.low === null
      ? `no interval (fewer than ${COMPARISON_MIN_QUERIES} judged queries)`
      : `lower bound ${signed(c.low)} < -${pre.margin}`
  return `not shown non-inferior to ${name}: ${METRIC} ${formatMetric(c.candidate_ndcg10)} vs ${formatMetric(c.baseline_ndcg10)}, ${signed(c.delta)}, ${bound}`
}
