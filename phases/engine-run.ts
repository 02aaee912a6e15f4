import {rmSync} from 'node:fs'
import {join, resolve} from 'node:path'
import {performance} from 'node:perf_hooks'
import {loadMemoryDataset} from '../src/data/conversations/index.js'
import {describeSplit, splitDataset, splitIds} from '../src/data/conversations/split.js'
import type {MemoryDataset} from '../src/data/conversations/types.js'
import type {MetricValues} from '../src/data/conversations/metrics.js'
import {engineRefFor} from '../src/deploy/spaces.js'
import {makeProfile, validationFrom, writeProfileFiles, type ProfileValidation} from '../src/deploy/profile.js'
import {ablateProfile, type AblationDelta} from '../src/eval/ablation.js'
import {compareByCategory} from '../src/eval/categories.js'
import {COMPARE_BOOTSTRAP_SEED, compareRows} from '../src/eval/compare.js'
import {NONINFERIORITY_MARGIN, type HoldoutValidationSettings} from '../src/eval/holdout-validation.js'
import {loadEngineProfile} from '../src/eval/service-eval.js'
import {reproducibility} from '../src/report/reproducibility.js'
import type {
  EngineComparison,
  EngineReport,
  EngineValidation,
  PhaseResults,
  Report,
  RetrievalSearchResult,
} from '../src/report/types.js'
import {PHASE_NAMES, REPORT_SCHEMA, REPORT_VERSION} from '../src/report/types.js'
import {activeConfig, defaultConfig} from '../src/space/space.js'
import {UNSAFE_TEXT} from '../src/space/names.js'
import type {Config} from '../src/space/types.js'
import {InputError, describeValue} from '../src/util/errors.js'
import {ensureDir} from '../src/util/fs.js'
import type {LoadedEnginePlan} from './engine-plan.js'
import {displayPath} from './lib/context.js'
import {planEngine, type PlanEngine} from './lib/plan-engine.js'
import {DEFAULTS_TRIAL, RETRIEVAL_STUDY_FILE, planSplit, startRetrievalStudy} from './lib/retrieval-study.js'
import {PROFILES_DIR, retrievalProfiles} from './6-deploy.js'
import {engineProperties, engineSyntheticPhase, engineVisualize} from './lib/engine-phases.js'

/** The name of the tuned profile a format-2 run writes (and of its minimal profile, with -minimal). */
const TUNED_PROFILE = 'tuned'

export interface EngineRunOptions {
  readonly seed: number
  readonly outDir?: string
  readonly runId: string
  readonly ktVersion: string
  readonly progress: (text: string) => void
}

/** Everything a format-2 run needs, read and checked before anything is written. */
interface EngineInputs {
  readonly engine: PlanEngine
  readonly data: string
  readonly dataset: MemoryDataset
  readonly heldOut: MemoryDataset
  readonly splitText: string
  readonly reference: {readonly name: string; readonly config: Config}
  /** The profile the plan's ablation.profile names, to ablate instead of the tuned one. */
  readonly ablated?: {readonly name: string; readonly config: Config}
}

function checkEngineInputs(loaded: LoadedEnginePlan, seed: number): EngineInputs {
  const {plan, file} = loaded
  const engine = planEngine(plan.engine, loaded.resolvePath, `${file}: engine`)
  const data = loaded.resolvePath(plan.data.conversations)
  const dataset = loadMemoryDataset(data)
  const split = planSplit({...studySettings(loaded)}, seed)!
  const ids = splitIds(dataset, split, `${file}: data.split`)
  const known = new Set(dataset.conversations.map((c) => c.id))
  for (const part of ['train', 'holdout'] as const)
    ids[part].forEach((id, i) => {
      if (!known.has(id))
        throw new InputError(`${file}: data.split.${part}[${i}]`, `a conversation id of ${data}`, describeValue(id))
    })
  const against = plan.acceptance.against
  // a profile of another engine is refused here (its space is not this engine's): one line, exit 2
  const reference =
    against === 'defaults'
      ? {name: 'defaults', config: defaultConfig(engine.space)}
      : {
          name: displayPath(loaded.resolvePath(against), file),
          config: loadEngineProfile(loaded.resolvePath(against), engine.space),
        }
  // an ablation asked on a profile of another engine is refused the same way
  const ablated = plan.ablation?.profile
  return {
    ...(ablated === undefined
      ? {}
      : {
          ablated: {
            name: displayPath(loaded.resolvePath(ablated), file),
            config: loadEngineProfile(loaded.resolvePath(ablated), engine.space),
          },
        }),
    engine,
    data,
    dataset,
    heldOut: splitDataset(dataset, split, 'holdout'),
    splitText: describeSplit(dataset, split),
    reference,
  }
}

