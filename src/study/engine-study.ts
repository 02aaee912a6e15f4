/**
 * What a study of an engine file yields beyond its trials: the Pareto front over the file's
 * objectives with its hypervolume, the file's own domain profiles (its `profiles` rules), and each
 * chosen profile as deployable files in the engine's own variable names (`profiles/<name>.json`,
 * `.env`, `.sh`), plus the engine's defaults as the `defaults` profile to roll back to.
 */
import {join} from 'node:path'
import {analyzeObjectiveStudy, type ObjectiveStudyAnalysis} from '../search/analysis.js'
import type {EngineSpec} from '../adapters/file.js'
import {activeConfig, configKeys, defaultConfig, type Config} from '../space/index.js'
import {writeFileAtomic} from '../util/fs.js'
import {holdoutLines, type HoldoutReport} from '../search/holdout.js'
import {
  holdoutMetrics,
  holdoutProfileValidation,
  holdoutValidationLines,
  type HoldoutValidation,
} from '../eval/holdout-validation.js'
import type {TrialRow} from './model.js'
import {writeFrontChart} from './sweeps.js'
import {objectiveFrontChart} from '../report/front-chart.js'
import {DEFAULTS_PROFILE} from '../deploy/load.js'
import {engineRefFor} from '../deploy/spaces.js'
import {snakeKeysOfRecord} from '../util/json-keys.js'
import {KEY_PATTERN, commentText, makeProfile, notValidated, profileFiles, studySourceRun} from '../deploy/profile.js'

/** Dropped metric keys named in the warning (the rest are counted). */
const MAX_DROPPED_LISTED = 5

export interface EngineStudyOutputs extends ObjectiveStudyAnalysis {
  readonly files: string[]
  /** What the command says once on stderr (metric keys left out of the profiles). */
  readonly warnings: string[]
}

/** A configuration as deployed: inactive conditional parameters at their default, nothing outside the space. */
function deployableConfig(spec: EngineSpec, config: Config): Config {
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
    return r
      ? {
          tuning_quality: r.tuning.quality,
          holdout_quality: r.holdout?.quality ?? null,
          holdout_p99_ms: r.holdout?.p99_ms ?? null,
        }
      : {}
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
  // metric keys a profile cannot hold (the engine printed e.g. "my metric"): left out of the
  // profiles, the same way every time, and said once; the study store keeps them as printed
  const dropped = new Set<string>()
  const numbers = (m: Readonly<Record<string, unknown>> | null | undefined): Record<string, number | null> => {
    const kept: Record<string, number | null> = {}
    for (const [k, v] of Object.entries(m ?? {})) {
      if (typeof v !== 'number' && v !== null) continue
      if (KEY_PATTERN.test(k)) kept[k] = v
      else dropped.add(k)
    }
    return kept
  }
  const deployable = [
    {
      name: DEFAULTS_PROFILE,
      config: defaultConfig(spec.space),
      metrics: {} as Record<string, number | null>,
      notes: [`the defaults of engine file ${spec.name}`],
    },
    ...analysis.profiles
      .filter((p) => p.config !== null)
      .map((p) => ({
        name: p.profile,
        config: p.config!,
        metrics: {...numbers(p.metrics), ...(p.trialId === null ? {} : {trial: p.trialId})},
        notes: p.rationale,
      })),
  ]
  const warnings: string[] = []
  if (dropped.size > 0) {
    const listed = [...dropped]
      .sort()
      .slice(0, MAX_DROPPED_LISTED)
      .map((k) => JSON.stringify(commentText(k.length > 40 ? `${k.slice(0, 37)}...` : k)))
    warnings.push(
      `metrics ${listed.join(', ')}${dropped.size > MAX_DROPPED_LISTED ? ` and ${dropped.size - MAX_DROPPED_LISTED} more` : ''} printed by engine ${spec.name} are left out of its profiles (a profile's metric keys are letters, digits and _ . @ : -, at most 64)`,
    )
  }
  if (!out) return {...analysis, files, warnings}
  // everything is built and checked first, then written: a refusal leaves --out as it was
  const pending: Array<{path: string; text: string | Uint8Array; mode?: number}> = []
  const write = (name: string, data: string | Uint8Array, mode?: number): void => {
    pending.push({path: name, text: data, mode})
  }
  write(
    'front.json',
    `${JSON.stringify({engine: spec.name, objectives: spec.objectives, front: snakeKeysOfRecord(analysis.front), ...(holdout ? {holdout_split: holdout.split} : {})}, null, 2)}\n`,
  )
  write(
    'profiles.json',
    `${JSON.stringify({engine: spec.name, engine_file: engineRefFor(spec, out).file, profiles: snakeKeysOfRecord(analysis.profiles)}, null, 2)}\n`,
  )
  // without held-out data the study measured these on the data it tuned on: the deploy gate refuses them
  const validationOf = (name: string) =>
    (validation && holdoutProfileValidation(validation, name)) ||
    notValidated(
      name === DEFAULTS_PROFILE
        ? `engine ${spec.name}: its defaults, the reference the profiles are validated against`
        : `engine ${spec.name}: the study's own measurements, not validated on held-out data (--split)`,
    )
  const run = studySourceRun(study)
  for (const d of deployable) {
    const notes = d.name !== DEFAULTS_PROFILE && dropped.size > 0 ? [...d.notes, warnings[0]] : d.notes
    const profile = makeProfile({
      kind: 'engine',
      space: spec.space,
      name: d.name,
      config: deployableConfig(spec, d.config),
      metrics: {...d.metrics, ...(validation && d.name !== DEFAULTS_PROFILE ? holdoutMetrics(validation, d.name) : {})},
      notes,
      sourceRun: run,
      engine: engineRefFor(spec, join(out, 'profiles')),
      validation: validationOf(d.name),
    })
    for (const f of profileFiles(`profiles/${d.name}`, profile)) write(f.path, f.text, f.mode)
  }
  if (analysis.front) {
    const note = await writeFrontChart(objectiveFrontChart(analysis.front), out, write)
    if (note) analysis.lines.push(note)
  }
  for (const f of pending) {
    writeFileAtomic(join(out, f.path), f.text, f.mode)
    files.push(join(out, f.path))
  }
  return {...analysis, files, warnings}
}
