/**
 * The one post-study pipeline: from a finished study (its record, its trials) to the front, the
 * profiles, the held-out verdicts, the latency check and the files in --out. `kt search` calls it
 * for every objective; Phase 4 shares its held-out step (engineHoldout, validateRetrievalStudy).
 */
import {join} from 'node:path'
import {checkEngineFingerprint, loadEngineFile, type EngineSpec} from '../adapters/file.js'
import type {SplitSpec} from '../data/conversations/split.js'
import {describeSplit} from '../data/conversations/split.js'
import {loadMemoryDataset} from '../data/conversations/index.js'
import {DEFAULT_HOLDOUT_SETTINGS, type HoldoutValidation} from '../eval/holdout-validation.js'
import {checkFrontLatency, latencyCheckLines} from '../eval/latency-check.js'
import {analyzeObjectiveStudy} from '../search/analysis.js'
import {frontAndProfileItems, type HoldoutSide} from '../search/holdout.js'
import {serviceSpecOf} from '../adapters/retrieval-service.js'
import {defaultConfig} from '../space/index.js'
import {writeFileAtomic} from '../util/fs.js'
import {snakeKeysOfRecord} from '../util/json-keys.js'
import {engineHoldout, type HeldOutQuestions} from './engine-holdout.js'
import {writeEngineStudyOutputs} from './engine-study.js'
import {createObjective, type ObjectiveSpec} from './objectives.js'
import {validateRetrievalStudy, writeRetrievalProfiles} from './retrieval-validation.js'
import {DEFAULT_TUNING_METRIC} from '../data/conversations/metrics.js'
import type {StudyRecord, TrialRow} from './model.js'
import {writeStudyAnalysis} from './sweeps.js'
import {writeStudyReport} from './study-report.js'

export interface PostStudyInput {
  readonly study: Pick<StudyRecord, 'name' | 'objective' | 'optimizer' | 'seed'>
  readonly trials: TrialRow[]
  /** The folder the outputs go to (nothing is written without it). */
  readonly out?: string
  /** The held-out non-inferiority margin (default DEFAULT_HOLDOUT_SETTINGS.margin). */
  readonly margin?: number
  /** The study stopped on a signal: no validation and no latency check. */
  readonly interrupted?: boolean
}

export interface PostStudyResult {
  /** For stdout, in order. */
  readonly lines: string[]
  /** For stderr, once each. */
  readonly warnings: string[]
  /** What `--json` adds to the study's own record (snake_case). */
  readonly json: Record<string, unknown>
  readonly files: string[]
  /** The engine file's study: its engine, as the trials used it. */
  readonly engine?: EngineSpec
  /** Profiles against the defaults on held-out data, when the study had a split. */
  readonly validation?: HoldoutValidation
  /** Per-question held-out rows of the defaults and of each validated profile (engine-file studies with a split). */
  readonly questions?: HeldOutQuestions
}

/** The objective spec a study stores. */
function objectiveOf(study: PostStudyInput['study']): ObjectiveSpec & {options?: Record<string, unknown>} {
  return study.objective as ObjectiveSpec & {options?: Record<string, unknown>}
}

/**
 * The engine file a study tuned, read again and checked against the fingerprint stored with the
 * study (the file may have changed while the study ran: the outputs come from the table the trials used).
 */
export function studyEngine(study: PostStudyInput['study']): EngineSpec | undefined {
  const spec = objectiveOf(study)
  if (spec.name !== 'engine') return undefined
  const engine = loadEngineFile(String(spec.options?.file))
  checkEngineFingerprint(engine, spec.options?.fingerprint)
  return engine
}

/** Everything after the trials of a `kt search` study: analysis, held-out scoring, validation, latency check, files. */
export async function finishStudy(input: PostStudyInput): Promise<PostStudyResult> {
  const engine = studyEngine(input.study)
  return engine ? finishEngineStudy(input, engine) : finishBuiltinStudy(input)
}

async function finishEngineStudy(input: PostStudyInput, spec: EngineSpec): Promise<PostStudyResult> {
  const options = objectiveOf(input.study).options ?? {}
  const analysis = analyzeObjectiveStudy(input.trials, spec.objectives, spec.profiles)
  const byId = new Map(input.trials.map((t) => [t.id, t]))
  const quality = spec.evaluate.kind === 'retrieval-service' ? (serviceSpecOf(spec).metric ?? 'quality') : 'quality'
  const held = await engineHoldout({
    spec,
    options,
    seed: input.study.seed,
    quality,
    items: frontAndProfileItems(analysis.front?.front ?? [], analysis.profiles, (id) => byId.get(id)?.metrics),
    profiles: analysis.profiles
      .filter((p) => p.config !== null)
      .map((p) => ({
        name: p.profile,
        trial: p.trialId,
        config: p.config!,
        tuning_quality: (p.trialId === null ? undefined : byId.get(p.trialId)?.metrics?.[quality]) ?? null,
      })),
    settings: {
      ...DEFAULT_HOLDOUT_SETTINGS,
      metric: spec.evaluate.kind === 'retrieval-service' ? (serviceSpecOf(spec).metric ?? 'recall@10') : 'quality',
      margin: input.margin ?? DEFAULT_HOLDOUT_SETTINGS.margin,
    },
  })
  // the study's name alone: a storage URL may hold a database password, and profiles are deployed and shared
  const written = await writeEngineStudyOutputs(
    spec,
    input.trials,
    input.out,
    input.study.name,
    held?.report,
    held?.validation,
  )
  if (input.out)
    written.files.push(
      ...writeStudyReport(
        input.study,
        input.trials,
        {
          engine: spec,
          front: written.front,
          profiles: written.profiles,
          ...(held ? {holdout: held.report, validation: held.validation} : {}),
        },
        input.out,
      ),
    )
  const lines = [...written.lines]
  if (written.files.length)
    lines.push(
      `wrote ${written.files.length} files to ${input.out} (profiles/<name>.env in ${spec.name}'s own variable names)`,
    )
  return {
    lines,
    warnings: written.warnings,
    files: written.files,
    engine: spec,
    ...(held ? {validation: held.validation, questions: held.questions} : {}),
    json: {
      ...(held ? {validation: held.validation} : {}),
      ...(snakeKeysOfRecord({
        engine: spec.name,
        front: written.front,
        profiles: written.profiles,
        files: written.files,
        ...(written.holdout ? {holdout: written.holdout} : {}),
      }) as Record<string, unknown>),
    },
  }
}

