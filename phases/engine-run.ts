import {join} from 'node:path'
import type {MetricValues} from '../src/data/conversations/metrics.js'
import {ablateProfile, type EngineAblation} from '../src/eval/ablation.js'
import {COMPARE_BOOTSTRAP_SEED} from '../src/eval/compare.js'
import {NONINFERIORITY_MARGIN, type HoldoutValidationSettings} from '../src/eval/holdout-validation.js'
import type {
  EngineReport,
  EngineValidation,
  PropertiesResult,
  RetrievalSearchResult,
  SyntheticResult,
  VisualizeResult,
} from '../src/report/types.js'
import {activeConfig, defaultConfig} from '../src/space/space.js'
import type {Config} from '../src/space/types.js'
import type {LoadedEnginePlan} from './engine-plan.js'
import {displayPath} from './lib/context.js'
import {type EngineInputs} from './lib/engine-inputs.js'
import {engineSyntheticPhase, engineVisualize, type EnginePhaseInput} from './lib/engine-phases.js'
import {tunedTrial, validateEngine, writeEngineProfiles} from './lib/engine-validation.js'
import {DEFAULTS_TRIAL, RETRIEVAL_STUDY_FILE, startRetrievalStudy} from './lib/retrieval-study.js'
import {retrievalProfiles} from './6-deploy.js'
import type {PhaseDef} from './runner.js'

/** The phases' results of a format-2 run, by phase. */
interface EngineResults {
  properties: PropertiesResult
  synthetic: SyntheticResult
  search: RetrievalSearchResult
  ablation: EngineAblation
  validation: EngineValidation
  deploy: NonNullable<EngineReport['deploy']>
  visualize: VisualizeResult
}

/** What the phases of a format-2 run read: the plan, its checked inputs, the run's seed and folder, and the results so far. */
export interface EngineContext {
  readonly loaded: LoadedEnginePlan
  readonly inputs: EngineInputs
  readonly seed: number
  readonly outDir: string
  readonly runId: string
  readonly progress: (text: string) => void
  readonly results: Partial<EngineResults>
  readonly settings: HoldoutValidationSettings
  /** Continue the study store in the run folder (a resumed run started from the same inputs). */
  readonly continueStore: boolean
  /** Per-question rows of a configuration on the held-out questions (each configuration scored once). */
  score(config: Config): Promise<{rows: MetricValues[]; categories: string[]}>
}

export function createEngineContext(
  loaded: LoadedEnginePlan,
  inputs: EngineInputs,
  run: Pick<EngineContext, 'seed' | 'outDir' | 'runId' | 'progress' | 'continueStore'>,
): EngineContext {
  const {plan} = loaded
  const defaults = defaultConfig(inputs.engine.space)
  // the service is deterministic per configuration: every configuration is scored once
  const scored = new Map<string, {rows: MetricValues[]; categories: string[]}>()
  return {
    ...run,
    loaded,
    inputs,
    results: {},
    settings: {
      metric: plan.metric,
      margin: plan.ablation?.margin ?? plan.acceptance.margin ?? NONINFERIORITY_MARGIN,
      confidence: plan.bootstrap.confidence,
      resamples: plan.bootstrap.resamples,
      seed: COMPARE_BOOTSTRAP_SEED,
    },
    async score(config) {
      const full = {...defaults, ...config}
      const key = JSON.stringify(Object.keys(full).map((k) => [k, full[k]]))
      let s = scored.get(key)
      if (!s) scored.set(key, (s = await inputs.engine.score(inputs.questions!.heldOut, full)))
      return s
    },
  }
}

/** What phases 1, 2 and 7 read of a run: the engine and its data as reports name them. */
function phaseInput(ctx: EngineContext): EnginePhaseInput {
  const {engine, questions, dataLabel} = ctx.inputs
  return {
    engine,
    ...(questions ? {data: questions.data} : {}),
    dataLabel,
    ...(engine.file ? {fileLabel: displayPath(engine.file, ctx.loaded.file)} : {}),
    seed: ctx.seed,
    progress: ctx.progress,
  }
}

/** Phase 4: the study of the engine on the tuning conversations (kt search's study, with the plan's settings). */
export function engineSearch(ctx: EngineContext): Promise<RetrievalSearchResult> {
  const {plan} = ctx.loaded
  const {engine, questions, dataLabel} = ctx.inputs
  ctx.progress(`phase 4: tuning ${engine.name} on ${dataLabel}`)
  return startRetrievalStudy(
    {
      settings: {
        ...(questions ? {split: questions.splitSetting} : {}),
        metric: plan.metric,
        optimizer: plan.search.optimizer,
        budget: plan.search.budget,
        ...(plan.acceptance.margin === undefined ? {} : {margin: plan.acceptance.margin}),
      },
      ...(questions ? {data: questions.data} : {}),
      dataLabel,
      storage: join(ctx.outDir, RETRIEVAL_STUDY_FILE),
      seed: ctx.seed,
      bootstrap: plan.bootstrap,
      ...(engine.file ? {engine: engine.file} : {}),
    },
    ctx.continueStore,
    (line) => ctx.progress(`phase 4: ${line}`),
  )
}

/** The profile the run ablates and validates: the plan's ablation.profile, else phase 4's best trial (the defaults when none beats them). */
export function tunedOf(ctx: EngineContext): NonNullable<EngineReport['tuned']> {
  const {inputs} = ctx
  const search = ctx.results.search!
  const defaults = defaultConfig(inputs.engine.space)
  const best = inputs.ablated
    ? {trial: null, config: inputs.ablated.config, tuning_quality: null, profile: inputs.ablated.name}
    : (tunedTrial(search) ?? {trial: DEFAULTS_TRIAL, config: defaults, tuning_quality: search.default_quality})
  // an inactive conditional parameter is not a change: it is sent at its default
  return {...best, config: activeConfig(inputs.engine.space, {...defaults, ...best.config})}
}

