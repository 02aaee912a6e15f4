import {rmSync} from 'node:fs'
import {join} from 'node:path'
import {IMPORTANCE_SPACE, importanceConfig} from '../src/engine/importance/space.js'
import {
  makeProfile,
  notValidated,
  validationFrom,
  writeProfileFiles,
  ROLLOUT_STAGES,
  type LeakageFinding,
  type Profile,
  type ProfileValidation,
} from '../src/deploy/profile.js'
import type {PhaseContext} from './lib/context.js'
import type {DeployResult, RetrievalSearchResult, ValidationResult} from '../src/report/types.js'
import {RETRIEVAL_SPACE} from '../src/engine/retrieval/space.js'
import {loadEngineFile} from '../src/adapters/file.js'
import {defaultConfig} from '../src/space/space.js'
import type {Config} from '../src/space/types.js'
import {holdoutMetrics, holdoutProfileValidation} from '../src/eval/holdout-validation.js'
import {ROUTED_PROFILE} from './lib/retrieval-study.js'
import {tuningMetricKey} from '../src/study/sweeps.js'
import {engineRefFor} from '../src/deploy/spaces.js'

export const PROFILES_DIR = 'profiles'
/** The ungated rollback script older kt versions wrote beside the profiles (removed on every run). */
const LEGACY_ROLLBACK_SCRIPT = 'rollback.sh'

/**
 * Phase 6: deployable profiles. The optimum and the baseline (the profile it replaces) as .env,
 * a POSIX shell script of exports and JSON with metrics, source run and rollout plan. Making one
 * active, and going back, is `kt deploy` / `kt rollback` on a deployment target: one gate, one
 * lock, one history (src/deploy/target.ts). There is no rollback script: a script that exported
 * the baseline was a second way back past all three, blind to what the target held.
 */
export function runDeploy(ctx: PhaseContext, runId: string): DeployResult {
  const {plan} = ctx.plan
  const search = ctx.results.search
  if (!search) throw new Error('phase 6 needs the search phase result')
  const validation = ctx.results.validation
  const scale = plan.time_scale_hours
  const metricsFor = (role: 'baseline' | 'optimum'): Profile['metrics'] => ({
    [`${search.objective}_on_${search.dataset}`]:
      role === 'optimum' ? search.optimum.objective.estimate : search.baseline.objective.estimate,
    [`token_budget_on_${search.dataset}`]:
      role === 'optimum' ? search.optimum.token_budget : search.baseline.token_budget,
  })
  const leakage = leakageFindings(ctx)
  const validationFor = (role: 'baseline' | 'optimum'): ProfileValidation =>
    role === 'baseline'
      ? notValidated('the baseline: the reference the optimum was validated against, not validated itself')
      : importanceValidation(validation)
  const profiles = (
    [
      ['baseline', plan.baseline],
      ['optimum', search.optimum.weights],
    ] as const
  ).map(([name, w]) => {
    ctx.progress(`phase 6: writing profile ${name}`)
    const profile = makeProfile({
      kind: 'importance',
      space: IMPORTANCE_SPACE,
      name,
      config: importanceConfig(w, scale),
      metrics: metricsFor(name),
      sourceRun: runId,
      validation: validationFor(name),
      leakage,
    })
    const files = writeProfileFiles(ctx.outDir, `${PROFILES_DIR}/${name}`, profile)
    return {name, weights: {...w}, files, profile, verdict: profile.validation.verdict}
  })
  // an output folder an older kt wrote may still hold its rollback.sh: it must not outlive this run
  rmSync(join(ctx.outDir, PROFILES_DIR, LEGACY_ROLLBACK_SCRIPT), {force: true})
  return {
    profiles: profiles.map(({name, weights, files, verdict}) => ({name, weights, files, verdict})),
    rollout: ROLLOUT_STAGES.map((s) => ({...s})),
    ...(search.retrieval
      ? {
          retrieval: retrievalProfiles(
            ctx.outDir,
            search.retrieval,
            runId,
            ctx.plan.plan.retrieval?.engine === undefined
              ? undefined
              : ctx.plan.resolvePath(ctx.plan.plan.retrieval.engine),
            ctx.progress,
          ),
        }
      : {}),
  }
}

/** The leakage audit's findings on every dataset of the run (phase 2), for the importance profiles. */
function leakageFindings(ctx: PhaseContext): LeakageFinding[] {
  return (ctx.results.synthetic?.datasets ?? []).flatMap((d) =>
    d.leakage.map((a) => ({
      dataset: d.id,
      signal: a.signal,
      verdict: a.verdict,
      dependence: a.dependence,
      flagged: a.verdict === 'leak',
    })),
  )
}

