/**
 * What a study of an engine file yields beyond its trials: the Pareto front over the file's
 * objectives with its hypervolume, the file's own domain profiles (its `profiles` rules), and each
 * chosen profile as deployable files in the engine's own variable names (`profiles/<name>.json`,
 * `.env`, `.sh`), plus the engine's defaults as the `defaults` profile to roll back to.
 */
import {join} from 'node:path'
import {analyzeObjectiveStudy, type ObjectiveStudyAnalysis} from '../search/analysis.js'
import type {EngineSpec} from '../engines/file.js'
import {activeConfig, configKeys, defaultConfig, type Config} from '../space/index.js'
import {writeFileAtomic} from '../util/fs.js'
import {holdoutLines, type HoldoutReport} from '../search/holdout.js'
import {holdoutMetrics, holdoutProfileValidation, holdoutValidationLines, type HoldoutValidation} from '../eval/holdout-validation.js'
import type {TrialRow} from './store.js'
import {writeFrontChart} from './sweeps.js'
import {snakeKeysOfRecord} from '../util/json-keys.js'

/** Name of the profile that restores the engine's defaults. */
export const DEFAULTS_PROFILE = 'defaults'

export interface EngineStudyOutputs extends ObjectiveStudyAnalysis {
  readonly files: string[]
}

/** A configuration as deployed: inactive conditional parameters at their default, nothing outside the space. */
export function deployableConfig(spec: EngineSpec, config: Config): Config {
  const base = {...defaultConfig(spec.space), ...config}
  const out: Config = {}
  for (const key of configKeys(spec.space)) out[key] = base[key]
  return activeConfig(spec.space, out)
}

/** Writes the front, the profiles and their deployable files to `out` (when given). */
export async function writeEngineStudyOutputs(
  spec: EngineSpec,
  trials: readonly TrialRow[],
  out: string | undefined,
  /** The study's name: the profiles' source_run (never the storage URL, which may hold a password). */
  study: string,
  holdout?: HoldoutReport,
  validation?: HoldoutValidation,
): Promise<EngineStudyOutputs & {holdout?: HoldoutReport}> {
  const plain = analyzeObjectiveStudy(trials, spec.objectives, spec.profiles)
  // with held-out data, every front point and profile carries its held-out quality beside its tuning quality
  const byTrial = new Map((holdout?.rows ?? []).map((r) => [r.trial, r]))
  const side = (trial: number | null) => {
    const r = trial === null ? undefined : byTrial.get(trial)
    return r ? {tuning_quality: r.tuning.quality, holdout_quality: r.holdout?.quality ?? null, holdout_p99_ms: r.holdout?.p99_ms ?? null} : {}
  }
  const analysis: ObjectiveStudyAnalysis & {holdout?: HoldoutReport} = holdout
    ? {
        ...plain,
        front: plain.front ? {...plain.front, front: plain.front.front.map((p) => ({...p, ...side(p.trialId)}))} : null,
        profiles: plain.profiles.map((p) => ({...p, ...side(p.trialId)})),
        lines: [...plain.lines, ...holdoutLines(holdout), ...(validation ? holdoutValidationLines(validation) : [])],
        holdout,
      }
    : plain
  const files: string[] = []
  if (!out) return {...analysis, files}
  const write = (name: string, data: string | Uint8Array, mode?: number): void => {
    writeFileAtomic(join(out, name), data, mode)
    files.push(join(out, name))
  }
  write('front.json', `${JSON.stringify({engine: spec.name, objectives: spec.objectives, front: snakeKeysOfRecord(analysis.front), ...(holdout ? {holdout_split: holdout.split} : {})}, null, 2)}\n`)
  write('profiles.json', `${JSON.stringify({engine: spec.name, engine_file: spec.file, profiles: snakeKeysOfRecord(analysis.profiles)}, null, 2)}\n`)
  const {makeProfile, notValidated, studySourceRun, writeProfileFiles} = await import('../deploy/profile.js')
  const numbers = (m: Readonly<Record<string, unknown>> | null | undefined): Record<string, number | null> =>
    Object.fromEntries(Object.entries(m ?? {}).filter(([, v]) => typeof v === 'number' || v === null) as Array<[string, number | null]>)
  const deployable = [
    {name: DEFAULTS_PROFILE, config: defaultConfig(spec.space), metrics: {} as Record<string, number | null>, notes: [`the defaults of engine file ${spec.name}`]},
    ...analysis.profiles
      .filter((p) => p.config !== null)
      .map((p) => ({name: p.profile, config: p.config!, metrics: {...numbers(p.metrics), ...(p.trialId === null ? {} : {trial: p.trialId})}, notes: p.rationale})),
  ]
  // without held-out data the study measured these on the data it tuned on: the deploy gate refuses them
  const validationOf = (name: string) => (validation && holdoutProfileValidation(validation, name)) || notValidated(name === DEFAULTS_PROFILE
    ? `engine ${spec.name}: its defaults, the reference the profiles are validated against`
    : `engine ${spec.name}: the study's own measurements, not validated on held-out data (--split)`)
  const run = studySourceRun(study)
  for (const d of deployable) {
    const profile = makeProfile({kind: 'engine', space: spec.space, name: d.name, config: deployableConfig(spec, d.config), metrics: {...d.metrics, ...(validation && d.name !== DEFAULTS_PROFILE ? holdoutMetrics(validation, d.name) : {})}, notes: d.notes, sourceRun: run, engine: {name: spec.name, file: spec.file}, validation: validationOf(d.name)})
    files.push(...writeProfileFiles(out, `profiles/${d.name}`, profile).map((f) => join(out, f)))
  }
  if (analysis.chart) {
    const note = await writeFrontChart(analysis.chart, out, write)
    if (note) analysis.lines.push(note)
  }
  return {...analysis, files}
}
