import {existsSync, rmSync} from 'node:fs'
import {basename, dirname} from 'node:path'
import {fileURLToPath} from 'node:url'
import {Worker} from 'node:worker_threads'
import {runRoutedSweeps} from '../../src/study/sweeps.js'
import {analyzeStudy, frontTrialRecords, type StudyAnalysis} from '../../src/eval/retrieval-analysis.js'
import {checkFrontLatency} from '../../src/eval/latency-check.js'
import type {TrialRow} from '../../src/study/model.js'
import {openStorage} from '../../src/study/storage.js'
import {RETRIEVAL_SPACE} from '../../src/engine/retrieval/space.js'
import {defaultConfig} from '../../src/space/space.js'
import {InputError, describeValue} from '../../src/util/errors.js'
import type {MemoryDataset} from '../../src/data/conversations/types.js'
import {DEFAULTS_TRIAL_ID, evaluateHoldoutItems, frontAndProfileItems} from '../../src/search/holdout.js'
import {
  DEFAULT_HOLDOUT_SETTINGS,
  validateOnHoldout,
  type HoldoutValidationSettings,
} from '../../src/eval/holdout-validation.js'
import {writeRunQuestions} from '../../src/eval/question-results.js'
import {describeSplit, idSplit, parseSplit, splitDataset, splitIds} from '../../src/data/conversations/split.js'
import type {SplitSpec} from '../../src/data/conversations/split.js'
import {loadMemoryDataset} from '../../src/data/conversations/index.js'
import type {RoutedOverrides} from '../../src/engine/retrieval/classifier.js'
import {loadEngineFile, type EngineSpec} from '../../src/adapters/file.js'
import {createEngineObjective} from '../../src/adapters/objective.js'
import {evalQuality} from '../../src/eval/profile.js'
import {createObjective} from '../../src/eval/retrieval-objective.js'
import {analyzeObjectiveStudy} from '../../src/search/analysis.js'
import type {ProfileChoice} from '../../src/search/profiles.js'
import type {Objective} from '../../src/space/objective.js'
import type {Config} from '../../src/space/types.js'
import {engineHoldout} from '../../src/study/engine-holdout.js'
import {runSearch} from '../../src/study/search.js'
import type {Plan} from '../plan.js'
import type {RetrievalSearchResult} from '../../src/report/types.js'
import {frontRecord} from '../../src/report/front-chart.js'

/** The id the engine's default configuration carries among the trials (no real trial has it). */
export const DEFAULTS_TRIAL = DEFAULTS_TRIAL_ID
/** Study names in the retrieval store start with this. */
const STUDY_PREFIX = 'retrieval'
/** The retrieval studies' store in the run folder (separate from the importance study's). */
export const RETRIEVAL_STUDY_FILE = 'retrieval-studies.sqlite'

export interface RetrievalStudyInput {
  readonly settings: Omit<NonNullable<Plan['retrieval']>, 'data'>
  /** Absolute path of the memory dataset (absent for a command or http engine: it evaluates on its own data). */
  readonly data?: string
  /** How the report names the dataset. */
  readonly dataLabel: string
  readonly storage: string
  readonly seed: number
  /** Absolute path of an external engine file (the plan's retrieval.engine), when it tunes one. */
  readonly engine?: string
  /** The plan's bootstrap settings: the held-out validation's interval uses them. */
  readonly bootstrap?: {readonly resamples: number; readonly confidence: number}
}

/**
 * The retrieval engine tuned on a memory dataset's fidelity tiers: one bi-objective study over all
 * queries (quality vs P99 latency) and one per query type, bundled into a routed profile; the
 * Pareto front with its hypervolume and the domain profiles chosen from it. A function of its
 * inputs alone, so it can run on a worker thread while the importance phases compute.
 */
