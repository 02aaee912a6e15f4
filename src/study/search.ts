/**
 * Creating or resuming a study and running it: the library entry behind `kt search`, and the call
 * Phase 4 makes. Everything needed to continue a study (objective description, optimiser, seed,
 * settings, the searched space, fixed values, limits) is stored with it, so `--resume NAME` needs
 * nothing else.
 */
import type {Config, ParamSpace} from '../space/index.js'
import {dirname, join, resolve} from 'node:path'
import {createObjective, type ObjectiveSpec} from './objectives.js'
import {
  checkOptimizerName,
  createOptimizer,
  resolveSettings,
  type OptimizerName,
  type OptimizerSettings,
} from '../search/optimizers.js'
import {checkGridLimit, DEFAULT_SIMPLEX_STEP, gridPointCount, gridTrialLimit} from '../search/grid.js'
import {applyOverrides, type SpaceOverrides} from '../search/space-overrides.js'
import {incumbent} from '../search/incumbent.js'
import type {Objective} from '../search/types.js'
import {InputError} from '../util/errors.js'
import {DEFAULT_SEED} from '../util/rng.js'
import {optimizeStudy} from './optimize.js'
import type {RunOptions, RunSummary} from './optimize-options.js'
import {MAX_WORKERS_PER_PROCESS} from './pool.js'
import type {StudyRecord, TrialRow} from './model.js'
import {openStorage, type StudyStorage} from './storage.js'
import {checkStudyName} from './name.js'
import {requireStudy} from './name.js'

/** What kt search, kt worker, the phases and the benches ask of a study; the loop's own options as optimizeStudy takes them. */
export interface SearchOptions extends Pick<
  RunOptions,
  'workers' | 'timeoutMs' | 'signal' | 'onTrial' | 'log' | 'startAt' | 'timing'
> {
  /** SQLite file (created if missing), ':memory:', or a postgresql:// URL. */
  readonly storage: string
  /** Study name; default `<objective>-<optimizer>-s<seed>`. */
  readonly study?: string
  /** Continue the named study instead of creating one. */
  readonly resume?: boolean
  /** The flag that named the study to continue, for error messages (default --resume; kt worker: --study). */
  readonly studyFlag?: string
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
  /** For a new study: a running trial whose worker is silent this long is taken over (ms; default DEFAULT_GRACE_MS). */
  readonly graceMs?: number
  /** Create the study (or update a resumed one's limits) and return without evaluating: workers join later. */
  readonly createOnly?: boolean
  /** Evaluate on worker threads even with --workers 1 (default: on for PostgreSQL studies). */
  readonly threads?: boolean
  /** An open storage to use instead of opening `storage` (tests, Phase 4, sweeps). */
  readonly store?: StudyStorage
}

export interface SearchOutcome {
  readonly study: StudyRecord
  readonly summary: RunSummary
  readonly trials: TrialRow[]
  /** hpbandster's incumbent: the best loss at the largest budget reached. */
  readonly best: TrialRow | undefined
}

/** What a study stores in its options column. */
interface StoredOptions {
  readonly settings: OptimizerSettings
  readonly fixed: Config
  readonly maxTrials?: number
  readonly maxBudget?: number
  readonly timeoutMs?: number
  /** Lease grace period (ms); absent in studies made before leases (DEFAULT_GRACE_MS). */
  readonly graceMs?: number
}

/** Canonical JSON (keys sorted, undefined dropped), so equal settings compare equal whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`
}

/** Flag names of the stored options a user sets on the command line. */
const OPTION_FLAGS: Record<string, string> = {
  maxTrials: '--trials',
  maxBudget: '--budget',
  timeoutMs: '--timeout-ms',
  fixed: '--fix',
  settings: 'optimiser settings',
  graceMs: 'lease grace',
}

