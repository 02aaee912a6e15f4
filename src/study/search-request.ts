/**
 * `kt search` as one library call: its flags checked (every choice before any work starts), the
 * study run or continued (runSearch, or the per-type sweeps), then the post-study pipeline
 * (finishStudy). The command only parses flags, draws the spinner and prints.
 */
import {resolve} from 'node:path'
import {idSplit, parseSplit, type SplitSpec} from '../data/conversations/split.js'
import {loadEngineFile, type EngineSpec} from '../adapters/file.js'
import {engineStudyOptions} from '../adapters/objective.js'
import {checkOptimizerName} from '../search/optimizers.js'
import {EXIT_INTERRUPTED, InputError} from '../util/errors.js'
import {snakeKeysOfRecord} from '../util/json-keys.js'
import {checkSearchChoices} from './choices.js'
import {formatSearchOutcome} from './format.js'
import {finishStudy} from './pipeline.js'
import {SearchProgress} from './progress.js'
import {defaultStudyName, runSearch} from './search.js'
import {openStorage, redactStorage} from './storage.js'
import {writeStudyReport} from './study-report.js'
import {DEFAULT_TUNING_METRIC} from '../data/conversations/metrics.js'
import {runRoutedSweeps} from './sweeps.js'

/** The flags of `kt search`, as oclif parses them. */
export interface SearchRequest {
  readonly engine?: string
  readonly objective?: string
  readonly optimizer: string
  readonly storage: string
  readonly 'create-only': boolean
  readonly 'grace-s': number
  readonly study?: string
  readonly resume?: string
  readonly trials?: number
  readonly budget?: string
  readonly workers: number
  readonly 'timeout-ms'?: number
  readonly seed: number
  readonly fix?: string[]
  readonly range?: string[]
  readonly floor?: string[]
  readonly 'grid-points'?: number
  readonly 'grid-subset': boolean
  readonly 'simplex-step': string
  readonly 'bohb-reference': boolean
  readonly data?: string
  readonly metric?: string
  readonly 'query-type'?: string
  readonly 'per-type': boolean
  readonly out?: string
  readonly split?: string
  readonly margin?: string
  readonly train?: string
  readonly holdout?: string
}

export interface SearchIo {
  /** Lines for stdout (the command drops them under --json). */
  readonly log: (line: string) => void
  /** Lines for stderr. */
  readonly warn: (line: string) => void
  readonly signal?: AbortSignal
  /** The exit code of a search the signal stopped (130 after SIGINT, 143 after SIGTERM); 130 without it. */
  readonly interruptExitCode?: () => number
  /** After each finished trial: where the study stands (SearchProgress), e.g. `trial 17/40 (43%), best loss ...`. */
  readonly onProgress?: (line: string) => void
  /** Called once the trials are done, before the post-study step: the study's name and how it stopped. */
  readonly onStudyDone?: (name: string, stoppedBy: string) => void
}

function positive(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined
  const v = Number(text)
  if (!Number.isFinite(v) || v <= 0) throw new InputError(flag, 'a positive number', JSON.stringify(text))
  return v
}

