import {dirname, join, resolve} from 'node:path'
import {performance} from 'node:perf_hooks'
import {InputError} from '../src/util/errors.js'
import {ensureDir} from '../src/util/fs.js'
import {
  Checkpoints,
  checkpointKey,
  codeIdentity,
  engineInputFiles,
  fileSha256,
  type RunInputs,
} from './lib/checkpoints.js'
import {checkValidationData} from './lib/independence.js'
import {KT_VERSION} from '../src/util/paths.js'
import {writeReportFiles} from '../src/report/load.js'
import {startChartRenderer, memoizedRenderer} from '../src/report/chart-pool.js'
import {studyCharts} from '../src/report/study-charts.js'
import {reproducibility} from '../src/report/reproducibility.js'
import {startRetrievalStudy, checkRetrievalInputs, RETRIEVAL_STUDY_FILE} from './lib/retrieval-study.js'
import {DEFAULT_PLAN_FILE, type LoadedPlan} from './plan.js'
import {loadAnyPlan, type LoadedEnginePlan} from './engine-plan.js'
import {ENGINE_PHASES, createEngineContext, engineSection} from './engine-run.js'
import {checkEngineInputs} from './lib/engine-inputs.js'
import {checkEngineSeeds} from './lib/engine-seeds.js'
import {createContext, displayPath, loadStudyDatasets, type PhaseContext} from './lib/context.js'
import {
  PHASE_NAMES,
  REPORT_SCHEMA,
  REPORT_VERSION,
  type DeployResult,
  type PhaseName,
  type PhaseResults,
  type Report,
  type RetrievalSearchResult,
  type SearchResult,
  type VisualizeResult,
} from '../src/report/types.js'
import {runProperties} from './1-properties.js'
import {runSynthetic} from './2-synthetic.js'
import {runAblation} from './3-ablation.js'
import {searchPhase} from './4-search.js'
import {runValidation} from './5-validation.js'
import {runDeploy} from './6-deploy.js'
import {runVisualize} from './7-visualize.js'
import {checkSeeds} from './lib/seeds.js'
import {checkPlanEngine} from './lib/engine-under-test.js'

/** One phase of a study: the importance study's (PHASES) or a format-2 engine's (ENGINE_PHASES). */
export interface PhaseDef<C = PhaseContext> {
  readonly number: number
  readonly name: PhaseName
  readonly title: string
  /** Phases whose results this one reads; they run first even when not requested. */
  readonly needs: readonly PhaseName[]
  run(ctx: C, runId: string): unknown
  /** Why the phase does not apply to this run (e.g. it needs per-question results the engine has not); undefined: it runs. */
  skip?(ctx: C): string | undefined
  /** The files the phase writes into the run folder (relative paths), from its result: a reused phase must still have them. */
  outputs?(result: unknown): string[]
}

/** The seven phases of the study, in order. */
const PHASES: readonly PhaseDef[] = [
  {number: 1, name: 'properties', title: 'Property tests of the scoring math', needs: [], run: runProperties},
  {number: 2, name: 'synthetic', title: 'Datasets with ground truth and leakage audit', needs: [], run: runSynthetic},
  {number: 3, name: 'ablation', title: 'Ablation of the four signals', needs: [], run: runAblation},
  {
    number: 4,
    name: 'search',
    title: 'Search over the weight simplex',
    needs: [],
    run: searchPhase,
    outputs: (result) => {
      const r = result as SearchResult
      return [r.bohb.study.file, ...(r.retrieval ? [r.retrieval.store] : [])]
    },
  },
  {
    number: 5,
    name: 'validation',
    title: 'Validation on held-out and imported data',
    needs: ['synthetic', 'search'],
    run: runValidation,
  },
  {
    number: 6,
    name: 'deploy',
    title: 'Deployable profiles and rollback',
    needs: ['search', 'validation'],
    run: runDeploy,
    outputs: (result) => {
      const r = result as DeployResult
      const retrieval = r.retrieval ? [...r.retrieval.domain.flatMap((p) => p.files), ...r.retrieval.routed_files] : []
      return [...r.profiles.flatMap((p) => p.files), ...retrieval]
    },
  },
  {
    number: 7,
    name: 'visualize',
    title: 'Charts',
    needs: ['ablation', 'search', 'validation'],
    run: runVisualize,
    outputs: (result) => (result as VisualizeResult).charts.flatMap((c) => [c.spec, c.svg, c.png]),
  },
]