/** What differs between a stored study and the one a command asks for, as `--seed 7 (stored: 42)`. */
export function studyDifferences(
  stored: Pick<StudyRecord, 'objective' | 'optimizer' | 'seed' | 'options' | 'space'>,
  wanted: Pick<StudyRecord, 'objective' | 'optimizer' | 'seed' | 'options' | 'space'>,
): string[] {
  const out: string[] = []
  const show = (v: unknown): string =>
    v === undefined ? 'unset' : canonical(v).length > 60 ? `${canonical(v).slice(0, 57)}...` : canonical(v)
  const compare = (label: string, a: unknown, b: unknown): void => {
    if (canonical(a) !== canonical(b)) out.push(`${label} ${show(b)} (stored: ${show(a)})`)
  }
  const so = (stored.objective ?? {}) as Record<string, unknown>
  const wo = (wanted.objective ?? {}) as Record<string, unknown>
  const sOptions = (so.options ?? {}) as Record<string, unknown>
  const wOptions = (wo.options ?? {}) as Record<string, unknown>
  for (const key of new Set([...Object.keys(so), ...Object.keys(wo)])) {
    // an engine file's fingerprint (src/adapters/file.ts) is named by the parts that changed; a study
    // made before kt stored one has none, and is not checked on it (as checkEngineFingerprint)
    if (key === 'options' && (sOptions.fingerprint || wOptions.fingerprint)) {
      if (sOptions.fingerprint && wOptions.fingerprint) {
        const a = sOptions.fingerprint as Record<string, unknown>
        const b = wOptions.fingerprint as Record<string, unknown>
        const parts = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => a[k] !== b[k])
        if (parts.length)
          out.push(`engine file ${String(wOptions.file)} (changed ${parts.join(', ')} since the study was created)`)
      }
      compare('objective options', {...sOptions, fingerprint: undefined}, {...wOptions, fingerprint: undefined})
      continue
    }
    compare(key === 'name' ? '--objective' : `objective ${key}`, so[key], wo[key])
  }
  compare('--optimizer', stored.optimizer, wanted.optimizer)
  compare('--seed', stored.seed, wanted.seed)
  const sOpts = stored.options as Record<string, unknown>
  const wOpts = wanted.options as Record<string, unknown>
  for (const key of new Set([...Object.keys(sOpts), ...Object.keys(wOpts)]))
    compare(OPTION_FLAGS[key] ?? key, sOpts[key], wOpts[key])
  if (canonical(stored.space) !== canonical(wanted.space)) out.push('searched space (--range/--floor/--fix)')
  return out
}
/** A grid study whose limits cannot reach every grid point is refused, before anything is stored (src/search/grid.ts). */
function checkGridStudy(
  name: string,
  optimizer: string,
  space: ParamSpace,
  options: StoredOptions,
  resuming = false,
): void {
  if (optimizer !== 'grid' || options.settings.gridPoints === undefined) return
  const points = gridPointCount(
    space,
    options.settings.gridPoints,
    options.settings.simplexStep ?? DEFAULT_SIMPLEX_STEP,
  )
  checkGridLimit(
    `study ${name}: --optimizer grid`,
    points,
    options.settings.gridPoints,
    gridTrialLimit(options.maxTrials, options.maxBudget),
    options.settings.gridSubset,
    resuming,
  )
}

/** Where trials of a study without a folder (PostgreSQL) keep their files. */
const ARTIFACTS_FALLBACK_DIR = 'kt-studies'

export function defaultStudyName(objective: string, optimizer: string, seed: number): string {
  return `${objective}-${optimizer}-s${seed}`
}

/** The stored study `--resume` names, its limits updated by the options given, and its objective. */
async function resumedStudy(
  store: StudyStorage,
  options: SearchOptions,
  now: string,
): Promise<{record: StudyRecord; objective: Objective}> {
  const flag = options.studyFlag ?? '--resume'
  if (!options.study) throw new InputError(flag, 'a study name', 'nothing')
  const where = `${store.label}: ${flag} ${options.study}`
  const found = await requireStudy(await store.getStudy(options.study), where, () => store.listStudies())
  const objective =
    options.objectiveInstance ??
    (await createObjective(found.objective as ObjectiveSpec, `${store.label}: study ${found.name} objective`))
  const stored = found.options as unknown as StoredOptions
  const updated: StoredOptions = {
    ...stored,
    maxTrials: options.maxTrials ?? stored.maxTrials,
    maxBudget: options.maxBudget ?? stored.maxBudget,
    timeoutMs: options.timeoutMs ?? stored.timeoutMs,
  }
  // new limits must still cover the whole grid of a grid study (unless it was made as a subset)
  if (options.maxTrials !== undefined || options.maxBudget !== undefined)
    checkGridStudy(found.name, found.optimizer, found.space as ParamSpace, updated, true)
  // workers joining without new limits write nothing
  if (JSON.stringify(updated) !== JSON.stringify(stored))
    await store.setStudyOptions(found.name, updated as unknown as Record<string, unknown>, now)
  return {record: {...found, options: updated as unknown as Record<string, unknown>}, objective}
}

/**
 * The new study the options describe, created; or the stored one of the same name when it was made
 * with the same arguments (the same command run again continues it), else refused with what differs.
 */
async function newStudy(
  store: StudyStorage,
  options: SearchOptions & {objective: ObjectiveSpec},
  objective: Objective,
  now: string,
): Promise<StudyRecord> {
  const optimizerName = checkOptimizerName(options.optimizer ?? 'bohb')
  const seed = options.seed ?? DEFAULT_SEED
  const {space, fixed} = applyOverrides(objective.space, options.overrides ?? {})
  const stored: StoredOptions = {
    settings: resolveSettings(optimizerName, space, options.settings ?? {}, options.maxTrials, options.maxBudget),
    fixed,
    maxTrials: options.maxTrials,
    maxBudget: options.maxBudget,
    timeoutMs: options.timeoutMs,
    graceMs: options.graceMs,
  }
  const named = ['module', 'engine'].includes(options.objective.name)
    ? objective.id.replace(/[^A-Za-z0-9._-]+/g, '-')
    : options.objective.name
  const wanted = {
    name: options.study ?? defaultStudyName(named, optimizerName, seed),
    objective: options.objective,
    optimizer: optimizerName,
    options: stored as unknown as Record<string, unknown>,
    seed,
    space,
  }
  checkGridStudy(wanted.name, optimizerName, space, stored)
  const existing = await store.getStudy(wanted.name)
  if (!existing) return store.createStudy(wanted, now)
  const differences = studyDifferences(existing, wanted)
  if (differences.length > 0)
    throw new InputError(
      `${store.label}: study ${wanted.name}`,
      `the arguments it was created with (--study NAME starts a new study; --resume ${wanted.name} continues it, with new limits if given)`,
      differences.join('; '),
    )
  return existing
}

