/**
 * Creating or resuming a study and running it: the library entry behind `kt search`, and the call
 * Phase 4 makes. Everything needed to continue a study (objective description, optimiser, seed,
 * settings, the searched space, fixed values, limits) is stored with it, so `--resume NAME` needs
 * nothing else.
 */
import {dirname, join, resolve} from 'node:path'
import type {Config, ParamSpace} from '../space/index.js'
import {createObjective, type ObjectiveSpec} from './objectives.js'
import {checkOptimizerName, createOptimizer, resolveSettings, type OptimizerName, type OptimizerSettings} from '../search/optimizers.js'
import {applyOverrides, type SpaceOverrides} from '../search/space-overrides.js'
import {incumbent} from '../search/incumbent.js'
import type {Objective, Trial} from '../search/types.js'
import {InputError} from '../util/errors.js'
import {runStudy, type RunSummary} from './runner.js'
import {StudyStore, type StudyRecord, type TrialRow} from './store.js'
import type {Outcome} from './evaluate.js'

/** Default study file (`--storage`). */
export const DEFAULT_STORAGE = 'kt-studies.sqlite'

export interface SearchOptions {
  /** SQLite file (created if missing), or ':memory:'. */
  readonly storage: string
  /** Study name; default `<objective>-<optimizer>-s<seed>`. */
  readonly study?: string
  /** Continue the named study instead of creating one. */
  readonly resume?: boolean
  /** What to optimise (required for a new study; taken from the store on resume). */
  readonly objective?: ObjectiveSpec
  /**
   * A live objective to evaluate in this thread instead of building one from `objective` (the
   * spec is still stored and used by worker threads). Must match the spec on resume.
   */
  readonly objectiveInstance?: Objective
  readonly optimizer?: OptimizerName
  readonly seed?: number
  readonly settings?: OptimizerSettings
  readonly overrides?: SpaceOverrides
  readonly maxTrials?: number
  /** In units of the objective's maximum budget. */
  readonly maxBudget?: number
  readonly workers?: number
  readonly timeoutMs?: number
  readonly signal?: AbortSignal
  readonly onTrial?: (trial: Trial, outcome: Outcome) => void
  /** An open store to use instead of opening `storage` (tests, Phase 4). */
  readonly store?: StudyStore
}

export interface SearchOutcome {
  readonly study: StudyRecord
  readonly summary: RunSummary
  readonly trials: TrialRow[]
  /** hpbandster's incumbent: the best loss at the largest budget reached. */
  readonly best: TrialRow | undefined
}

/** What a study stores in its options column. */
export interface StoredOptions {
  readonly settings: OptimizerSettings
  readonly fixed: Config
  readonly maxTrials?: number
  readonly maxBudget?: number
  readonly timeoutMs?: number
}

export function defaultStudyName(objective: string, optimizer: string, seed: number): string {
  return `${objective}-${optimizer}-s${seed}`
}

export async function runSearch(options: SearchOptions): Promise<SearchOutcome> {
  const store = options.store ?? StudyStore.open(options.storage, {mustExist: options.resume})
  try {
    const now = new Date().toISOString()
    let record: StudyRecord
    let objective: Objective
    if (options.resume) {
      if (!options.study) throw new InputError('--resume', 'a study name', 'nothing')
      const found = store.getStudy(options.study)
      if (!found) throw new InputError(`${store.path}: --resume ${options.study}`, `an existing study (${store.listStudies().map((s) => s.name).join(', ') || 'none stored'})`, 'no such study')
      record = found
      objective = options.objectiveInstance ?? (await createObjective(record.objective as ObjectiveSpec, `${store.path}: study ${record.name} objective`))
      const stored = record.options as unknown as StoredOptions
      const updated: StoredOptions = {
        ...stored,
        maxTrials: options.maxTrials ?? stored.maxTrials,
        maxBudget: options.maxBudget ?? stored.maxBudget,
        timeoutMs: options.timeoutMs ?? stored.timeoutMs,
      }
      store.setStudyOptions(record.name, updated as unknown as Record<string, unknown>, now)
      record = {...record, options: updated as unknown as Record<string, unknown>}
    } else {
      if (!options.objective) throw new InputError('--objective', 'an objective for a new study', 'nothing')
      const optimizerName = checkOptimizerName(options.optimizer ?? 'bohb')
      const seed = options.seed ?? 0
      objective = options.objectiveInstance ?? (await createObjective(options.objective))
      const {space, fixed} = applyOverrides(objective.space, options.overrides ?? {})
      const stored: StoredOptions = {
        settings: resolveSettings(optimizerName, space, options.settings ?? {}, options.maxTrials),
        fixed,
        maxTrials: options.maxTrials,
        maxBudget: options.maxBudget,
        timeoutMs: options.timeoutMs,
      }
      record = store.createStudy(
        {
          name: options.study ?? defaultStudyName(options.objective.name === 'module' || options.objective.name === 'engine' ? objective.id.replace(/[^A-Za-z0-9._-]+/g, '-') : options.objective.name, optimizerName, seed),
          objective: options.objective,
          optimizer: optimizerName,
          options: stored as unknown as Record<string, unknown>,
          seed,
          space,
        },
        now,
      )
    }
    const stored = record.options as unknown as StoredOptions
    const space = record.space as ParamSpace
    // files trials keep (an external engine's stdout/stderr) live beside the study file
    const artifactsDir = store.path === ':memory:' ? undefined : join(dirname(resolve(store.path)), record.name, 'trials')
    const optimizer = createOptimizer(record.optimizer, space, record.seed, objective.fidelity, stored.settings)
    store.setStudyState(record.name, 'running', now)
    let summary: RunSummary
    try {
      summary = await runStudy({
      store,
      study: record.name,
      seed: record.seed,
      optimizer,
      objective,
      objectiveSpec: record.objective as ObjectiveSpec,
      fixed: stored.fixed,
      workers: options.workers,
      timeoutMs: stored.timeoutMs,
      maxTrials: stored.maxTrials,
      maxBudget: stored.maxBudget,
      signal: options.signal,
      onTrial: options.onTrial,
      artifactsDir,
    })
    } finally {
      // an interrupted study leaves no process or connection of its objective behind
      if (!options.objectiveInstance) await objective.close?.()
    }
    store.setStudyState(record.name, summary.stoppedBy === 'aborted' ? 'interrupted' : 'finished', new Date().toISOString())
    const trials = store.trials(record.name)
    return {study: store.getStudy(record.name)!, summary, trials, best: incumbent(trials)}
  } finally {
    if (!options.store) store.close()
  }
}