/** The plan's search settings in the form the retrieval study takes. */
function studySettings(loaded: LoadedEnginePlan) {
  const {plan} = loaded
  return {
    data: plan.data.conversations,
    metric: plan.metric,
    optimizer: plan.search.optimizer,
    budget: plan.search.budget,
    split: plan.data.split,
    ...(plan.engine.startsWith('kt:') ? {} : {engine: plan.engine}),
    ...(plan.acceptance.margin === undefined ? {} : {margin: plan.acceptance.margin}),
  }
}

/**
 * The tuned profile: the best full-budget trial on the tuning conversations, the defaults competing
 * (ties: lower P99, then the defaults, then the earlier trial); undefined when the defaults are best.
 */
function tunedTrial(r: RetrievalSearchResult): EngineReport['tuned'] | undefined {
  const full = (r.trials ?? []).filter((t) => t.set !== 'lower budget')
  const best = full.reduce<(typeof full)[number] | undefined>((a, t) => {
    if (!a || t.quality > a.quality) return t
    if (t.quality < a.quality) return a
    if (t.p99_ms !== a.p99_ms) return t.p99_ms < a.p99_ms ? t : a
    return a.trial === DEFAULTS_TRIAL || (t.trial !== DEFAULTS_TRIAL && a.trial < t.trial) ? a : t
  }, undefined)
  return best && best.trial !== DEFAULTS_TRIAL
    ? {trial: best.trial, config: {...best.config}, tuning_quality: best.quality}
    : undefined
}