/** What a study holds, as the summary of a run that evaluated nothing (createOnly). */
function storedSummary(trials: readonly TrialRow[]): RunSummary {
  const ok = trials.filter((t) => t.status === 'ok').length
  const failed = trials.filter((t) => t.status === 'failed').length
  const zero = {replayed: 0, rerun: 0, evaluated: 0, budgetUsed: 0}
  return {asked: trials.length, finished: ok + failed, ok, failed, ...zero, stoppedBy: 'done'}
}

/**
 * Files trials keep (an external engine's stdout/stderr): beside a SQLite study file, else in
 * ./kt-studies (a PostgreSQL study has no folder of its own).
 */
function artifactsDirOf(storage: string, store: StudyStorage, study: string): string | undefined {
  if (storage === ':memory:') return undefined
  const root = store.kind === 'sqlite' ? dirname(resolve(storage)) : resolve(ARTIFACTS_FALLBACK_DIR)
  return join(root, study, 'trials')
}

/** Runs the study loop on a created or resumed study in this process. */
function runStudy(
  store: StudyStorage,
  options: SearchOptions,
  record: StudyRecord,
  live: Objective,
): Promise<RunSummary> {
  const stored = record.options as unknown as StoredOptions
  const space = record.space as ParamSpace
  return optimizeStudy({
    storage: store,
    study: record.name,
    seed: record.seed,
    createOptimizer: () => createOptimizer(record.optimizer, space, record.seed, live.fidelity, stored.settings),
    objective: live,
    objectiveSpec: record.objective as ObjectiveSpec,
    fixed: stored.fixed,
    workers: options.workers,
    threads: options.threads ?? (store.kind === 'postgresql' && !options.objectiveInstance),
    timeoutMs: stored.timeoutMs,
    graceMs: stored.graceMs,
    maxTrials: stored.maxTrials,
    maxBudget: stored.maxBudget,
    signal: options.signal,
    onTrial: options.onTrial,
    log: options.log,
    startAt: options.startAt,
    timing: options.timing,
    artifactsDir: artifactsDirOf(options.storage, store, record.name),
  })
}

export async function runSearch(options: SearchOptions): Promise<SearchOutcome> {
  if (options.workers !== undefined && options.workers > MAX_WORKERS_PER_PROCESS)
    throw new InputError(
      '--workers',
      `at most ${MAX_WORKERS_PER_PROCESS} trials in flight per process (each is a worker thread or engine process with its own copy of the objective; for more, start more kt worker processes)`,
      String(options.workers),
    )
  // the name becomes a folder of every worker's trial files: refused before anything is opened or written
  if (options.study !== undefined)
    checkStudyName(options.study, options.resume ? (options.studyFlag ?? '--resume') : '--study')
  const given = options.objective
  if (!options.resume && !given) throw new InputError('--objective', 'an objective for a new study', 'nothing')
  // A new study's objective (its engine file, its data) is built before the store is opened: bad
  // input is refused without leaving an empty study file behind.
  let objective: Objective | undefined =
    options.objectiveInstance ?? (!options.resume && given ? await createObjective(given) : undefined)
  // an interrupted or refused study leaves no process or connection of its objective behind
  const closeObjective = async (): Promise<void> => {
    const open = options.objectiveInstance ? undefined : objective
    objective = undefined
    await open?.close?.()
  }
  try {
    const store = options.store ?? (await openStorage(options.storage, {mustExist: options.resume}))
    try {
      const now = new Date().toISOString()
      let record: StudyRecord
      if (options.resume) ({record, objective} = await resumedStudy(store, options, now))
      else record = await newStudy(store, {...options, objective: given!}, objective!, now)
      if (options.createOnly) {
        const trials = await store.trials(record.name)
        return {study: record, summary: storedSummary(trials), trials, best: incumbent(trials)}
      }
      const summary = await runStudy(store, options, record, objective!)
      await closeObjective()
      const trials = await store.trials(record.name)
      return {study: (await store.getStudy(record.name))!, summary, trials, best: incumbent(trials)}
    } finally {
      if (!options.store) await store.close()
    }
  } finally {
    await closeObjective()
  }
}