export async function retrievalStudy(
  input: RetrievalStudyInput,
  progress: (line: string) => void,
): Promise<RetrievalSearchResult> {
  if (input.engine) return engineRetrievalStudy(input, input.engine, progress)
  const {settings, seed} = input
  const data = input.data!
  const split = planSplit(settings, seed)
  const result = await runRoutedSweeps({
    data,
    metric: settings.metric,
    storage: input.storage,
    studyPrefix: STUDY_PREFIX,
    optimizer: settings.optimizer,
    seed,
    maxBudget: settings.budget,
    log: progress,
    ...(split ? {split} : {}),
  })
  if (!result.analysis) throw new Error('the retrieval study produced no bi-objective trials')
  // the sweeps' own objective: the dataset is loaded and the engines are built once
  const overall = result.objectiveFor(undefined).instance
  const study = `${STUDY_PREFIX}-all`
  const store = await openStorage(input.storage, {mustExist: true})
  const trials = await store.trials(study).finally(() => store.close())
  const defaults = await defaultsTrial(study, defaultConfig(RETRIEVAL_SPACE), overall, seed)
  const all = [...trials, defaults.row]
  const analysis = analyzeStudy(all)
  // the front's P99 is the cost model; the same configurations on the clock go to the report's timing section
  const latencyCheck = checkFrontLatency(analysis, overall)
  const routedBase = {...defaults.row.config, ...result.routed.base}
  const held = split
    ? await ktHoldout(input, split, all, analysis, {base: routedBase, overrides: result.routed.overrides}, progress)
    : undefined
  return {
    ...studyRecord(
      input,
      [...result.studies],
      result.missing_types,
      -defaults.measured.loss,
      all,
      analysis,
      analysis.profiles,
    ),
    // the routed profile's quality as kt eval --profile measures it (base plus overrides on every tuning query)
    routed: {
      base: result.routed.base,
      overrides: result.routed.overrides,
      per_type: result.routed.per_type,
      min_gain: result.routed.min_gain,
      quality: held
        ? held.routedQuality
        : await evalQuality(data, routedBase, result.routed.overrides, settings.metric),
    },
    ...(held ? {holdout: held.holdout, validation: held.validation} : {}),
    ...(latencyCheck ? {latency_check: latencyCheck} : {}),
  }
}

/**
 * The engine's defaults as a trial of the study (trial -1, measured like a full-budget trial), so
 * no front point or profile is one the defaults beat on the same queries.
 */
async function defaultsTrial(
  study: string,
  config: Config,
  objective: Objective,
  seed: number,
): Promise<{row: TrialRow; measured: Awaited<ReturnType<Objective['evaluate']>>}> {
  const budget = objective.fidelity?.max ?? 1
  const measured = await objective.evaluate(config, budget, {trialId: DEFAULTS_TRIAL, configId: 'defaults', seed})
  const row: TrialRow = {
    study,
    id: DEFAULTS_TRIAL,
    configId: 'defaults',
    config,
    budget,
    continues: null,
    info: {defaults: true},
    status: 'ok',
    loss: measured.loss,
    values: measured.values ? [...measured.values] : null,
    metrics: measured.metrics ? {...measured.metrics} : null,
    checkpoint: null,
    error: null,
    tellSeq: null,
    asksBefore: null,
    startedAt: null,
    finishedAt: null,
    durationMs: null,
    worker: null,
  }
  return {row, measured}
}

/** What every retrieval study's record holds, kt's engine or an engine file's: its settings, front, trials and profiles. */
function studyRecord(
  input: RetrievalStudyInput,
  studies: string[],
  missingTypes: RetrievalSearchResult['missing_types'],
  defaultQuality: number,
  all: readonly TrialRow[],
  analysis: StudyAnalysis,
  profiles: readonly ProfileChoice[],
) {
  const {settings} = input
  return {
    data: input.dataLabel,
    metric: settings.metric,
    optimizer: settings.optimizer,
    budget: settings.budget,
    studies,
    store: basename(input.storage),
    missing_types: missingTypes,
    default_quality: defaultQuality,
    front: frontRecord(analysis),
    trials: frontTrialRecords(all, analysis),
    profiles: profiles.map((p) => ({
      name: p.profile,
      description: p.description,
      trial: p.trialId,
      config: p.config,
      metrics: p.metrics,
      on_front: p.onFront,
      rationale: p.rationale,
    })),
  }
}