/** The optimum's validation record: every criterion on every held-out dataset (phase 5). */
export function importanceValidation(v: ValidationResult | undefined): ProfileValidation {
  if (!v) return notValidated('the validation phase did not run')
  if (v.verdict === 'not-validated' || v.datasets.length === 0) return notValidated(v.note ?? 'nothing was validated')
  const criteria = v.datasets.flatMap((d) =>
    d.verdicts.map((c) => ({
      id: c.id,
      description: c.description,
      metric: c.metric,
      op: c.op as '<' | '<=' | '>' | '>=',
      threshold: c.threshold,
      value: c.value,
      passed: c.passed,
      dataset: d.dataset,
      ...(c.confidence === undefined ? {} : {confidence: c.confidence}),
    })),
  )
  return validationFrom(
    criteria,
    v.datasets.map((d) => d.dataset),
    v.note ?? null,
  )
}

/**
 * The retrieval study's domain profiles (kind retrieval, or engine for an engine file) and its
 * routed profile (kind routed: base configuration plus per-query-type overrides), each with the
 * held-out validation the study gave it (none when the plan has no retrieval.split: then the
 * deploy gate refuses them without --force).
 */
export function retrievalProfiles(
  outDir: string,
  r: RetrievalSearchResult,
  runId: string,
  engineFile: string | undefined,
  progress: (text: string) => void,
): NonNullable<DeployResult['retrieval']> {
  // an external engine's profiles carry its own parameter names and environment variables
  const spec = engineFile === undefined ? undefined : loadEngineFile(engineFile)
  const space = spec ? spec.space : RETRIEVAL_SPACE
  const kind = spec ? ('engine' as const) : ('retrieval' as const)
  // relative to the profile's own folder (where kt deploy looks first): no absolute path, so the same plan gives the same profile bytes in any clone
  const engine = spec ? engineRefFor(spec, join(outDir, PROFILES_DIR)) : undefined
  // with a split the study measured on the tuning conversations only: the key says so
  const metricKey =
    r.holdout || r.validation
      ? `${r.metric}_tuning`.replace(/[^A-Za-z0-9_.@:-]/g, '_').slice(0, 64)
      : tuningMetricKey(r.metric, r.data)
  const defaults = defaultConfig(space)
  const inSpace = (c: Config): Config =>
    Object.fromEntries(Object.entries({...defaults, ...c}).filter(([k]) => k in defaults))
  const validationOf = (name: string): ProfileValidation => retrievalValidation(r, name)
  // kt's own engine with a split: the profile records its held-out quality, the defaults' and the interval
  const heldOut = (name: string): Profile['metrics'] => (r.validation ? holdoutMetrics(r.validation, name) : {})
  const write = (profile: Profile, name: string): string[] =>
    writeProfileFiles(outDir, `${PROFILES_DIR}/${name}`, profile)
  const domain = r.profiles
    .filter((p) => p.config !== null)
    .map((p) => {
      const name = `retrieval-${p.name}`
      progress(`phase 6: writing profile ${name}`)
      const metrics: Profile['metrics'] = {
        trial: p.trial,
        [metricKey]: p.metrics?.quality ?? null,
        p99_ms: p.metrics?.p99_ms ?? null,
        ...heldOut(name),
      }
      const profile = makeProfile({
        kind,
        space,
        name,
        config: inSpace(p.config!),
        metrics,
        sourceRun: runId,
        notes: p.rationale,
        description: p.description,
        validation: validationOf(name),
        ...(engine ? {engine} : {}),
      })
      return {name, trial: p.trial, files: write(profile, name), verdict: profile.validation.verdict}
    })
  if (!r.routed) return {domain, routed: null, routed_files: [], routed_verdict: null, overridden_types: []}
  const routedName = ROUTED_PROFILE
  const routed = makeProfile({
    kind: 'routed',
    space: RETRIEVAL_SPACE,
    name: routedName,
    config: inSpace(r.routed.base),
    overrides: r.routed.overrides,
    sourceRun: runId,
    routing: {min_gain: r.routed.min_gain, per_type: r.routed.per_type.map((t) => ({...t}))},
    metrics: {[metricKey]: r.routed.quality ?? null, ...heldOut(routedName)},
    validation: validationOf(routedName),
  })
  const routedFiles = write(routed, routedName)
  return {
    domain,
    routed: routedFiles[2],
    routed_files: routedFiles,
    routed_verdict: routed.validation.verdict,
    overridden_types: Object.keys(r.routed.overrides),
  }
}

/**
 * A retrieval profile's validation: with a held-out split (plan retrieval.split), its
 * non-inferiority test against the engine's defaults on the held-out conversations, question by
 * question (src/eval/holdout-validation.ts; kt's engine and an engine file's service alike, the
 * routed profile per overridden type too); without one it is not validated.
 */
function retrievalValidation(r: RetrievalSearchResult, name: string): ProfileValidation {
  if (r.validation)
    return (
      holdoutProfileValidation(r.validation, name) ??
      notValidated(`no held-out check of ${name} in the retrieval study`)
    )
  return notValidated(
    `the retrieval study tuned on all of ${r.data} and has no held-out conversations to validate on (set retrieval.split in the plan)`,
  )
}