export async function runEnginePlan(loaded: LoadedEnginePlan, options: EngineRunOptions): Promise<Report> {
  const started = performance.now()
  const {plan, file} = loaded
  const inputs = checkEngineInputs(loaded, options.seed)
  const {engine, heldOut} = inputs
  const outDir = resolve(options.outDir ?? join('reports', options.runId))
  ensureDir(outDir)
  const progress = options.progress
  const timing: Report['timing'] = {total_ms: 0, phases_ms: {}}
  const clock = () => performance.now()

  // phases 1 and 2: the engine's conformance and kt's synthetic conversations through it, before tuning
  const phaseInput = {
    engine,
    data: inputs.data,
    dataLabel: displayPath(inputs.data, file),
    ...(engine.file ? {fileLabel: displayPath(engine.file, file)} : {}),
    seed: options.seed,
    progress,
  }
  let t0 = clock()
  const properties = await engineProperties(phaseInput)
  timing.phases_ms.properties = round(clock() - t0)
  t0 = clock()
  const synthetic = await engineSyntheticPhase(phaseInput, planSplit(studySettings(loaded), options.seed)!)
  timing.phases_ms.synthetic = round(clock() - t0)

  t0 = clock()
  progress(`phase 4: tuning ${engine.name} on ${displayPath(inputs.data, file)}`)
  const search = await startRetrievalStudy(
    {
      settings: studySettings(loaded),
      data: inputs.data,
      dataLabel: displayPath(inputs.data, file),
      storage: join(outDir, RETRIEVAL_STUDY_FILE),
      seed: options.seed,
      bootstrap: plan.bootstrap,
      ...(engine.file ? {engine: engine.file} : {}),
    },
    false,
    (line) => progress(`phase 4: ${line}`),
  )
  timing.phases_ms.search = round(clock() - t0)
  const defaults = defaultConfig(engine.space)
  const best: EngineReport['tuned'] = inputs.ablated
    ? {trial: null, config: inputs.ablated.config, tuning_quality: null, profile: inputs.ablated.name}
    : (tunedTrial(search) ?? {trial: DEFAULTS_TRIAL, config: defaults, tuning_quality: search.default_quality})
  // an inactive conditional parameter is not a change: it is sent at its default
  const tuned = {...best, config: activeConfig(engine.space, {...defaults, ...best.config})}

  // every configuration is scored once on the held-out questions (the service is deterministic per configuration)
  const scored = new Map<string, {rows: MetricValues[]; categories: string[]}>()
  const score = async (config: Config) => {
    const full = {...defaults, ...config}
    const key = JSON.stringify(Object.keys(full).map((k) => [k, full[k]]))
    let s = scored.get(key)
    if (!s) scored.set(key, (s = await engine.score(heldOut, full)))
    return s
  }
  const settings: HoldoutValidationSettings = {
    metric: plan.metric,
    margin: plan.ablation?.margin ?? plan.acceptance.margin ?? NONINFERIORITY_MARGIN,
    confidence: plan.bootstrap.confidence,
    resamples: plan.bootstrap.resamples,
    seed: COMPARE_BOOTSTRAP_SEED,
  }
  t0 = clock()
  progress('phase 3: ablation of the tuned profile on the held-out conversations')
  const ablation = await ablateProfile({
    defaults,
    tuned: tuned.config,
    groups: engine.groups,
    linked: engine.linked,
    settings,
    rowsOf: async (c) => (await score(c)).rows,
    progress: (line) => progress(`phase 3: ${line}`),
  })
  timing.phases_ms.ablation = round(clock() - t0)

  t0 = clock()
  progress('phase 5: validation on the held-out conversations, overall and per category')
  const validation = await validateEngine(loaded, inputs, settings, score, tuned.config, ablation.minimal.config)
  timing.phases_ms.validation = round(clock() - t0)

  t0 = clock()
  const deploy = writeEngineProfiles(outDir, options.runId, engine, loaded, tuned, ablation.minimal.config, validation)
  // the engine's own profile rules' choices, validated by the study as every retrieval study's (phase 6 of any plan)
  const own = retrievalProfiles(outDir, search, options.runId, engine.file, progress)
  deploy.profiles.push(
    ...own.domain.map((p) => ({name: p.name, files: p.files, verdict: p.verdict})),
    ...(own.routed ? [{name: 'retrieval-routed', files: own.routed_files, verdict: own.routed_verdict ?? ''}] : []),
  )
  timing.phases_ms.deploy = round(clock() - t0)

  t0 = clock()
  const visualize = await engineVisualize({...phaseInput, metric: plan.metric, search, ablation, outDir})
  timing.phases_ms.visualize = round(clock() - t0)

  const {reproducible, reason} = reproducibility({search: {retrieval: search}} as unknown as Partial<PhaseResults>)
  const report: Report = {
    schema: REPORT_SCHEMA,
    version: REPORT_VERSION,
    run: {
      id: options.runId,
      seed: options.seed,
      plan: {name: plan.name, file: displayPath(resolve(file), file), sha256_12: loaded.hash},
      phases_requested: [...PHASE_NAMES],
      phases_run: [...PHASE_NAMES],
      kt_version: options.ktVersion,
      reproducible,
      reproducible_reason: reason,
    },
    phases: {properties, synthetic, visualize},
    engine: {
      engine: {
        ref: engine.file ? displayPath(engine.file, file) : engine.ref,
        name: engine.name,
        latency: engine.latency,
      },
      data: displayPath(inputs.data, file),
      metric: plan.metric,
      tuned,
      ablation,
      search,
      validation,
      deploy,
    },
    timing,
  }
  timing.total_ms = round(performance.now() - started)
  return report
}

/** Phase 5: the tuned and the minimal profile against the plan's reference, overall and per category; the tuned one's verdict is the run's. */
async function validateEngine(
  loaded: LoadedEnginePlan,
  inputs: EngineInputs,
  settings: HoldoutValidationSettings,
  score: (config: Config) => Promise<{rows: MetricValues[]; categories: string[]}>,
  tuned: Config,
  minimal: Config,
): Promise<EngineValidation> {
  const {reference} = inputs
  const refScores = await score(reference.config)
  const compare = async (name: string, config: Config) =>
    engineComparison(name, reference.name, refScores, await score(config), loaded, settings)
  const tunedCheck = await compare(TUNED_PROFILE, tuned)
  return {
    split: inputs.splitText,
    metric: loaded.plan.metric,
    confidence: settings.confidence,
    resamples: settings.resamples,
    rule: acceptanceRule(loaded, reference.name, settings.confidence),
    tuned: tunedCheck,
    minimal: await compare(`${TUNED_PROFILE}-minimal`, minimal),
    verdict: tunedCheck.passed ? 'pass' : 'fail',
  }
}

function acceptanceRule(loaded: LoadedEnginePlan, against: string, confidence: number): string {
  const {metric, acceptance} = loaded.plan
  const pct = `${Math.round(100 * confidence)}%`
  return acceptance.gain !== undefined
    ? `pass when the lower bound of the ${pct} paired bootstrap interval of ${metric} (profile - ${against}) on the held-out questions is >= ${acceptance.gain}`
    : `pass when the lower bound of the ${pct} paired bootstrap interval of ${metric} (profile - ${against}) on the held-out questions is >= -${acceptance.margin ?? NONINFERIORITY_MARGIN}`
}