/**
 * kt's engine with a split: every front point, profile and the defaults on the held-out
 * conversations (quality and P99), then each deployable profile and the routed one against the
 * defaults there (paired, with its interval and verdict).
 */
async function ktHoldout(
  input: RetrievalStudyInput,
  split: SplitSpec,
  all: readonly TrialRow[],
  analysis: StudyAnalysis,
  routed: {base: Config; overrides: RoutedOverrides},
  progress: (line: string) => void,
) {
  const {settings, seed} = input
  const data = input.data!
  progress('scoring the front and the profiles on the held-out conversations')
  const loaded = loadMemoryDataset(data)
  const description = describeSplit(loaded, split)
  const tuning = splitDataset(loaded, split, 'train')
  const side = await createObjective({data, metric: settings.metric, split, part: 'holdout'})
  const byId = new Map(all.map((t) => [t.id, t]))
  const defaults = byId.get(DEFAULTS_TRIAL)!
  const holdout = await evaluateHoldoutItems(
    [
      ...frontAndProfileItems(analysis.front.front, analysis.profiles, (id) => byId.get(id)?.metrics),
      {trial: DEFAULTS_TRIAL, config: defaults.config, role: 'defaults', metrics: defaults.metrics},
    ],
    {objective: side, description},
    seed,
  )
  const routedQuality = await evalQuality(tuning, routed.base, routed.overrides, settings.metric)
  const validation = validateOnHoldout(
    splitDataset(loaded, split, 'holdout'),
    [
      ...analysis.profiles
        .filter((p) => p.config !== null)
        .map((p) => ({
          name: `retrieval-${p.profile}`,
          trial: p.trialId,
          config: p.config!,
          tuning_quality: p.metrics?.quality ?? null,
        })),
      {
        name: ROUTED_PROFILE,
        trial: null,
        config: routed.base,
        overrides: routed.overrides,
        tuning_quality: routedQuality,
      },
    ],
    validationSettings(input),
    description,
  )
  return {holdout, validation, routedQuality}
}

/** The name Phase 6 gives the routed profile (and its held-out check). */
export const ROUTED_PROFILE = 'retrieval-routed'

/**
 * Reads and checks the plan's retrieval inputs before the run writes anything: the memory dataset,
 * the split against it, and the engine file (a retrieval service). Returns the folder the engine's
 * command runs in (its scripts are inputs of the run too), when there is an engine.
 */
export async function checkRetrievalInputs(
  settings: RetrievalStudyInput['settings'],
  data: string,
  seed: number,
  engine?: string,
): Promise<{engineDir?: string}> {
  const split = planSplit(settings, seed)
  // the data is read even without a split: a file that is not a dataset must fail before --out is made
  const dataset = loadMemoryDataset(data)
  if (split) checkSplitIds(dataset, split, data, 'retrieval.split')
  return engine === undefined ? {} : {engineDir: serviceEngine(engine, "a plan's retrieval section").evaluate.cwd}
}

/** Every conversation id a split names is one of the data's (one line naming `where`.train[i] or .holdout[i] otherwise). */
export function checkSplitIds(dataset: MemoryDataset, split: SplitSpec, data: string, where: string): void {
  const ids = splitIds(dataset, split, where)
  const known = new Set(dataset.conversations.map((c) => c.id))
  for (const part of ['train', 'holdout'] as const)
    ids[part].forEach((id, i) => {
      if (!known.has(id))
        throw new InputError(`${where}.${part}[${i}]`, `a conversation id of ${data}`, describeValue(id))
    })
}

/** The plan's retrieval.split, seeded with the run's seed (undefined without one). */
export function planSplit(
  settings: Pick<RetrievalStudyInput['settings'], 'split'>,
  seed: number,
): SplitSpec | undefined {
  if (settings.split === undefined) return undefined
  return typeof settings.split === 'string'
    ? parseSplit(settings.split, seed, 'retrieval.split')
    : idSplit(settings.split.train.join(','), settings.split.holdout.join(','))
}

