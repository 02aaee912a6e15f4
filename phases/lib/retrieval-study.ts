import {existsSync, rmSync} from 'node:fs'
import {basename, dirname} from 'node:path'
import {fileURLToPath} from 'node:url'
import {Worker} from 'node:worker_threads'
import {runRoutedSweeps} from '../../src/study/sweeps.js'
import {analyzeStudy, frontTrialRecords} from '../../src/eval/retrieval-analysis.js'
import {checkFrontLatency} from '../../src/eval/latency-check.js'
import type {TrialRow} from '../../src/study/model.js'
import {openStorage} from '../../src/study/storage.js'
import {RETRIEVAL_SPACE} from '../../src/engine/retrieval/space.js'
import {defaultConfig} from '../../src/space/space.js'
import {InputError} from '../../src/util/errors.js'
import {DEFAULTS_TRIAL_ID, frontAndProfileItems} from '../../src/search/holdout.js'
import {DEFAULT_HOLDOUT_SETTINGS} from '../../src/eval/holdout-validation.js'
import {writeRunQuestions} from '../../src/eval/question-results.js'
import {parseSplit, idSplit, type SplitSpec} from '../../src/data/conversations/split.js'
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
  readonly settings: NonNullable<Plan['retrieval']>
  /** Absolute path of the memory dataset. */
  readonly data: string
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
  const {settings, data, seed} = input
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
  // The engine's defaults compete too (as trial -1, measured like a trial at the full budget), so
  // no front point or domain profile is one the defaults beat on the same queries.
  // the sweeps' own objective: the dataset is loaded and the engines are built once
  const overall = result.objectiveFor(undefined).instance
  const budget = overall.fidelity?.max ?? 1
  const defaults = defaultConfig(RETRIEVAL_SPACE)
  const measured = await overall.evaluate(defaults, budget, {trialId: DEFAULTS_TRIAL, configId: 'defaults', seed})
  const store = await openStorage(input.storage, {mustExist: true})
  const trials = await store.trials(`${STUDY_PREFIX}-all`).finally(() => store.close())
  const defaultsRow: TrialRow = {
    study: `${STUDY_PREFIX}-all`,
    id: DEFAULTS_TRIAL,
    configId: 'defaults',
    config: defaults,
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
  const analysis = analyzeStudy([...trials, defaultsRow])
  const trialRecords = frontTrialRecords([...trials, defaultsRow], analysis)
  // the front's P99 is the cost model; the same configurations on the clock go to the report's timing section
  const latencyCheck = checkFrontLatency(analysis, overall)
  const routedBase = {...defaults, ...result.routed.base}
  const {evalQuality} = await import('../../src/eval/profile.js')
  let holdout: RetrievalSearchResult['holdout']
  let validation: RetrievalSearchResult['validation']
  let tuningData: string | import('../../src/data/conversations/types.js').MemoryDataset = data
  if (split) {
    // every front point, profile and the defaults on the held-out conversations (quality and P99),
    // then each deployable profile against the defaults there (paired, with its interval and verdict)
    const {createObjective} = await import('../../src/eval/retrieval-objective.js')
    const {evaluateHoldoutItems} = await import('../../src/search/holdout.js')
    const {splitDataset, describeSplit} = await import('../../src/data/conversations/split.js')
    const {loadMemoryDataset} = await import('../../src/data/conversations/index.js')
    const {validateOnHoldout} = await import('../../src/eval/holdout-validation.js')
    progress('scoring the front and the profiles on the held-out conversations')
    const loaded = loadMemoryDataset(data)
    const description = describeSplit(loaded, split)
    tuningData = splitDataset(loaded, split, 'train')
    const side = await createObjective({data, metric: settings.metric, split, part: 'holdout'})
    const byId = new Map([...trials, defaultsRow].map((t) => [t.id, t]))
    holdout = await evaluateHoldoutItems(
      [
        ...frontAndProfileItems(analysis.front.front, analysis.profiles, (id) => byId.get(id)?.metrics),
        {trial: DEFAULTS_TRIAL, config: defaults, role: 'defaults', metrics: defaultsRow.metrics},
      ],
      {objective: side, description},
      seed,
    )
    validation = validateOnHoldout(
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
          config: routedBase,
          overrides: result.routed.overrides,
          tuning_quality: await evalQuality(tuningData, routedBase, result.routed.overrides, settings.metric),
        },
      ],
      validationSettings(input),
      description,
    )
  }
  return {
    data: input.dataLabel,
    metric: settings.metric,
    optimizer: settings.optimizer,
    budget: settings.budget,
    studies: result.studies,
    store: basename(input.storage),
    missing_types: result.missing_types,
    default_quality: -measured.loss,
    front: frontRecord(analysis),
    trials: trialRecords,
    profiles: analysis.profiles.map((p) => ({
      name: p.profile,
      description: p.description,
      trial: p.trialId,
      config: p.config,
      metrics: p.metrics,
      on_front: p.onFront,
      rationale: p.rationale,
    })),
    // the routed profile's quality as kt eval --profile measures it (base plus overrides on every tuning query)
    routed: {
      base: result.routed.base,
      overrides: result.routed.overrides,
      per_type: result.routed.per_type,
      min_gain: result.routed.min_gain,
      quality:
        validation?.profiles.find((p) => p.name === ROUTED_PROFILE)?.tuning_quality ??
        (await evalQuality(tuningData, routedBase, result.routed.overrides, settings.metric)),
    },
    ...(holdout ? {holdout} : {}),
    ...(validation ? {validation} : {}),
    ...(latencyCheck ? {latency_check: latencyCheck} : {}),
  }
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
  const {loadMemoryDataset} = await import('../../src/data/conversations/index.js')
  const {splitIds} = await import('../../src/data/conversations/split.js')
  const split = planSplit(settings, seed)
  const dataset = loadMemoryDataset(data)
  if (split) {
    const ids = splitIds(dataset, split, 'retrieval.split')
    const known = new Set(dataset.conversations.map((c) => c.id))
    for (const part of ['train', 'holdout'] as const)
      ids[part].forEach((id, i) => {
        if (!known.has(id))
          throw new InputError(`retrieval.split.${part}[${i}]`, `a conversation id of ${data}`, JSON.stringify(id))
      })
  }
  if (engine === undefined) return {}
  const {loadEngineFile} = await import('../../src/engines/file.js')
  const spec = loadEngineFile(engine)
  if (spec.evaluate.kind !== 'retrieval-service')
    throw new InputError(
      `${engine}: evaluate.kind`,
      '"retrieval-service" for a plan\'s retrieval section (kt drives the plan\'s conversations through it)',
      JSON.stringify(spec.evaluate.kind),
    )
  return {engineDir: spec.evaluate.cwd}
}