/** A phase by number (1..7) or name; an unknown one is a one-line error. */
export function findPhase(key: string): PhaseDef {
  const byNumber = /^\d+$/.test(key) ? PHASES.find((p) => p.number === Number(key)) : undefined
  const phase = byNumber ?? PHASES.find((p) => p.name === key.toLowerCase())
  if (!phase)
    throw new InputError(`phase ${JSON.stringify(key)}`, `a phase number 1-7 or a name (${PHASE_NAMES.join(', ')})`)
  return phase
}

export interface RunOptions {
  readonly planFile?: string
  readonly seed: number
  readonly outDir?: string
  /** Phases to run; their prerequisites are added. Default: all seven. */
  readonly phases?: readonly PhaseName[]
  /** Reuse phase results checkpointed by an interrupted run with the same inputs. */
  readonly resume?: boolean
  /** Re-run the search and validation for these seeds and report the optimum's spread and the verdict on each. */
  readonly checkSeeds?: readonly number[]
  readonly progress?: (text: string) => void
}

export interface RunOutcome {
  readonly report: Report
  readonly outDir: string
  readonly reused: PhaseName[]
  /** Under --resume: the phases recomputed and why (no checkpoint, changed inputs or code, missing or changed outputs). */
  readonly notReused: Array<{phase: PhaseName; reason: string}>
  /** Warnings about the inputs (held-out turns whose text is also in the tuning set), also in report.json run.warnings. */
  readonly warnings: string[]
  /** How the plan was read (a kt_plan 1 file says so): printed, not part of the report. */
  readonly notes: string[]
}

export async function runStudy(options: RunOptions): Promise<RunOutcome> {
  const any = loadAnyPlan(options.planFile ?? DEFAULT_PLAN_FILE)
  return any.kind === 'engine'
    ? runEngineStudy(any.loaded, options)
    : runImportanceStudy(any.loaded, any.note ? [any.note] : [], options)
}

/** A run's id, folder and phases: the same seed, plan and seed check land in the same folder; a partial run gets its own. */
interface RunLayout {
  readonly runId: string
  readonly requested: readonly PhaseName[]
  readonly toRun: PhaseName[]
  readonly outDir: string
}

function runLayout<C>(table: readonly PhaseDef<C>[], planHash: string, options: RunOptions): RunLayout {
  // the seed check is part of the report, so it is part of the run id (another --seeds, another folder)
  const runId = `seed${options.seed}-plan${planHash}${options.checkSeeds ? `-seeds${options.checkSeeds.join('.')}` : ''}`
  const requested = options.phases ?? PHASE_NAMES
  // a partial run must not overwrite the full run's report: it gets a folder of its own
  const partial = PHASE_NAMES.some((p) => !requested.includes(p))
  const outDir = resolve(options.outDir ?? join('reports', partial ? `${runId}-${requested.join('-')}` : runId))
  // the seed check compares every seed's verdict with the run's own: the run validates too
  const toRun = withPrerequisites(table, options.checkSeeds ? [...requested, 'validation'] : requested)
  return {runId, requested, toRun, outDir}
}