async function engineAblation(ctx: EngineContext): Promise<EngineAblation> {
  ctx.progress('phase 3: ablation of the tuned profile on the held-out conversations')
  const {engine} = ctx.inputs
  return ablateProfile({
    defaults: defaultConfig(engine.space),
    tuned: tunedOf(ctx).config,
    groups: engine.groups,
    linked: engine.linked,
    settings: ctx.settings,
    rowsOf: async (c) => (await ctx.score(c)).rows,
    progress: (line) => ctx.progress(`phase 3: ${line}`),
  })
}

function engineValidation(ctx: EngineContext): Promise<EngineValidation> {
  ctx.progress('phase 5: validation on the held-out conversations, overall and per category')
  return validateEngine(ctx, tunedOf(ctx).config, ctx.results.ablation!.minimal.config)
}

/**
 * Phase 6: the tuned and the minimal profile, then the engine's own profile rules' choices, validated
 * by the study (an engine without held-out questions: its own profiles only, not validated).
 */
function engineDeploy(ctx: EngineContext): EngineResults['deploy'] {
  const {ablation, validation} = ctx.results
  const deploy =
    ablation && validation
      ? writeEngineProfiles(ctx, tunedOf(ctx), ablation.minimal.config, validation)
      : {profiles: []}
  const own = retrievalProfiles(ctx.outDir, ctx.results.search!, ctx.runId, ctx.inputs.engine.file, ctx.progress)
  deploy.profiles.push(
    ...own.domain.map((p) => ({name: p.name, files: p.files, verdict: p.verdict})),
    ...(own.routed ? [{name: 'retrieval-routed', files: own.routed_files, verdict: own.routed_verdict ?? ''}] : []),
  )
  return deploy
}

/**
 * The seven phases for the engine a format-2 plan names, in the order they run (the search before
 * the ablation, which takes its tuned profile). Same names and numbers as kt's importance study.
 */
export const ENGINE_PHASES: readonly PhaseDef<EngineContext>[] = [
  {
    number: 1,
    name: 'properties',
    title: "Conformance of the engine's protocol",
    needs: [],
    run: (ctx) => ctx.inputs.engine.properties(phaseInput(ctx)),
  },
  {
    number: 2,
    name: 'synthetic',
    title: "kt's synthetic conversations through the engine",
    needs: [],
    skip: (ctx) => perQuestion(ctx, "kt's synthetic conversations are scored question by question"),
    run: (ctx) => engineSyntheticPhase(phaseInput(ctx), ctx.inputs.questions!.split),
  },
  {
    number: 4,
    name: 'search',
    title: 'Search of the engine',
    needs: [],
    run: engineSearch,
    outputs: (r) => [(r as RetrievalSearchResult).store],
  },
  {
    number: 3,
    name: 'ablation',
    title: 'Ablation of the tuned profile',
    needs: ['search'],
    skip: (ctx) => perQuestion(ctx, 'the ablation pairs configurations question by question on held-out data'),
    run: engineAblation,
  },
  {
    number: 5,
    name: 'validation',
    title: 'Validation on the held-out conversations',
    needs: ['search', 'ablation'],
    skip: (ctx) => perQuestion(ctx, 'the validation pairs the tuned profile with the reference on held-out questions'),
    run: engineValidation,
  },
  {
    number: 6,
    name: 'deploy',
    title: 'Deployable profiles',
    needs: ['search', 'ablation', 'validation'],
    run: engineDeploy,
    outputs: (r) => (r as EngineResults['deploy']).profiles.flatMap((p) => p.files),
  },
  {
    number: 7,
    name: 'visualize',
    title: "The engine's charts",
    needs: ['search', 'ablation'],
    run: (ctx) =>
      engineVisualize({
        ...phaseInput(ctx),
        metric: ctx.loaded.plan.metric,
        search: ctx.results.search!,
        ...(ctx.results.ablation ? {ablation: ctx.results.ablation} : {}),
        outDir: ctx.outDir,
      }),
    outputs: (r) => (r as VisualizeResult).charts.flatMap((c) => [c.spec, c.svg, c.png]),
  },
]

/** Why a phase that needs per-question results does not apply to an engine that has none (undefined: it applies). */
function perQuestion(ctx: EngineContext, why: string): string | undefined {
  const {engine} = ctx.inputs
  return engine.scoresQuestions
    ? undefined
    : `${why}; ${engine.name} is a command or http engine, which returns metrics of its own data, no per-question results`
}

/** The report's engine section from the phases that ran (a partial run has the sections of its phases). */
export function engineSection(ctx: EngineContext, notApplicable: EngineReport['not_applicable'] = {}): EngineReport {
  const {engine, dataLabel} = ctx.inputs
  const {search, ablation, validation, deploy} = ctx.results
  return {
    engine: {
      ref: engine.file ? displayPath(engine.file, ctx.loaded.file) : engine.ref,
      name: engine.name,
      latency: engine.latency,
    },
    data: dataLabel,
    metric: ctx.loaded.plan.metric,
    ...(search ? {tuned: tunedOf(ctx)} : {}),
    ...(ablation ? {ablation} : {}),
    ...(search ? {search} : {}),
    ...(validation ? {validation} : {}),
    ...(deploy ? {deploy} : {}),
    ...(Object.keys(notApplicable).length ? {not_applicable: notApplicable} : {}),
  }
}
