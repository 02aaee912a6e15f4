/**
 * Study-level outputs of bi-objective searches: the front, the domain profiles and their files,
 * and the per-query-type sweeps bundled into a routed profile. Shared by `kt search` and Phase 4.
 */
import {basename, join} from 'node:path'
import {analyzeStudy, frontTrialRecords, isBiObjective, type StudyAnalysis} from '../eval/retrieval-analysis.js'
import {frontRecord} from '../report/front-chart.js'
import {retrievalFrontSpec} from '../report/study-charts.js'
import {evaluateHoldout, holdoutLines, type HoldoutReport, type HoldoutSide} from '../search/holdout.js'
import {runTypeSweeps, type RoutedProfile} from '../search/routed.js'
import type {OptimizerName} from '../search/optimizers.js'
import {writeFileAtomic} from '../util/fs.js'
import {snakeKeysOfRecord} from '../util/json-keys.js'
import {DEFAULT_TUNING_METRIC} from '../data/conversations/metrics.js'
import {hashString} from '../util/rng.js'
import {runSearch} from './search.js'
import {
  makeProfile,
  notValidated,
  profileJson,
  RUN_ID_PATTERN,
  type Profile,
  type ProfileValidation,
} from '../deploy/profile.js'
import {splitDataset, type SplitSpec} from '../data/conversations/split.js'
import {loadMemoryDataset} from '../data/conversations/index.js'
import {RETRIEVAL_SPACE} from '../engine/retrieval/space.js'
import {defaultConfig} from '../space/space.js'
import {openStorage} from './storage.js'
import {checkStudyName} from './name.js'

import {RETRIEVAL_ROUTER_PARAM} from '../eval/retrieval-profiles.js'

/** Writes the front, profiles and chart of a bi-objective study; undefined for other studies. */
export async function writeStudyAnalysis(
  trials: Parameters<typeof analyzeStudy>[0],
  out: string | undefined,
  holdout?: {readonly side: HoldoutSide; readonly seed: number},
  qualityLabel = DEFAULT_TUNING_METRIC,
): Promise<(StudyAnalysis & {files: string[]; holdout?: HoldoutReport}) | undefined> {
  if (!isBiObjective(trials)) return undefined
  const base = analyzeStudy(trials)
  let analysis: StudyAnalysis & {holdout?: HoldoutReport} = base
  if (holdout) {
    const report = await evaluateHoldout(base, holdout.side, holdout.seed)
    const byTrial = new Map(report.rows.map((r) => [r.trial, r]))
    const side = (trial: number | null) => {
      const r = trial === null ? undefined : byTrial.get(trial)
      return r
        ? {
            tuning_quality: r.tuning.quality,
            holdout_quality: r.holdout?.quality ?? null,
            holdout_p99_ms: r.holdout?.p99_ms ?? null,
            holdout_metrics: r.holdout?.metrics ?? null,
          }
        : {}
    }
    analysis = {
      ...base,
      front: {...base.front, front: base.front.front.map((p) => ({...p, ...side(p.trialId)}))},
      profiles: base.profiles.map((p) => ({...p, ...side(p.trialId)})),
      lines: [...base.lines, ...holdoutLines(report)],
      holdout: report,
    }
  }
  const files: string[] = []
  if (out) {
    const write = (name: string, data: string | Uint8Array): void => {
      writeFileAtomic(join(out, name), data)
      files.push(join(out, name))
    }
    write(
      'front.json',
      `${JSON.stringify(snakeKeysOfRecord(analysis.holdout ? {...analysis.front, holdout_split: analysis.holdout.split} : analysis.front), null, 2)}\n`,
    )
    write('profiles.json', `${JSON.stringify(snakeKeysOfRecord(analysis.profiles), null, 2)}\n`)
    const chart = retrievalFrontSpec({
      metric: qualityLabel,
      front: frontRecord(base),
      trials: frontTrialRecords(trials, base),
    })
    const note = await writeFrontChart(chart, out, write)
    if (note) analysis.lines.push(note)
  }
  return {...analysis, files}
}

/**
 * Writes a front's vega-lite spec and its SVG and PNG renderings as front.{vl.json,svg,png};
 * returns a line saying why the images are missing when rendering failed (the spec is kept).
 */