async function runImportanceStudy(loaded: LoadedPlan, notes: string[], options: RunOptions): Promise<RunOutcome> {
  const started = performance.now()
  const layout = runLayout(PHASES, loaded.hash, options)
  const {runId, toRun, outDir} = layout
  const progress = options.progress ?? (() => {})

  // Every input is read and checked before anything is written, so bad input leaves no folder behind.
  const datasets = loadStudyDatasets(loaded)
  const warnings = checkValidationData(loaded, datasets)
  checkPlanEngine(loaded)
  const retrieval = loaded.plan.retrieval
  const retrievalData = retrieval ? loaded.resolvePath(retrieval.data) : undefined
  const retrievalEngine = retrieval?.engine === undefined ? undefined : loaded.resolvePath(retrieval.engine)
  const checked =
    retrieval && retrievalData && toRun.includes('search')
      ? await checkRetrievalInputs(retrieval, retrievalData, options.seed, retrievalEngine)
      : {}
  const files = [
    {field: 'plan', file: resolve(loaded.file), sha256: fileSha256(loaded.file)},
    ...datasets.map((d) => ({field: d.field, file: d.path, sha256: d.sha256})),
    ...(retrievalData ? [{field: 'retrieval.data', file: retrievalData, sha256: fileSha256(retrievalData)}] : []),
    ...(retrievalEngine
      ? engineInputFiles(retrievalEngine, checked.engineDir ?? dirname(retrievalEngine), 'retrieval.engine')
      : []),
  ]
  const checkpoints = openCheckpoints(layout, files, loaded.file)
  const {reusable, notReused} = reusablePhases(PHASES, toRun, checkpoints, options.resume, progress)

  const charts = toRun.includes('visualize') ? memoizedRenderer(startChartRenderer()) : undefined
  const ctx = createContext(loaded, options.seed, outDir, progress, charts, datasets)
  if (retrieval && retrievalData && toRun.includes('search') && !reusable.has('search')) {
    // the store in the run folder is continued only when it was started from these same inputs
    const continueStore = (options.resume ?? false) && checkpoints.retrievalStoreMatches()
    checkpoints.markRetrievalStore()
    const engine = retrievalEngine === undefined ? {} : {engine: retrievalEngine}
    ctx.retrieval = startRetrievalStudy(
      {
        settings: retrieval,
        data: retrievalData,
        dataLabel: displayPath(retrievalData, loaded.file),
        storage: join(outDir, RETRIEVAL_STUDY_FILE),
        seed: options.seed,
        bootstrap: loaded.plan.bootstrap,
        ...engine,
      },
      continueStore,
      (line) => progress(`phase 4 (retrieval): ${line}`),
    )
    // a failure surfaces when Phase 4 awaits it; until then it must not count as unhandled
    ctx.retrieval.catch(() => {})
  }

  const timing: Report['timing'] = {total_ms: 0, phases_ms: {}}
  let reused: PhaseName[]
  try {
    ;({reused} = await runPhases(PHASES, toRun, reusable, ctx, runId, checkpoints, timing, (def, result) => {
      if (def.name === 'search') moveLatencyCheck((result as SearchResult).retrieval, timing)
      // start rendering every chart whose data is now complete, while later phases compute
      if (charts) for (const chart of studyCharts(ctx.results)) charts.prefetch(chart.spec)
    }))
  } finally {
    await charts?.close()
  }
  const seeds = options.checkSeeds ? await checkSeeds(loaded, options.checkSeeds, ctx, progress) : undefined
  const phases = Object.fromEntries(
    PHASE_NAMES.filter((p) => ctx.results[p] !== undefined).map((p) => [p, ctx.results[p]]),
  ) as Partial<PhaseResults>
  const report = runReport(loaded, options.seed, layout, phases, {
    ...(warnings.length ? {warnings} : {}),
    ...(seeds ? {seeds} : {}),
  })
  return finish(report, timing, started, outDir, {reused, notReused, warnings, notes}, options)
}

