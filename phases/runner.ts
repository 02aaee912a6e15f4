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
import {DEFAULT_PLAN_FILE} from './plan.js'
import {loadAnyPlan, type LoadedEnginePlan} from './engine-plan.js'
import {runEnginePlan} from './engine-run.js'
import {createContext, displayPath, loadStudyDatasets, type PhaseContext} from './lib/context.js'
import {
  PHASE_NAMES,
  REPORT_SCHEMA,
  REPORT_VERSION,
  type DeployResult,
  type PhaseName,
  type PhaseResults,
  type Report,
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

interface PhaseDef {
  readonly number: number
  readonly name: PhaseName
  readonly title: string
  /** Phases whose results this one reads; they run first even when not requested. */
  readonly needs: readonly PhaseName[]
  run(ctx: PhaseContext, runId: string): unknown
}

/** The seven phases of the study, in order. */
const PHASES: readonly PhaseDef[] = [
  {number: 1, name: 'properties', title: 'Property tests of the scoring math', needs: [], run: runProperties},
  {number: 2, name: 'synthetic', title: 'Datasets with ground truth and leakage audit', needs: [], run: runSynthetic},
  {number: 3, name: 'ablation', title: 'Ablation of the four signals', needs: [], run: runAblation},
  {number: 4, name: 'search', title: 'Search over the weight simplex', needs: [], run: searchPhase},
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
  },
  {number: 7, name: 'visualize', title: 'Charts', needs: ['ablation', 'search', 'validation'], run: runVisualize},
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

/** Run id: seed and plan fingerprint, so the same inputs always land in the same folder. */
function runIdFor(seed: number, planHash: string): string {
  return `seed${seed}-plan${planHash}`
}

export async function runStudy(options: RunOptions): Promise<RunOutcome> {
  const started = performance.now()
  const any = loadAnyPlan(options.planFile ?? DEFAULT_PLAN_FILE)
  if (any.kind === 'engine') return runEngineStudy(any.loaded, options)
  const loaded = any.loaded
  const notes = any.note ? [any.note] : []
  // the seed check is part of the report, so it is part of the run id (another --seeds, another folder)
  const runId = `${runIdFor(options.seed, loaded.hash)}${options.checkSeeds ? `-seeds${options.checkSeeds.join('.')}` : ''}`
  const requested = options.phases ?? PHASE_NAMES
  // a partial run must not overwrite the full run's report: it gets a folder of its own
  const partial = PHASE_NAMES.some((p) => !requested.includes(p))
  const outDir = resolve(options.outDir ?? join('reports', partial ? `${runId}-${requested.join('-')}` : runId))
  const progress = options.progress ?? (() => {})
  // the seed check compares every seed's verdict with the run's own: the run validates too
  const toRun = withPrerequisites(options.checkSeeds ? [...requested, 'validation'] : requested)

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
  const inputs: RunInputs = {
    files: [
      {field: 'plan', file: resolve(loaded.file), sha256: fileSha256(loaded.file)},
      ...datasets.map((d) => ({field: d.field, file: d.path, sha256: d.sha256})),
      ...(retrievalData ? [{field: 'retrieval.data', file: retrievalData, sha256: fileSha256(retrievalData)}] : []),
      ...(retrievalEngine
        ? engineInputFiles(retrievalEngine, checked.engineDir ?? dirname(retrievalEngine), 'retrieval.engine')
        : []),
    ],
    code: codeIdentity(),
  }
  const checkpoints = new Checkpoints(outDir, checkpointKey(runId, KT_VERSION, inputs), inputs, (f) =>
    displayPath(f, loaded.file),
  )
  ensureDir(outDir)

  // A phase is reused only when its checkpoint has this run's key and its outputs are intact, and
  // every phase it reads from was reused too (a phase recomputed feeds the ones after it).
  const reusable = new Map<PhaseName, unknown>()
  const notReused: Array<{phase: PhaseName; reason: string}> = []
  if (options.resume)
    for (const def of PHASES.filter((p) => toRun.includes(p.name))) {
      const stale = transitiveNeeds(def.name).find((need) => toRun.includes(need) && !reusable.has(need))
      const saved = stale
        ? {reason: `it reads phase ${findPhase(stale).number} (${stale}), which is recomputed`}
        : checkpoints.read(def.name)
      if ('result' in saved) reusable.set(def.name, saved.result)
      else notReused.push({phase: def.name, reason: saved.reason})
    }
  for (const n of notReused)
    if (n.reason !== 'no checkpoint') progress(`phase ${findPhase(n.phase).number}: not reused: ${n.reason}`)

  const charts = toRun.includes('visualize') ? memoizedRenderer(startChartRenderer()) : undefined
  const ctx = createContext(loaded, options.seed, outDir, progress, charts, datasets)
  const timing: Report['timing'] = {total_ms: 0, phases_ms: {}}
  const reused: PhaseName[] = []
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

  try {
    for (const def of PHASES.filter((p) => toRun.includes(p.name))) {
      const t0 = performance.now()
      if (reusable.has(def.name)) {
        ;(ctx.results as Record<string, unknown>)[def.name] = reusable.get(def.name)
        reused.push(def.name)
        progress(`phase ${def.number}: reused from an interrupted run`)
      } else {
        progress(`phase ${def.number}: ${def.title}`)
        const result = await def.run(ctx, runId)
        // wall-clock measurements belong to the timing section, not to the reproducible results
        const retrieval =
          def.name === 'search'
            ? (result as {retrieval?: {latency_check?: NonNullable<Report['timing']['retrieval_latency_check']>}})
                .retrieval
            : undefined
        if (retrieval?.latency_check) {
          timing.retrieval_latency_check = retrieval.latency_check
          delete retrieval.latency_check
        }
        ;(ctx.results as Record<string, unknown>)[def.name] = result
        checkpoints.write(def.name, result, phaseOutputs(def.name, result), isStudyStore)
      }
      timing.phases_ms[def.name] = round(performance.now() - t0)
      // start rendering every chart whose data is now complete, while later phases compute
      if (charts) for (const chart of studyCharts(ctx.results)) charts.prefetch(chart.spec)
    }
  } finally {
    await charts?.close()
  }
  const seeds = options.checkSeeds ? await checkSeeds(loaded, options.checkSeeds, ctx, progress) : undefined

  const phases = Object.fromEntries(
    PHASE_NAMES.filter((p) => ctx.results[p] !== undefined).map((p) => [p, ctx.results[p]]),
  ) as Partial<PhaseResults>
  const {reproducible, reason} = reproducibility(phases)
  const report: Report = {
    schema: REPORT_SCHEMA,
    version: REPORT_VERSION,
    run: {
      id: runId,
      seed: options.seed,
      plan: {name: loaded.plan.name, file: displayPath(resolve(loaded.file), loaded.file), sha256_12: loaded.hash},
      phases_requested: PHASE_NAMES.filter((p) => requested.includes(p)),
      phases_run: PHASE_NAMES.filter((p) => toRun.includes(p)),
      kt_version: KT_VERSION,
      reproducible,
      reproducible_reason: reason,
      ...(warnings.length ? {warnings} : {}),
    },
    phases,
    ...(seeds ? {seeds} : {}),
    timing,
  }
  timing.total_ms = round(performance.now() - started)
  writeReport(outDir, report)
  return {report, outDir, reused, notReused: options.resume ? notReused : [], warnings, notes}
}

/** A format-2 plan: the engine's phases (runEnginePlan), the report written as every run's. */
async function runEngineStudy(loaded: LoadedEnginePlan, options: RunOptions): Promise<RunOutcome> {
  const unsupported = options.resume
    ? '--resume'
    : options.checkSeeds
      ? '--seeds'
      : options.phases && PHASE_NAMES.some((p) => !options.phases!.includes(p))
        ? 'a single phase (kt phase)'
        : undefined
  if (unsupported)
    throw new InputError(
      loaded.file,
      `a kt_plan 1 plan for ${unsupported} (a kt_plan 2 plan runs its engine's phases whole, without checkpoints)`,
      'a kt_plan 2 plan',
    )
  const runId = runIdFor(options.seed, loaded.hash)
  const outDir = resolve(options.outDir ?? join('reports', runId))
  const report = await runEnginePlan(loaded, {
    seed: options.seed,
    outDir,
    runId,
    ktVersion: KT_VERSION,
    progress: options.progress ?? (() => {}),
  })
  writeReport(outDir, report)
  return {report, outDir, reused: [], notReused: [], warnings: [], notes: []}
}

function writeReport(outDir: string, report: Report): void {
  writeReportFiles(outDir, report)
}

function withPrerequisites(requested: readonly PhaseName[]): PhaseName[] {
  const out = new Set<PhaseName>()
  const add = (name: PhaseName): void => {
    for (const need of findPhase(name).needs) add(need)
    out.add(name)
  }
  requested.forEach(add)
  return PHASE_NAMES.filter((p) => out.has(p))
}

/** Every phase `name` reads from, directly or through another. */
function transitiveNeeds(name: PhaseName): PhaseName[] {
  const out = new Set<PhaseName>()
  const add = (n: PhaseName): void => {
    for (const need of findPhase(n).needs)
      if (!out.has(need)) {
        out.add(need)
        add(need)
      }
  }
  add(name)
  return PHASE_NAMES.filter((p) => out.has(p))
}

/** The files a phase writes into the run folder (relative paths), from its result: a reused phase must still have them. */
function phaseOutputs(name: PhaseName, result: unknown): string[] {
  if (name === 'search') {
    const r = result as SearchResult
    return [r.bohb.study.file, ...(r.retrieval ? [r.retrieval.store] : [])]
  }
  if (name === 'deploy') {
    const r = result as DeployResult
    return [
      ...r.profiles.flatMap((p) => p.files),
      ...(r.retrieval ? [...r.retrieval.domain.flatMap((p) => p.files), ...r.retrieval.routed_files] : []),
    ]
  }
  if (name === 'visualize') return (result as VisualizeResult).charts.flatMap((c) => [c.spec, c.svg, c.png])
  return []
}

/** Study stores are reopened and rewritten by SQLite: only their presence is checked. */
function isStudyStore(path: string): boolean {
  return path.endsWith('.sqlite')
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10
}