async function finishBuiltinStudy(input: PostStudyInput): Promise<PostStudyResult> {
  const spec = objectiveOf(input.study)
  const metric = typeof spec.options?.metric === 'string' ? spec.options.metric : undefined
  const holdout = await holdoutSide(spec)
  try {
    const analysis = await writeStudyAnalysis(
      input.trials,
      input.out,
      holdout ? {side: holdout, seed: input.study.seed} : undefined,
      metric,
    )
    if (!analysis) {
      const files = input.out ? writeStudyReport(input.study, input.trials, {front: null, profiles: []}, input.out) : []
      return {lines: [], warnings: [], json: files.length ? {files} : {}, files}
    }
    const lines = [...analysis.lines]
    const json = snakeKeysOfRecord({
      front: analysis.front,
      profiles: analysis.profiles,
      files: analysis.files,
      ...(analysis.holdout ? {holdout: analysis.holdout} : {}),
    }) as Record<string, unknown>
    const split = spec.options?.split as SplitSpec | undefined
    let validation: HoldoutValidation | undefined
    if (spec.name === 'retrieval' && split && !input.interrupted) {
      // each domain profile against the defaults on the held-out conversations: the verdict kt deploy reads
      const checked = validateRetrievalStudy({
        analysis,
        data: String(spec.options?.data),
        split,
        metric,
        margin: input.margin,
        study: input.study.name,
        out: input.out,
      })
      lines.push(...checked.lines)
      analysis.files.push(...checked.files)
      validation = checked.validation
      json.validation = checked.validation
    } else if (spec.name === 'retrieval' && input.out && !input.interrupted) {
      // as for an engine file: each domain profile deployable, marked not validated (no held-out data)
      const written = writeRetrievalProfiles({
        analysis,
        out: input.out,
        study: input.study.name,
        metric: metric ?? DEFAULT_TUNING_METRIC,
        data: String(spec.options?.data),
      })
      lines.push(
        `wrote ${written.length / 3} profiles to ${join(input.out, 'profiles')} (not validated: no held-out data)`,
      )
      analysis.files.push(...written)
    }
    if (spec.name === 'retrieval' && !input.interrupted) {
      // the front's P99 is the cost model: measure the same configurations on the clock beside it
      const check = checkFrontLatency(
        analysis,
        await createObjective({...spec, delayMs: undefined, evalLog: undefined}),
      )
      if (check) {
        lines.push(...latencyCheckLines(check))
        json.timing = {latency_check: check}
        if (input.out) {
          writeFileAtomic(join(input.out, 'latency-check.json'), `${JSON.stringify(check, null, 2)}\n`)
          analysis.files.push(join(input.out, 'latency-check.json'))
        }
      }
    }
    if (input.out)
      analysis.files.push(
        ...writeStudyReport(
          input.study,
          input.trials,
          {
            front: {retrieval: analysis.front, quality: metric ?? DEFAULT_TUNING_METRIC},
            profiles: analysis.profiles,
            ...(analysis.holdout ? {holdout: analysis.holdout} : {}),
            ...(validation ? {validation} : {}),
          },
          input.out,
        ),
      )
    json.files = analysis.files
    return {lines, warnings: [], json, files: analysis.files, ...(validation ? {validation} : {})}
  } finally {
    await holdout?.objective.close?.()
  }
}

/**
 * The held-out side of a study tuned with a split: the same objective over the held-out
 * conversations (read from the stored spec, so a resumed study gets it too), and the defaults
 * measured on the tuning conversations like a full-budget trial, to be scored on the held-out ones too.
 */
async function holdoutSide(spec: ObjectiveSpec): Promise<HoldoutSide | undefined> {
  const split = spec.options?.split as SplitSpec | undefined
  if (!split) return undefined
  const plain = {...spec, delayMs: undefined, evalLog: undefined}
  const objective = await createObjective({...plain, options: {...spec.options, part: 'holdout'}})
  const description = describeSplit(loadMemoryDataset(String(spec.options?.data)), split)
  const tuning = await createObjective(plain)
  const config = defaultConfig(tuning.space)
  const measured = await tuning.evaluate(config, tuning.fidelity?.max ?? 1, {
    trialId: -1,
    configId: 'defaults',
    seed: 0,
  })
  return {objective, description, defaults: {config, metrics: measured.metrics ?? null}}
}