export async function writeFrontChart(
  spec: unknown,
  out: string,
  write: (name: string, data: string | Uint8Array) => void,
): Promise<string | undefined> {
  write('front.vl.json', `${JSON.stringify(spec)}\n`)
  try {
    const {renderChart, withChartDefaults} = await import('../report/render.js')
    const chart = await renderChart(withChartDefaults(spec as Parameters<typeof withChartDefaults>[0]))
    write('front.svg', chart.svg)
    write('front.png', chart.png)
    return undefined
  } catch (error) {
    return `front chart not rendered (${(error as Error).message.split('\n')[0]}); spec in ${join(out, 'front.vl.json')}`
  }
}

export interface RoutedSweepOptions {
  readonly data: string
  readonly metric?: string
  readonly storage: string
  readonly studyPrefix: string
  readonly optimizer: OptimizerName
  readonly seed: number
  readonly maxTrials?: number
  readonly maxBudget?: number
  readonly workers?: number
  readonly timeoutMs?: number
  readonly out?: string
  readonly log?: (line: string) => void
  /** Tune on one part of the conversations only (the other is for held-out validation). */
  readonly split?: SplitSpec
  /** The held-out validation's non-inferiority margin (default NONINFERIORITY_MARGIN). */
  readonly margin?: number
}

export interface RoutedSweepResult {
  readonly routed: RoutedProfile
  readonly studies: string[]
  readonly missing_types: string[]
  readonly analysis?: StudyAnalysis
  readonly files: string[]
  /** The objectives the sweeps used (dataset loaded and engines built once), for further evaluations. */
  readonly objectiveFor: ReturnType<typeof import('../eval/retrieval-objective.js').retrievalObjectives>['objectiveFor']
}

/**
 * One retrieval study over all queries and one per query type (each resumable by name), the
 * routed profile bundled from them, and the base study's front and domain profiles.
 */
export async function runRoutedSweeps(options: RoutedSweepOptions): Promise<RoutedSweepResult> {
  // every sweep's name is PREFIX-all or PREFIX-<query type>: refuse a prefix that cannot make one before any work
  checkStudyName(`${options.studyPrefix}-all`, '--study')
  const {retrievalObjectives} = await import('../eval/retrieval-objective.js')
  const objectives = retrievalObjectives({data: options.data, metric: options.metric, split: options.split})
  const store = await openStorage(options.storage)
  const studies: string[] = []
  let baseTrials: Parameters<typeof analyzeStudy>[0] = []
  try {
    const routed = await runTypeSweeps({
      types: objectives.types,
      objectiveFor: objectives.objectiveFor,
      studyPrefix: options.studyPrefix,
      seed: options.seed,
      routerParam: RETRIEVAL_ROUTER_PARAM,
      runStudy: async (name, objective) => {
        const outcome = await runSearch({
          storage: options.storage,
          store,
          study: name,
          resume: (await store.getStudy(name)) !== undefined,
          objective: objective.spec,
          objectiveInstance: objective.instance,
          optimizer: options.optimizer,
          // each sweep its own stream: with one seed every type's study would try the same configurations
          seed: (options.seed ^ hashString(name)) >>> 0,
          maxTrials: options.maxTrials,
          maxBudget: options.maxBudget,
          workers: options.workers,
          timeoutMs: options.timeoutMs,
        })
        studies.push(name)
        if (name.endsWith('-all')) baseTrials = outcome.trials
        options.log?.(
          `study ${name}: ${outcome.summary.finished} trials, incumbent ${outcome.best ? `#${outcome.best.id} loss ${outcome.best.loss?.toFixed(4)}` : 'none'}`,
        )
        return outcome.best ? {config: outcome.best.config} : undefined
      },
    })
    for (const t of routed.per_type) options.log?.(`  ${t.type}: ${t.reason}`)
    const analysis = await writeStudyAnalysis(
      baseTrials,
      options.out,
      undefined,
      options.metric ?? DEFAULT_TUNING_METRIC,
    )
    const files = analysis?.files ?? []
    let holdout: Parameters<typeof routedProfile>[5]
    if (options.split) {
      // tuned on part of the conversations: the routed profile and the base study's domain profiles
      // against the defaults on the others (the verdict kt deploy reads)
      const {
        validateOnHoldout,
        DEFAULT_HOLDOUT_SETTINGS,
        holdoutMetrics,
        holdoutProfileValidation,
        holdoutValidationLines,
      } = await import('../eval/holdout-validation.js')
      const {describeSplit} = await import('../data/conversations/split.js')
      const {evalQuality} = await import('../eval/profile.js')
      const loaded = loadMemoryDataset(options.data)
      const m = options.metric ?? DEFAULT_TUNING_METRIC
      const base = {...defaultConfig(RETRIEVAL_SPACE), ...routed.base}
      const v = validateOnHoldout(
        splitDataset(loaded, options.split, 'holdout'),
        [
          {
            name: 'routed',
            trial: null,
            config: base,
            overrides: routed.overrides,
            tuning_quality: await evalQuality(splitDataset(loaded, options.split, 'train'), base, routed.overrides, m),
          },
        ],
        {...DEFAULT_HOLDOUT_SETTINGS, metric: m, margin: options.margin ?? DEFAULT_HOLDOUT_SETTINGS.margin},
        describeSplit(loaded, options.split),
      )
      for (const line of holdoutValidationLines(v)) options.log?.(line)
      holdout = {validation: holdoutProfileValidation(v, 'routed')!, metrics: holdoutMetrics(v, 'routed')}
      if (analysis) {
        const {validateRetrievalStudy} = await import('./retrieval-validation.js')
        const checked = validateRetrievalStudy({
          analysis,
          data: options.data,
          split: options.split,
          metric: options.metric,
          margin: options.margin,
          study: `${options.studyPrefix}-all`,
          out: options.out,
        })
        for (const line of checked.lines) options.log?.(line)
        files.push(...checked.files)
      }
    } else if (analysis && options.out) {
      const {writeRetrievalProfiles} = await import('./retrieval-validation.js')
      files.push(
        ...writeRetrievalProfiles({
          analysis,
          out: options.out,
          study: `${options.studyPrefix}-all`,
          metric: options.metric ?? DEFAULT_TUNING_METRIC,
          data: options.data,
        }),
      )
    }
    if (options.out) {
      // a kt profile (kind routed), read by kt eval --profile, kt deploy and kt online init alike
      const profile = await routedProfile(
        routed,
        options.studyPrefix,
        options.data,
        options.metric,
        options.split,
        holdout,
      )
      writeFileAtomic(join(options.out, 'routed.json'), profileJson(profile))
      files.push(join(options.out, 'routed.json'))
    }
    if (analysis) for (const line of analysis.lines) options.log?.(line)
    return {
      routed,
      studies,
      missing_types: objectives.missingTypes,
      analysis,
      files,
      objectiveFor: objectives.objectiveFor,
    }
  } finally {
    await store.close()
  }
}