/** The plan's retrieval.split, seeded with the run's seed (undefined without one). */
export function planSplit(settings: RetrievalStudyInput['settings'], seed: number): SplitSpec | undefined {
  if (settings.split === undefined) return undefined
  return typeof settings.split === 'string'
    ? parseSplit(settings.split, seed, 'retrieval.split')
    : idSplit(settings.split.train.join(','), settings.split.holdout.join(','))
}

/**
 * An external engine (an engine file whose evaluate.kind is retrieval-service) tuned on the plan's
 * conversations: one study over its tiers (quality = the plan's metric, P99 as the engine reports
 * it), the Pareto front, the engine file's own profile rules, its defaults competing as trial -1,
 * and, with a split, every front point and profile scored on the held-out conversations.
 */
async function engineRetrievalStudy(
  input: RetrievalStudyInput,
  engineFile: string,
  progress: (line: string) => void,
): Promise<RetrievalSearchResult> {
  const {settings, data, seed} = input
  const {loadEngineFile} = await import('../../src/engines/file.js')
  const {createEngineObjective} = await import('../../src/engines/objective.js')
  const {runSearch} = await import('../../src/study/search.js')
  const {analyzeObjectiveStudy} = await import('../../src/search/analysis.js')
  const {engineHoldout} = await import('../../src/study/engine-holdout.js')
  const spec = loadEngineFile(engineFile)
  if (spec.evaluate.kind !== 'retrieval-service')
    throw new InputError(
      `${engineFile}: evaluate.kind`,
      '"retrieval-service" for a plan\'s retrieval section (kt drives the plan\'s conversations through it)',
      JSON.stringify(spec.evaluate.kind),
    )
  const split = planSplit(settings, seed)
  // the plan's metric is the quality objective; latency is the engine's p99_ms
  const objectives = [
    {metric: settings.metric, direction: 'maximize' as const},
    {metric: 'p99_ms', direction: 'minimize' as const},
  ]
  const tuned = {...spec, objectives}
  const options = {file: engineFile, data, ...(split ? {split, part: 'train'} : {})}
  const study = `${STUDY_PREFIX}-engine-${spec.name}`
  const objective = await createEngineObjective(options)
  const budget = objective.fidelity?.max ?? 1
  let trials: TrialRow[]
  let measured: Awaited<ReturnType<typeof objective.evaluate>>
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
    trials = outcome.trials
    // the defaults compete as trial -1, measured like a full-budget trial
    measured = await objective.evaluate(defaultConfig(spec.space), budget, {
      trialId: DEFAULTS_TRIAL,
      configId: 'defaults',
      seed,
    })
  } finally {
    await objective.close?.()
  }
  const defaultsRow: TrialRow = {
    study,
    id: DEFAULTS_TRIAL,
    configId: 'defaults',
    config: defaultConfig(spec.space),
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
  const all = [...trials, defaultsRow]
  const analysis = analyzeStudy(all)
  const own = analyzeObjectiveStudy(all, objectives, tuned.profiles)
  const byId = new Map(all.map((t) => [t.id, t]))
  if (split) progress('scoring the front and the profiles on the held-out conversations, then validating the profiles')
  // every front point, profile and the defaults on the held-out conversations, then each of the
  // engine's profiles against its defaults question by question: the verdict Phase 6 writes
  const held = await engineHoldout({
    spec,
    options,
    seed,
    quality: 'quality',
    items: [
      ...analysis.front.front.map((p) => ({
        trial: p.trialId,
        config: p.config,
        role: 'front',
        metrics: byId.get(p.trialId)?.metrics,
      })),
      ...own.profiles
        .filter((p) => p.trialId !== null && p.config)
        .map((p) => ({
          trial: p.trialId!,
          config: p.config!,
          role: `profile ${p.profile}`,
          metrics: byId.get(p.trialId!)?.metrics,
        })),
    ],
    defaultsMetrics: defaultsRow.metrics,
    profiles: own.profiles
      .filter((p) => p.config !== null)
      .map((p) => {
        const m = p.trialId === null ? undefined : byId.get(p.trialId)?.metrics
        return {
          name: `retrieval-${p.profile}`,
          trial: p.trialId,
          config: p.config!,
          tuning_quality: m?.[settings.metric] ?? m?.quality ?? null,
        }
      }),
    settings: validationSettings(input),
  })
  const holdout = held?.report
  const validation = held?.validation
  // per-question results beside report.json, for kt compare (the first profile is its default side)
  if (held) {
    const latency = (metrics: Record<string, number> | null | undefined) =>
      typeof metrics?.p99_ms === 'number' ? {p99: metrics.p99_ms, kind: latencyKind} : null
    const latencyKind = (spec.evaluate as {latency?: 'measured' | 'cost_model'}).latency ?? 'measured'
    const kept = own.profiles.filter((p) => p.config !== null)
    writeRunQuestions(dirname(input.storage), {
      engine: {name: spec.name, file: engineFile},
      data,
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
          latency: latency(defaultsRow.metrics),
        },
      ],
    })
  }
  return {
    data: input.dataLabel,
    metric: settings.metric,
    optimizer: settings.optimizer,
    budget: settings.budget,
    studies: [study],
    store: basename(input.storage),
    missing_types: [],
    default_quality: measured.metrics?.quality ?? -measured.loss,
    front: frontRecord(analysis),
    trials: frontTrialRecords(all, analysis),
    profiles: own.profiles.map((p) => ({
      name: p.profile,
      description: p.description,
      trial: p.trialId,
      config: p.config,
      metrics: p.metrics,
      on_front: p.onFront,
      rationale: p.rationale,
    })),
    engine: {
      name: spec.name,
      file: basename(engineFile),
      latency: (spec.evaluate as {latency?: 'measured' | 'cost_model'}).latency ?? 'measured',
    },
    ...(holdout ? {holdout} : {}),
    ...(validation ? {validation} : {}),
  }
}

/** The held-out validation's settings from the plan: its metric and margin, its bootstrap's resamples and confidence. */
function validationSettings(
  input: RetrievalStudyInput,
): import('../../src/eval/holdout-validation.js').HoldoutValidationSettings {
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