/** What the flags ask for: the objective spec, its limits and the held-out margin. Throws InputError on bad input. */
function readRequest(flags: SearchRequest) {
  const resume = flags.resume !== undefined
  if (flags.engine && flags.objective)
    throw new InputError('--objective', 'either --engine or --objective', `both (--objective ${flags.objective})`)
  if (!resume && !flags.objective && !flags.engine)
    throw new InputError('--engine', 'an engine file, a built-in --objective, or --resume STUDY', 'nothing')
  if (resume && (flags.objective || flags.engine))
    throw new InputError(
      flags.engine ? '--engine' : '--objective',
      'no objective with --resume (the study keeps its own)',
      flags.engine ?? flags.objective,
    )
  // every choice is checked before any work starts (a bad --metric used to fail each trial and exit 0)
  checkSearchChoices({
    objective: flags.objective,
    optimizer: resume ? undefined : flags.optimizer,
    metric: flags.metric,
    queryType: flags['query-type'],
  })
  const maxBudget = positive(flags.budget, '--budget')
  if (flags['grid-subset'] && (resume || flags.optimizer !== 'grid'))
    throw new InputError(
      '--grid-subset',
      resume
        ? 'no --grid-subset with --resume (a study keeps the settings it was created with)'
        : 'only with --optimizer grid',
      resume ? `--resume ${flags.resume}` : `--optimizer ${flags.optimizer}`,
    )
  // a grid of a stated resolution runs whole unless limited; otherwise 100 trials size it
  const wholeGrid = flags.optimizer === 'grid' && flags['grid-points'] !== undefined
  const maxTrials = flags.trials ?? (resume || maxBudget !== undefined || wholeGrid ? undefined : 100)
  let options: Record<string, unknown> | undefined
  let engine: EngineSpec | undefined
  if (flags.engine) {
    engine = loadEngineFile(flags.engine)
    // with its fingerprint, so a resume or a worker refuses the file once its parameters, evaluation, tiers or objectives change
    options = engineStudyOptions(engine)
  }
  const what = () =>
    flags.objective ?? (flags.engine ? `${flags.engine} (evaluate.kind ${engine?.evaluate.kind})` : 'no objective')
  const serviceEngine = engine?.evaluate.kind === 'retrieval-service'
  if (serviceEngine && !flags.data)
    throw new InputError(
      '--data',
      `conversations for the retrieval service of ${flags.engine} (LoCoMo .json, .jsonl or .csv)`,
      'nothing',
    )
  // the data is recorded in the study (absolute, so a resume or a worker in another folder finds it), not in its name
  if (serviceEngine) options = {...options, data: resolve(flags.data!)}
  else if (flags.data || flags.metric || flags['query-type']) {
    if (flags.objective !== 'retrieval')
      throw new InputError('--data', 'only with --objective retrieval or a retrieval-service --engine', what())
    options = {
      ...options,
      data: flags.data === undefined ? undefined : resolve(flags.data),
      metric: flags.metric,
      queryType: flags['query-type'],
    }
  }
  const split = readSplit(flags, serviceEngine, what)
  if (split) options = {...options, split, part: 'train'}
  let margin: number | undefined
  if (flags.margin !== undefined) {
    margin = Number(flags.margin)
    if (flags.objective !== 'retrieval' || split === undefined)
      throw new InputError(
        '--margin',
        "a margin only with --objective retrieval and --split or --train/--holdout (it is the held-out validation's)",
        flags.margin,
      )
    if (!(margin >= 0 && margin < 1))
      throw new InputError('--margin', 'a number in [0, 1) (absolute, on the metric)', JSON.stringify(flags.margin))
  }
  const name = flags.engine ? 'engine' : flags.objective
  const objective = name ? {name, options} : undefined
  return {resume, maxBudget, maxTrials, options, engine, objective, margin, split}
}

function readSplit(flags: SearchRequest, serviceEngine: boolean, what: () => string): SplitSpec | undefined {
  if (flags.split === undefined && flags.train === undefined && flags.holdout === undefined) return undefined
  if (flags.objective !== 'retrieval' && !serviceEngine)
    throw new InputError(
      '--split',
      'retrieval tuning (--objective retrieval, or a retrieval-service --engine, with --data)',
      what(),
    )
  if (flags.split !== undefined && (flags.train !== undefined || flags.holdout !== undefined))
    throw new InputError('--split', 'either --split or --train/--holdout, not both', `--split ${flags.split}`)
  if (flags.split === undefined && (flags.train === undefined || flags.holdout === undefined))
    throw new InputError(
      flags.train === undefined ? '--train' : '--holdout',
      'both --train and --holdout',
      'only one of them',
    )
  return flags.split !== undefined ? parseSplit(flags.split, flags.seed) : idSplit(flags.train!, flags.holdout!)
}

/**
 * The default name of a new study: `<engine>-<optimizer>-s<seed>` for an engine file (its name,
 * never its data: the data is recorded in the study), `<objective>-<optimizer>-s<seed>` otherwise.
 */