/**
 * An external engine tuned on the plan's conversations (a retrieval service) or on its own data (a
 * command or http engine of a kt_plan 2 plan, which has no data): one study over its tiers (quality = the plan's metric, P99 as the engine reports
 * it), the Pareto front, the engine file's own profile rules, its defaults competing as trial -1,
 * and, with a split, every front point and profile scored on the held-out conversations.
 */
async function engineRetrievalStudy(
  input: RetrievalStudyInput,
  engineFile: string,
  progress: (line: string) => void,
): Promise<RetrievalSearchResult> {
  const {settings, seed} = input
  const spec =
    input.data === undefined ? loadEngineFile(engineFile) : serviceEngine(engineFile, "a plan's retrieval section")
  const split = planSplit(settings, seed)
  // the plan's metric is the quality objective; latency is the engine's p99_ms
  const objectives = [
    {metric: settings.metric, direction: 'maximize' as const},
    {metric: 'p99_ms', direction: 'minimize' as const},
  ]
  const options = {
    file: engineFile,
    ...(input.data ? {data: input.data} : {}),
    ...(split ? {split, part: 'train'} : {}),
  }
  const study = `${STUDY_PREFIX}-engine-${spec.name}`
  const objective = await createEngineObjective(options)
  let all: TrialRow[]
  let measured: Awaited<ReturnType<Objective['evaluate']>>
  try {
    const outcome = await runSearch({
      storage: input.storage,
      study,
      objective: {name: 'engine', options},
      objectiveInstance: objective,
      optimizer: settings.optimizer,
      seed,
      maxBudget: settings.budget,
      onTrial: (t, o) => progress(`trial ${t.id} (budget ${t.budget}) ${o.status}`),
    })
    const defaults = await defaultsTrial(study, defaultConfig(spec.space), objective, seed)
    // a retrieval service reports the plan's metric as quality; a command or http engine under its own name
    all = [...outcome.trials, defaults.row].map((t) =>
      input.data === undefined && t.metrics ? {...t, metrics: {...t.metrics, quality: t.metrics[settings.metric]}} : t,
    )
    measured = defaults.measured
  } finally {
    await objective.close?.()
  }
  // the engine file's stated reference values, if any, for the front's hypervolume
  const stated = (metric: string) => spec.objectives.find((o) => o.metric === metric)?.reference
  const analysis = analyzeStudy(all, undefined, {quality: stated(settings.metric), latencyMs: stated('p99_ms')})
  const own = analyzeObjectiveStudy(all, objectives, spec.profiles)
  if (split) progress('scoring the front and the profiles on the held-out conversations, then validating the profiles')
  const held = split
    ? await engineStudyHoldout(input, serviceEngine(engineFile, 'a split'), options, all, analysis, own.profiles)
    : undefined
  const latency = spec.evaluate.kind === 'retrieval-service' ? spec.evaluate.latency : 'measured'
  const defaultQuality = measured.metrics?.[input.data === undefined ? settings.metric : 'quality'] ?? -measured.loss
  return {
    ...studyRecord(input, [study], [], defaultQuality, all, analysis, own.profiles),
    engine: {name: spec.name, file: basename(engineFile), latency},
    ...(held ? {holdout: held.report, validation: held.validation} : {}),
  }
}

/** The engine file a plan names, which must be a retrieval service (kt drives the plan's conversations through it). */
function serviceEngine(file: string, what: string): EngineSpec & {evaluate: {kind: 'retrieval-service'}} {
  const spec = loadEngineFile(file)
  if (spec.evaluate.kind !== 'retrieval-service')
    throw new InputError(
      `${file}: evaluate.kind`,
      `"retrieval-service" for ${what} (kt drives the plan's conversations through it)`,
      JSON.stringify(spec.evaluate.kind),
    )
  return spec as EngineSpec & {evaluate: {kind: 'retrieval-service'}}
}

/**
 * With a split: every front point, profile and the defaults on the held-out conversations, then
 * each of the engine's profiles against its defaults question by question (the verdict Phase 6
 * writes); the per-question results go beside report.json, for kt compare.
 */