/**
 * The routed profile of per-type sweeps as a kt profile (kind routed), with the quality it has on
 * the data the sweeps tuned on (with a split, their tuning conversations). Without `validation`
 * (its held-out check) it is not validated, so `kt deploy` refuses it without --force.
 */
export async function routedProfile(
  routed: RoutedProfile,
  studyPrefix: string,
  data: string,
  metric: string | undefined,
  split?: SplitSpec,
  holdout?: {readonly validation: ProfileValidation; readonly metrics: Record<string, number | null>},
): Promise<Profile> {
  const defaults = defaultConfig(RETRIEVAL_SPACE)
  const base = Object.fromEntries(Object.entries({...defaults, ...routed.base}).filter(([k]) => k in defaults))
  const sourceRun = RUN_ID_PATTERN.test(studyPrefix)
    ? studyPrefix
    : `study-${studyPrefix.replace(/[^A-Za-z0-9._:@+-]/g, '_')}`.slice(0, 128)
  const m = metric ?? 'recall@10'
  const {evalQuality} = await import('../eval/profile.js')
  return makeProfile({
    kind: 'routed',
    space: RETRIEVAL_SPACE,
    name: 'routed',
    config: base,
    overrides: routed.overrides,
    sourceRun,
    routing: {min_gain: routed.min_gain, per_type: routed.per_type.map((t) => ({...t}))},
    // what kt eval --profile gives on the same data (base plus overrides, every scored question)
    metrics: {
      [tuningMetricKey(m, data)]: await evalQuality(
        split ? splitDataset(loadMemoryDataset(data), split, 'train') : data,
        base,
        routed.overrides,
        m,
      ),
      ...holdout?.metrics,
    },
    validation:
      holdout?.validation ??
      notValidated(
        'kt search measured it on the data it tuned on; validate it on held-out data (--split) before deploying',
      ),
  })
}

/** The metric key a retrieval profile records its tuning quality under: `<metric>_on_<data file stem>`. */
export function tuningMetricKey(metric: string, data: string): string {
  return `${metric}_on_${basename(data).replace(/\.[a-z]+$/i, '')}`.replace(/[^A-Za-z0-9_.@:-]/g, '_').slice(0, 64)
}