/** A format-2 plan: the engine's phases (ENGINE_PHASES) through the same checkpoints, folders and report as every run's. */
async function runEngineStudy(loaded: LoadedEnginePlan, options: RunOptions): Promise<RunOutcome> {
  const started = performance.now()
  const layout = runLayout(ENGINE_PHASES, loaded.hash, options)
  const {runId, toRun, outDir} = layout
  const progress = options.progress ?? (() => {})
  const inputs = checkEngineInputs(loaded, options.seed, outDir)
  const checkpoints = openCheckpoints(layout, inputs.files, loaded.file)
  inputs.writeData()
  const {reusable, notReused} = reusablePhases(ENGINE_PHASES, toRun, checkpoints, options.resume, progress)
  // the study store is continued only when it was started from these same inputs
  const continueStore = (options.resume ?? false) && checkpoints.retrievalStoreMatches()
  if (toRun.includes('search') && !reusable.has('search')) checkpoints.markRetrievalStore()
  const ctx = createEngineContext(loaded, inputs, {seed: options.seed, outDir, runId, progress, continueStore})
  const timing: Report['timing'] = {total_ms: 0, phases_ms: {}}
  const {reused, notApplicable} = await runPhases(
    ENGINE_PHASES,
    toRun,
    reusable,
    ctx,
    runId,
    checkpoints,
    timing,
    (def, result) => {
      if (def.name === 'search') moveLatencyCheck(result as RetrievalSearchResult, timing)
    },
  )
  const seeds = options.checkSeeds ? await checkEngineSeeds(ctx, options.checkSeeds) : undefined
  const {properties, synthetic, visualize} = ctx.results
  const phases = {
    ...(properties ? {properties} : {}),
    ...(synthetic ? {synthetic} : {}),
    ...(visualize ? {visualize} : {}),
  }
  const search = ctx.results.search
  const report = runReport(loaded, options.seed, layout, phases, {
    ...(seeds ? {seeds} : {}),
    engine: engineSection(ctx, notApplicable),
    // the reproducibility of the run is its study's (a measured latency is not)
    ...(search ? {reproducibleFrom: {search: {retrieval: search}} as unknown as Partial<PhaseResults>} : {}),
  })
  return finish(report, timing, started, outDir, {reused, notReused, warnings: [], notes: []}, options)
}

/** Wall-clock measurements belong to the timing section, not to the reproducible results. */
function moveLatencyCheck(r: RetrievalSearchResult | undefined, timing: Report['timing']): void {
  if (!r?.latency_check) return
  timing.retrieval_latency_check = r.latency_check
  delete r.latency_check
}

function openCheckpoints(layout: RunLayout, files: RunInputs['files'], planFile: string): Checkpoints {
  const inputs: RunInputs = {files, code: codeIdentity()}
  const checkpoints = new Checkpoints(layout.outDir, checkpointKey(layout.runId, KT_VERSION, inputs), inputs, (f) =>
    displayPath(f, planFile),
  )
  ensureDir(layout.outDir)
  return checkpoints
}

/**
 * Under --resume, the phases whose checkpoint has this run's key and intact outputs, and every
 * phase it reads from reused too (a phase recomputed feeds the ones after it); the others and why.
 */
function reusablePhases<C>(
  table: readonly PhaseDef<C>[],
  toRun: readonly PhaseName[],
  checkpoints: Checkpoints,
  resume: boolean | undefined,
  progress: (text: string) => void,
): {reusable: Map<PhaseName, unknown>; notReused: Array<{phase: PhaseName; reason: string}>} {
  const reusable = new Map<PhaseName, unknown>()
  const notReused: Array<{phase: PhaseName; reason: string}> = []
  if (!resume) return {reusable, notReused}
  for (const def of table.filter((p) => toRun.includes(p.name))) {
    const stale = transitiveNeeds(table, def.name).find((need) => toRun.includes(need) && !reusable.has(need))
    const saved = stale
      ? {reason: `it reads phase ${phaseOf(table, stale).number} (${stale}), which is recomputed`}
      : checkpoints.read(def.name)
    if ('result' in saved) reusable.set(def.name, saved.result)
    else notReused.push({phase: def.name, reason: saved.reason})
  }
  for (const n of notReused)
    if (n.reason !== 'no checkpoint') progress(`phase ${phaseOf(table, n.phase).number}: not reused: ${n.reason}`)
  return {reusable, notReused}
}

/**
 * Runs (or reuses) the table's phases in `toRun`, in the table's order, checkpointing each, `after`
 * seeing each result; the phases reused, and those that do not apply to the run with the reason.
 */