async function engineStudyHoldout(
  input: RetrievalStudyInput,
  spec: EngineSpec & {evaluate: {kind: 'retrieval-service'}},
  options: Record<string, unknown>,
  all: readonly TrialRow[],
  analysis: StudyAnalysis,
  profiles: ReturnType<typeof analyzeObjectiveStudy>['profiles'],
) {
  const byId = new Map(all.map((t) => [t.id, t]))
  const metricsOf = (id: number | null) => (id === null ? undefined : byId.get(id)?.metrics)
  const kept = profiles.filter((p) => p.config !== null)
  const held = await engineHoldout({
    spec,
    options,
    seed: input.seed,
    quality: 'quality',
    items: frontAndProfileItems(analysis.front.front, kept, metricsOf),
    defaultsMetrics: byId.get(DEFAULTS_TRIAL)!.metrics,
    profiles: kept.map((p) => ({
      name: `retrieval-${p.profile}`,
      trial: p.trialId,
      config: p.config!,
      tuning_quality: metricsOf(p.trialId)?.[input.settings.metric] ?? metricsOf(p.trialId)?.quality ?? null,
    })),
    settings: validationSettings(input),
  })
  if (!held) return undefined
  const kind = spec.evaluate.latency
  const latency = (metrics: Record<string, number> | null | undefined) =>
    typeof metrics?.p99_ms === 'number' ? {p99: metrics.p99_ms, kind} : null
  // the first profile is kt compare's default side
  writeRunQuestions(dirname(input.storage), {
    engine: {name: spec.name, file: input.engine!},
    data: input.data!,
    questions: held.questions.ids.map((id, i) => ({id, category: held.questions.categories[i]})),
    systems: [
      ...kept.map((p) => ({
        name: p.profile,
        config: p.config!,
        rows: held.questions.profiles[`retrieval-${p.profile}`],
        latency: latency(p.metrics),
      })),
      {
        name: 'defaults',
        config: defaultConfig(spec.space),
        rows: held.questions.defaults,
        latency: latency(byId.get(DEFAULTS_TRIAL)!.metrics),
      },
    ],
  })
  return held
}

/** The held-out validation's settings from the plan: its metric and margin, its bootstrap's resamples and confidence. */
function validationSettings(input: RetrievalStudyInput): HoldoutValidationSettings {
  const d = DEFAULT_HOLDOUT_SETTINGS
  return {
    ...d,
    metric: input.settings.metric,
    margin: input.settings.margin ?? d.margin,
    confidence: input.bootstrap?.confidence ?? d.confidence,
    resamples: input.bootstrap?.resamples ?? d.resamples,
  }
}

const workerFile = fileURLToPath(new URL('./retrieval-worker.js', import.meta.url))

/**
 * Starts the retrieval study now, on a worker thread when running from the build (it needs
 * nothing the other phases compute, so it overlaps them); in this thread from TypeScript sources.
 * A fresh run starts a fresh store; a resumed run keeps it, so finished studies are not redone.
 */
export function startRetrievalStudy(
  input: RetrievalStudyInput,
  resume: boolean,
  progress: (line: string) => void,
): Promise<RetrievalSearchResult> {
  if (!resume) for (const suffix of ['', '-wal', '-shm']) rmSync(`${input.storage}${suffix}`, {force: true})
  if (!existsSync(workerFile) || !import.meta.url.endsWith('.js')) return retrievalStudy(input, progress)
  return new Promise((resolve, reject) => {
    const worker = new Worker(workerFile, {workerData: input})
    worker.on(
      'message',
      (msg: {
        progress?: string
        result?: RetrievalSearchResult
        error?: {message: string; input?: {where: string; expected: string; got?: string}}
      }) => {
        if (msg.progress !== undefined) progress(msg.progress)
        else if (msg.result) resolve(msg.result)
        else if (msg.error)
          reject(
            msg.error.input
              ? new InputError(msg.error.input.where, msg.error.input.expected, msg.error.input.got)
              : new Error(msg.error.message),
          )
      },
    )
    worker.on('error', reject)
    worker.on('exit', (code) => {
      if (code !== 0) reject(new Error(`the retrieval study worker stopped with code ${code}`))
    })
  })
}
