import {join} from 'node:path'
import {IMPORTANCE_SPACE, importanceConfig} from '../src/engine/importance/space.js'
import {makeProfile, profileJson, renderEnvFile, renderShellScript, ROLLOUT_STAGES, type Profile} from '../src/deploy/profile.js'
import {writeFileAtomic} from '../src/util/fs.js'
import type {PhaseContext} from './lib/context.js'
import type {DeployResult, RetrievalSearchResult, WeightsRecord} from './report-types.js'
import {RETRIEVAL_SPACE} from '../src/engine/retrieval/space.js'
import {loadEngineFile} from '../src/engines/file.js'
import {defaultConfig} from '../src/space/space.js'
import type {Config} from '../src/space/types.js'

export const PROFILES_DIR = 'profiles'

/**
 * Phase 6: deployable profiles. The optimum and the baseline (the profile it replaces) as .env,
 * a POSIX shell script of exports and JSON with metrics, source run and rollout plan; plus
 * rollback.sh, which restores the previous (baseline) profile.
 */
export function runDeploy(ctx: PhaseContext, runId: string): DeployResult {
  const {plan} = ctx.plan
  const search = ctx.results.search
  if (!search) throw new Error('phase 6 needs the search phase result')
  const validation = ctx.results.validation
  const scale = plan.time_scale_hours
  const metricsFor = (w: WeightsRecord, role: 'baseline' | 'optimum'): Profile['metrics'] => ({
    [`${search.objective}_on_${search.dataset}`]: role === 'optimum' ? search.optimum.objective.estimate : search.baseline.objective.estimate,
    [`token_budget_on_${search.dataset}`]: role === 'optimum' ? search.optimum.token_budget : search.baseline.token_budget,
    validation_passed: validation ? (role === 'optimum' ? String(validation.passed) : 'reference') : 'not run',
    weights_sum: w.decay + w.surprise + w.relevance + w.habituation,
  })
  const profiles = ([['baseline', plan.baseline], ['optimum', search.optimum.weights]] as const).map(([name, w]) => {
    ctx.progress(`phase 6: writing profile ${name}`)
    const profile = makeProfile(IMPORTANCE_SPACE, name, importanceConfig(w, scale), metricsFor(w, name), runId)
    const files = [`${PROFILES_DIR}/${name}.env`, `${PROFILES_DIR}/${name}.sh`, `${PROFILES_DIR}/${name}.json`]
    writeFileAtomic(join(ctx.outDir, files[0]), renderEnvFile(IMPORTANCE_SPACE, profile))
    writeFileAtomic(join(ctx.outDir, files[1]), renderShellScript(IMPORTANCE_SPACE, profile), 0o755)
    writeFileAtomic(join(ctx.outDir, files[2]), profileJson(profile))
    return {name, weights: {...w}, files, profile}
  })
  const previous = profiles[0].profile
  const rollback = `${PROFILES_DIR}/rollback.sh`
  writeFileAtomic(join(ctx.outDir, rollback), renderShellScript(IMPORTANCE_SPACE, previous, `rollback: restores the previous profile (${previous.name}); source it: . ${rollback}`), 0o755)
  return {
    profiles: profiles.map(({name, weights, files}) => ({name, weights, files})),
    rollback_script: rollback,
    rollout: ROLLOUT_STAGES.map((s) => ({...s})),
    ...(search.retrieval ? {retrieval: retrievalProfiles(ctx, search.retrieval, runId)} : {}),
  }
}

/**
 * The retrieval study's domain profiles (one kt profile each, space "retrieval") and its routed
 * profile (base configuration plus per-query-type overrides, the form `kt eval --profile` reads).
 */
function retrievalProfiles(ctx: PhaseContext, r: RetrievalSearchResult, runId: string): NonNullable<DeployResult['retrieval']> {
  // an external engine's profiles carry its own parameter names and environment variables
  const space = ctx.plan.plan.retrieval?.engine ? loadEngineFile(ctx.plan.resolvePath(ctx.plan.plan.retrieval.engine)).space : RETRIEVAL_SPACE
  const defaults = defaultConfig(space)
  const inSpace = (c: Config): Config => Object.fromEntries(Object.entries({...defaults, ...c}).filter(([k]) => k in defaults))
  const domain = r.profiles.filter((p) => p.config !== null).map((p) => {
    const name = `retrieval-${p.name}`
    ctx.progress(`phase 6: writing profile ${name}`)
    const metrics: Profile['metrics'] = {trial: p.trial, quality: p.metrics?.quality ?? null, p99_ms: p.metrics?.p99_ms ?? null, rationale: p.rationale.join(' | ')}
    const profile = makeProfile(space, name, inSpace(p.config!), metrics, runId)
    const files = [`${PROFILES_DIR}/${name}.env`, `${PROFILES_DIR}/${name}.sh`, `${PROFILES_DIR}/${name}.json`]
    writeFileAtomic(join(ctx.outDir, files[0]), renderEnvFile(space, profile))
    writeFileAtomic(join(ctx.outDir, files[1]), renderShellScript(space, profile), 0o755)
    writeFileAtomic(join(ctx.outDir, files[2]), profileJson(profile))
    return {name, trial: p.trial, files}
  })
  if (!r.routed) return {domain, routed: null, overridden_types: []}
  const routedFile = `${PROFILES_DIR}/retrieval-routed.json`
  const routed = {kt_routed_profile: 1, space: RETRIEVAL_SPACE.id, source_run: runId, config: inSpace(r.routed.base), overrides: r.routed.overrides, per_type: r.routed.per_type}
  writeFileAtomic(join(ctx.outDir, routedFile), `${JSON.stringify(routed, null, 2)}\n`)
  return {domain, routed: routedFile, overridden_types: Object.keys(r.routed.overrides)}
}