function searchStudyName(flags: Pick<SearchRequest, 'study' | 'optimizer' | 'seed'>, engine?: EngineSpec) {
  if (flags.study !== undefined) return flags.study
  return engine ? defaultStudyName(engine.name, flags.optimizer, flags.seed) : undefined
}

/** Runs `kt search` for parsed flags; returns the --json record (exit code 130 set on an interrupt). */
export async function searchCommand(flags: SearchRequest, io: SearchIo): Promise<Record<string, unknown>> {
  const request = readRequest(flags)
  const {resume, maxBudget, maxTrials, options, engine, objective, margin} = request
  if (flags['per-type']) {
    if (flags.objective !== 'retrieval' || !options?.data)
      throw new InputError('--per-type', '--objective retrieval with --data', flags.objective ?? 'no objective')
    const result = await runRoutedSweeps({
      data: String(options.data),
      metric: options.metric as string | undefined,
      storage: flags.storage,
      studyPrefix: flags.study ?? `retrieval-${flags.optimizer}-s${flags.seed}`,
      optimizer: checkOptimizerName(flags.optimizer),
      seed: flags.seed,
      maxTrials: flags.trials ?? (maxBudget === undefined ? 100 : undefined),
      maxBudget,
      workers: flags.workers,
      timeoutMs: flags['timeout-ms'],
      out: flags.out,
      log: io.log,
      ...(request.split ? {split: request.split} : {}),
      ...(margin !== undefined ? {margin} : {}),
    })
    if (flags.out && result.analysis) {
      // the report of the all-queries study (the routed profile is in routed.json beside it)
      const name = result.studies.find((s) => s.endsWith('-all')) ?? result.studies[0]
      const storage = await openStorage(flags.storage, {mustExist: true})
      const study = await storage.getStudy(name)
      const trials = study ? await storage.trials(name) : []
      await storage.close()
      if (study)
        result.files.push(
          ...writeStudyReport(
            study,
            trials,
            {
              front: {retrieval: result.analysis.front, quality: String(options.metric ?? DEFAULT_TUNING_METRIC)},
              profiles: result.analysis.profiles,
            },
            flags.out,
          ),
        )
    }
    return snakeKeysOfRecord(result) as Record<string, unknown>
  }
  const tracker = new SearchProgress({maxTrials, maxBudget})
  const outcome = await runSearch({
    storage: flags.storage,
    study: resume ? flags.resume : searchStudyName(flags, engine),
    resume,
    objective,
    optimizer: resume ? undefined : checkOptimizerName(flags.optimizer),
    seed: flags.seed,
    settings: {
      gridPoints: flags['grid-points'],
      gridSubset: flags['grid-subset'] || undefined,
      simplexStep: positive(flags['simplex-step'], '--simplex-step'),
      bohb: flags['bohb-reference'] ? {reference: true} : undefined,
    },
    overrides: {fix: flags.fix, range: flags.range, floor: flags.floor},
    maxTrials,
    maxBudget,
    workers: flags.workers,
    timeoutMs: flags['timeout-ms'],
    graceMs: flags['grace-s'] * 1000,
    createOnly: flags['create-only'],
    signal: io.signal,
    log: io.warn,
    onTrial: (trial, outcome, progress) => io.onProgress?.(tracker.update(trial, outcome, progress)),
  })
  const interrupted = outcome.summary.stoppedBy === 'aborted'
  io.onStudyDone?.(outcome.study.name, outcome.summary.stoppedBy)
  const view = formatSearchOutcome(outcome, redactStorage(flags.storage))
  io.log(view.text)
  const finished = await finishStudy({
    study: outcome.study,
    trials: outcome.trials,
    out: flags.out,
    margin,
    interrupted,
  })
  for (const w of finished.warnings) io.warn(`kt: warning: ${w}`)
  for (const line of finished.lines) io.log(line)
  Object.assign(view.json, finished.json)
  if (interrupted) {
    io.warn(
      `kt: interrupted; continue with: kt search --resume ${outcome.study.name} --storage ${redactStorage(flags.storage)}`,
    )
    process.exitCode = io.interruptExitCode?.() ?? EXIT_INTERRUPTED
  }
  return view.json
}