async function runPhases<C extends {readonly results: object; progress(text: string): void}>(
  table: readonly PhaseDef<C>[],
  toRun: readonly PhaseName[],
  reusable: Map<PhaseName, unknown>,
  ctx: C,
  runId: string,
  checkpoints: Checkpoints,
  timing: Report['timing'],
  after: (def: PhaseDef<C>, result: unknown) => void = () => {},
): Promise<{reused: PhaseName[]; notApplicable: Partial<Record<PhaseName, string>>}> {
  const reused: PhaseName[] = []
  const notApplicable: Partial<Record<PhaseName, string>> = {}
  const results = ctx.results as Record<string, unknown>
  for (const def of table.filter((p) => toRun.includes(p.name))) {
    const t0 = performance.now()
    const skip = def.skip?.(ctx)
    if (skip !== undefined) {
      notApplicable[def.name] = skip
      ctx.progress(`phase ${def.number}: not applicable: ${skip}`)
      continue
    }
    if (reusable.has(def.name)) {
      results[def.name] = reusable.get(def.name)
      reused.push(def.name)
      ctx.progress(`phase ${def.number}: reused from an interrupted run`)
    } else {
      ctx.progress(`phase ${def.number}: ${def.title}`)
      const result = await def.run(ctx, runId)
      results[def.name] = result
      after(def, result)
      checkpoints.write(def.name, result, def.outputs?.(result) ?? [], isStudyStore)
    }
    if (reused.includes(def.name)) after(def, results[def.name])
    timing.phases_ms[def.name] = round(performance.now() - t0)
  }
  return {reused, notApplicable}
}

/** The report of a run: its record (id, seed, plan, phases, reproducibility) and its results. */
function runReport(
  loaded: {plan: {name: string}; file: string; hash: string},
  seed: number,
  layout: RunLayout,
  phases: Partial<PhaseResults>,
  extra: {
    warnings?: string[]
    seeds?: Report['seeds']
    engine?: Report['engine']
    reproducibleFrom?: Partial<PhaseResults>
  },
): Report {
  const {reproducible, reason} = reproducibility(extra.reproducibleFrom ?? phases)
  return {
    schema: REPORT_SCHEMA,
    version: REPORT_VERSION,
    run: {
      id: layout.runId,
      seed,
      plan: {name: loaded.plan.name, file: displayPath(resolve(loaded.file), loaded.file), sha256_12: loaded.hash},
      phases_requested: PHASE_NAMES.filter((p) => layout.requested.includes(p)),
      phases_run: PHASE_NAMES.filter((p) => layout.toRun.includes(p)),
      kt_version: KT_VERSION,
      reproducible,
      reproducible_reason: reason,
      ...(extra.warnings ? {warnings: extra.warnings} : {}),
    },
    phases,
    ...(extra.seeds ? {seeds: extra.seeds} : {}),
    ...(extra.engine ? {engine: extra.engine} : {}),
    timing: {total_ms: 0, phases_ms: {}},
  }
}

function finish(
  report: Report,
  timing: Report['timing'],
  started: number,
  outDir: string,
  outcome: Pick<RunOutcome, 'reused' | 'notReused' | 'warnings' | 'notes'>,
  options: RunOptions,
): RunOutcome {
  report.timing = timing
  timing.total_ms = round(performance.now() - started)
  writeReportFiles(outDir, report)
  return {report, outDir, ...outcome, notReused: options.resume ? outcome.notReused : []}
}

function phaseOf<C>(table: readonly PhaseDef<C>[], name: PhaseName): PhaseDef<C> {
  return table.find((p) => p.name === name)!
}

function withPrerequisites<C>(table: readonly PhaseDef<C>[], requested: readonly PhaseName[]): PhaseName[] {
  const out = new Set<PhaseName>(requested)
  for (const name of requested) for (const need of transitiveNeeds(table, name)) out.add(need)
  return PHASE_NAMES.filter((p) => out.has(p))
}

/** Every phase `name` reads from, directly or through another. */
function transitiveNeeds<C>(table: readonly PhaseDef<C>[], name: PhaseName): PhaseName[] {
  const out = new Set<PhaseName>()
  const add = (n: PhaseName): void => {
    for (const need of phaseOf(table, n).needs)
      if (!out.has(need)) {
        out.add(need)
        add(need)
      }
  }
  add(name)
  return PHASE_NAMES.filter((p) => out.has(p))
}

/** Study stores are reopened and rewritten by SQLite: only their presence is checked. */
function isStudyStore(path: string): boolean {
  return path.endsWith('.sqlite')
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10
}
