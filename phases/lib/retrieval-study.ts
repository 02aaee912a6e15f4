import {existsSync, rmSync} from 'node:fs'
import {basename} from 'node:path'
import {fileURLToPath} from 'node:url'
import {Worker} from 'node:worker_threads'
import {runRoutedSweeps} from '../../src/study/sweeps.js'
import {analyzeStudy} from '../../src/search/analysis.js'
import {checkFrontLatency} from '../../src/eval/latency-check.js'
import {splitTimingMetrics} from '../../src/search/types.js'
import {StudyStore, type TrialRow} from '../../src/study/store.js'
import {RETRIEVAL_SPACE} from '../../src/engine/retrieval/space.js'
import {defaultConfig} from '../../src/space/space.js'
import {InputError} from '../../src/util/errors.js'
import type {Plan} from '../plan.js'
import type {RetrievalSearchResult} from '../report-types.js'

/** The id the engine's default configuration carries among the trials (no real trial has it). */
export const DEFAULTS_TRIAL = -1
/** Study names in the retrieval store start with this. */
const STUDY_PREFIX = 'retrieval'
/** The retrieval studies' store in the run folder (separate from the importance study's). */
export const RETRIEVAL_STUDY_FILE = 'retrieval-studies.sqlite'

export interface RetrievalStudyInput {
  readonly settings: NonNullable<Plan['retrieval']>
  /** Absolute path of the memory dataset. */
  readonly data: string
  /** How the report names the dataset. */
  readonly dataLabel: string
  readonly storage: string
  readonly seed: number
}

/**
 * The retrieval engine tuned on a memory dataset's fidelity tiers: one bi-objective study over all
 * queries (quality vs P99 latency) and one per query type, bundled into a routed profile; the
 * Pareto front with its hypervolume and the domain profiles chosen from it. A function of its
 * inputs alone, so it can run on a worker thread while the importance phases compute.
 */
export async function retrievalStudy(input: RetrievalStudyInput, progress: (line: string) => void): Promise<RetrievalSearchResult> {
  const {settings, data, seed} = input
  const result = await runRoutedSweeps({
    data, metric: settings.metric, storage: input.storage, studyPrefix: STUDY_PREFIX, optimizer: settings.optimizer, seed, maxBudget: settings.budget,
    log: progress,
  })
  if (!result.analysis) throw new Error('the retrieval study produced no bi-objective trials')
  // The engine's defaults compete too (as trial -1, measured like a trial at the full budget), so
  // no front point or domain profile is one the defaults beat on the same queries.
  // the sweeps' own objective: the dataset is loaded and the engines are built once
  const overall = result.objectiveFor(undefined).instance
  const budget = overall.fidelity?.max ?? 1
  const defaults = defaultConfig(RETRIEVAL_SPACE)
  const measured = await overall.evaluate(defaults, budget, {trialId: DEFAULTS_TRIAL, configId: 'defaults', seed})
  const store = StudyStore.open(input.storage, {mustExist: true})
  const trials = store.trials(`${STUDY_PREFIX}-all`)
  store.close()
  const defaultsRow: TrialRow = {
    study: `${STUDY_PREFIX}-all`, id: DEFAULTS_TRIAL, configId: 'defaults', config: defaults, budget, continues: null, info: {defaults: true}, status: 'ok',
    loss: measured.loss, values: measured.values ? [...measured.values] : null, metrics: measured.metrics ? {...measured.metrics} : null, checkpoint: null,
    error: null, tellSeq: null, asksBefore: null, startedAt: null, finishedAt: null, durationMs: null, worker: null,
  }
  const analysis = analyzeStudy([...trials, defaultsRow], undefined, undefined, settings.metric)
  const onFront = new Set(analysis.front.front.map((p) => p.trialId))
  const dominatedIds = new Set(analysis.front.dominated.map((p) => p.trialId))
  const trialRecords = [...trials, defaultsRow]
    .filter((t) => t.status === 'ok' && t.metrics && Number.isFinite(t.metrics.quality) && Number.isFinite(t.metrics.p99_ms))
    .map((t) => {
      const metrics = splitTimingMetrics(t.metrics as Record<string, number>).deterministic
      return {
        trial: t.id, budget: t.budget, queries: Number.isFinite(metrics.queries) ? metrics.queries : null,
        set: onFront.has(t.id) ? 'Pareto front' as const : dominatedIds.has(t.id) ? 'dominated' as const : 'lower budget' as const,
        quality: metrics.quality, p99_ms: metrics.p99_ms, config: t.config, metrics,
      }
    })
  // the front's P99 is the cost model; the same configurations on the clock go to the report's timing section
  const latencyCheck = checkFrontLatency(analysis, overall)
  const point = (p: {trialId: number; quality: number; latencyMs: number}) => ({trial: p.trialId, quality: p.quality, p99_ms: p.latencyMs})
  return {
    data: input.dataLabel,
    metric: settings.metric,
    optimizer: settings.optimizer,
    budget: settings.budget,
    studies: result.studies,
    store: basename(input.storage),
    missing_types: result.missing_types,
    default_quality: -measured.loss,
    front: {
      reference: {quality: analysis.front.reference.quality, p99_ms: analysis.front.reference.latencyMs, rule: analysis.front.reference.rule},
      points: analysis.front.front.map(point),
      dominated: analysis.front.dominated.map(point),
      hypervolume: analysis.front.hypervolume,
      hypervolume_share: analysis.front.hypervolumeShare,
    },
    trials: trialRecords,
    profiles: analysis.profiles.map((p) => ({
      name: p.profile, description: p.description, trial: p.trialId, config: p.config, metrics: p.metrics, on_front: p.onFront, rationale: p.rationale,
    })),
    routed: {base: result.routed.base, overrides: result.routed.overrides, per_type: result.routed.per_type, min_gain: result.routed.min_gain},
    ...(latencyCheck ? {latency_check: latencyCheck} : {}),
  }
}

const workerFile = fileURLToPath(new URL('./retrieval-worker.js', import.meta.url))

/**
 * Starts the retrieval study now, on a worker thread when running from the build (it needs
 * nothing the other phases compute, so it overlaps them); in this thread from TypeScript sources.
 * A fresh run starts a fresh store; a resumed run keeps it, so finished studies are not redone.
 */
export function startRetrievalStudy(input: RetrievalStudyInput, resume: boolean, progress: (line: string) => void): Promise<RetrievalSearchResult> {
  if (!resume) for (const suffix of ['', '-wal', '-shm']) rmSync(`${input.storage}${suffix}`, {force: true})
  if (!existsSync(workerFile) || !import.meta.url.endsWith('.js')) return retrievalStudy(input, progress)
  return new Promise((resolve, reject) => {
    const worker = new Worker(workerFile, {workerData: input})
    worker.on('message', (msg: {progress?: string; result?: RetrievalSearchResult; error?: {message: string; input?: {where: string; expected: string; got?: string}}}) => {
      if (msg.progress !== undefined) progress(msg.progress)
      else if (msg.result) resolve(msg.result)
      else if (msg.error) reject(msg.error.input ? new InputError(msg.error.input.where, msg.error.input.expected, msg.error.input.got) : new Error(msg.error.message))
    })
    worker.on('error', reject)
    worker.on('exit', (code) => {
      if (code !== 0) reject(new Error(`the retrieval study worker stopped with code ${code}`))
    })
  })
}