function toDelta(d: {
  b: number
  delta: number
  low: number | null
  high: number | null
  better: number
  worse: number
}): AblationDelta {
  return {quality: d.b, value: d.delta, low: d.low, high: d.high, better: d.better, worse: d.worse}
}

/** A profile against the reference, overall (with the plan's acceptance rule) and per category. */
function engineComparison(
  name: string,
  against: string,
  ref: {rows: MetricValues[]; categories: string[]},
  own: {rows: MetricValues[]},
  loaded: LoadedEnginePlan,
  settings: HoldoutValidationSettings,
): EngineComparison {
  const options = {seed: settings.seed, confidence: settings.confidence, resamples: settings.resamples}
  const a = {name: against, rows: ref.rows}
  const b = {name, rows: own.rows}
  const overall = compareRows(a, b, [settings.metric], options).differences[0]
  const {acceptance} = loaded.plan
  const threshold = acceptance.gain ?? -(acceptance.margin ?? NONINFERIORITY_MARGIN)
  return {
    name,
    against,
    queries: ref.rows.length,
    reference_quality: overall.a,
    delta: toDelta(overall),
    categories: compareByCategory(a, b, ref.categories, [settings.metric], options).map((d) => ({
      category: d.category,
      queries: d.queries,
      reference_quality: d.a,
      delta: toDelta(d),
    })),
    passed: overall.low !== null && overall.low >= threshold,
  }
}

/** Phase 6: the tuned and the minimal profile, each with its held-out check as its validation record, through the profile checks every profile passes. */
function writeEngineProfiles(
  outDir: string,
  runId: string,
  engine: PlanEngine,
  loaded: LoadedEnginePlan,
  tuned: EngineReport['tuned'],
  minimal: Config,
  v: EngineValidation,
): EngineReport['deploy'] {
  rmSync(join(outDir, PROFILES_DIR), {recursive: true, force: true})
  const {acceptance, metric} = loaded.plan
  const threshold = acceptance.gain ?? -(acceptance.margin ?? NONINFERIORITY_MARGIN)
  const key = (suffix: string) => `${metric}_${suffix}`.replace(/[^A-Za-z0-9_.@:-]/g, '_').slice(0, 64)
  const validationOf = (c: EngineComparison): ProfileValidation =>
    validationFrom(
      [
        {
          id: 'holdout-acceptance',
          description: `${v.rule} (${c.queries} questions)`.slice(0, 2000),
          metric: key('delta_ci_low'),
          op: '>=',
          threshold,
          value: c.delta.low,
          passed: c.passed,
          dataset: 'holdout',
          confidence: v.confidence,
        },
      ],
      ['holdout'],
      `held-out conversations: ${v.split}`.replace(new RegExp(UNSAFE_TEXT.source, 'gu'), ' ').slice(0, 2000),
    )
  const engineRef = engine.file
    ? engineRefFor({name: engine.name, file: engine.file}, join(outDir, PROFILES_DIR))
    : undefined
  const profiles = [
    {
      check: v.tuned,
      config: tuned.config,
      notes: [
        tuned.profile === undefined
          ? `trial ${tuned.trial}: the best on the tuning conversations`
          : `the plan's ablated profile ${tuned.profile}`,
      ],
    },
    {
      check: v.minimal,
      config: minimal,
      notes: ["the smallest set of the tuned profile's changes non-inferior to it on the held-out questions (phase 3)"],
    },
  ].map(({check, config, notes}) => {
    const profile = makeProfile({
      kind: engineRef ? 'engine' : 'retrieval',
      space: engine.space,
      name: check.name,
      config: {...defaultConfig(engine.space), ...config},
      metrics: {
        [key('holdout')]: check.delta.quality,
        [key('holdout_reference')]: check.reference_quality,
        [key('holdout_delta')]: check.delta.value,
        [key('holdout_delta_ci_low')]: check.delta.low,
        [key('holdout_delta_ci_high')]: check.delta.high,
        holdout_queries: check.queries,
      },
      sourceRun: runId,
      notes,
      validation: validationOf(check),
      ...(engineRef ? {engine: engineRef} : {}),
    })
    const files = writeProfileFiles(outDir, `${PROFILES_DIR}/${check.name}`, profile)
    return {name: check.name, files, verdict: profile.validation.verdict}
  })
  return {profiles}
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10
}
