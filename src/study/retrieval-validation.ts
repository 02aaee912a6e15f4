/**
 * `kt search --objective retrieval --split`: the study's domain profiles validated against the
 * engine's defaults on the held-out conversations (src/eval/holdout-validation.ts, the test Phase 6
 * of `kt run` uses), and, with --out, each written as a deployable kt profile
 * (`profiles/<name>.json`, `.env`, `.sh`) carrying its verdict, which `kt deploy` reads.
 */
import {join} from 'node:path'
import {loadMemoryDataset} from '../data/conversations/index.js'
import {makeProfile, notValidated, studySourceRun, writeProfileFiles} from '../deploy/profile.js'
import {tuningMetricKey} from './sweeps.js'
import {RETRIEVAL_SPACE} from '../engine/retrieval/space.js'
import {
  DEFAULT_HOLDOUT_SETTINGS,
  holdoutMetrics,
  holdoutProfileValidation,
  holdoutValidationLines,
  validateOnHoldout,
  type HoldoutValidation,
} from '../eval/holdout-validation.js'
import {describeSplit, splitDataset, type SplitSpec} from '../data/conversations/split.js'
import {DEFAULT_TUNING_METRIC} from '../data/conversations/metrics.js'
import type {StudyAnalysis} from '../eval/retrieval-analysis.js'
import {defaultConfig} from '../space/index.js'

export interface RetrievalStudyValidation {
  readonly validation: HoldoutValidation
  readonly lines: string[]
  readonly files: string[]
}

/**
 * Validates the domain profiles of a retrieval study tuned on the `train` part of `data` under
 * `split`, and writes them as kt profiles to `out/profiles/` when `out` is given.
 */
export function validateRetrievalStudy(options: {
  readonly analysis: StudyAnalysis
  readonly data: string
  readonly split: SplitSpec
  readonly metric?: string
  readonly margin?: number
  readonly study: string
  readonly out?: string
}): RetrievalStudyValidation {
  const metric = options.metric ?? DEFAULT_TUNING_METRIC
  const loaded = loadMemoryDataset(options.data)
  const chosen = options.analysis.profiles.filter((p) => p.config !== null)
  const validation = validateOnHoldout(
    splitDataset(loaded, options.split, 'holdout'),
    chosen.map((p) => ({
      name: p.profile,
      trial: p.trialId,
      config: p.config!,
      tuning_quality: p.metrics?.quality ?? null,
    })),
    {...DEFAULT_HOLDOUT_SETTINGS, metric, margin: options.margin ?? DEFAULT_HOLDOUT_SETTINGS.margin},
    describeSplit(loaded, options.split),
  )
  const files = options.out
    ? writeRetrievalProfiles({analysis: options.analysis, out: options.out, study: options.study, metric, validation})
    : []
  const lines = [
    ...holdoutValidationLines(validation),
    ...(files.length
      ? [
          `wrote ${files.length / 3} profiles to ${join(options.out!, 'profiles')} (kt deploy refuses those whose verdict is fail)`,
        ]
      : []),
  ]
  return {validation, lines, files}
}

/**
 * Writes a retrieval study's domain profiles as deployable kt profiles (`profiles/<name>.json`,
 * `.env`, `.sh`) to `out`: with their held-out verdict when validated, else not validated (the
 * study measured them on the data it tuned on; kt deploy refuses them without --force).
 */
export function writeRetrievalProfiles(options: {
  readonly analysis: StudyAnalysis
  readonly out: string
  readonly study: string
  readonly metric: string
  /** The held-out validation; without it, the tuning quality is recorded under tuningMetricKey(metric, data). */
  readonly validation?: HoldoutValidation
  /** The tuning data (its file stem names the tuning quality key of profiles without validation). */
  readonly data?: string
}): string[] {
  const {validation, metric} = options
  const defaults = defaultConfig(RETRIEVAL_SPACE)
  const qualityKey = validation ? `${metric}_tuning` : tuningMetricKey(metric, options.data ?? 'data')
  const files: string[] = []
  for (const p of options.analysis.profiles.filter((x) => x.config !== null)) {
    const profile = makeProfile({
      kind: 'retrieval',
      space: RETRIEVAL_SPACE,
      name: p.profile,
      description: p.description,
      notes: p.rationale,
      sourceRun: studySourceRun(options.study),
      config: Object.fromEntries(Object.entries({...defaults, ...p.config}).filter(([k]) => k in defaults)),
      metrics: {
        trial: p.trialId,
        [qualityKey]: p.metrics?.quality ?? null,
        p99_ms: p.metrics?.p99_ms ?? null,
        ...(validation ? holdoutMetrics(validation, p.profile) : {}),
      },
      validation: validation
        ? holdoutProfileValidation(validation, p.profile)!
        : notValidated(
            'kt search measured it on the data it tuned on; validate it on held-out data (--split) before deploying',
          ),
    })
    files.push(...writeProfileFiles(options.out, `profiles/${p.profile}`, profile).map((f) => join(options.out, f)))
  }
  return files
}
