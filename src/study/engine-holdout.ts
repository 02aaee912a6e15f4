/**
 * The held-out step of a retrieval-service engine study tuned on one part of its conversations:
 * the front's and profiles' configurations (and the defaults, trial -1) scored on the held-out
 * part, then each profile against the defaults there, question by question (the non-inferiority
 * verdict kt deploy reads). The per-question rows are kept, so an ablation or a per-category
 * check pairs its own configurations with the same questions (heldOutScorer).
 */
import type {EngineSpec} from '../adapters/file.js'
import {createEngineObjective} from '../adapters/objective.js'
import {serviceSpecOf} from '../adapters/retrieval-service.js'
import {describeSplit, splitDataset, type SplitSpec} from '../data/conversations/split.js'
import {loadMemoryDataset} from '../data/conversations/index.js'
import {selectScoredQueries} from '../data/conversations/queries.js'
import type {MetricValues} from '../data/conversations/metrics.js'
import type {MemoryDataset} from '../data/conversations/types.js'
import {evaluateService} from '../eval/service-eval.js'
import {
  noninferiorityValidation,
  type HoldoutValidation,
  type HoldoutValidationSettings,
} from '../eval/holdout-validation.js'
import {DEFAULTS_TRIAL_ID, evaluateHoldoutItems, type HoldoutItem, type HoldoutReport} from '../search/holdout.js'
import {defaultConfig, type Config} from '../space/index.js'

/** The held-out questions in scoring order, and each scored configuration's per-question metrics. */
export interface HeldOutQuestions {
  readonly ids: readonly string[]
  /** Each question's category (LoCoMo's), in the same order. */
  readonly categories: readonly string[]
  readonly defaults: readonly MetricValues[]
  /** Per validated profile (by its name in the validation): rows in the defaults' order. */
  readonly profiles: Readonly<Record<string, readonly MetricValues[]>>
}

/** Scores any configuration of an engine on the held-out questions (one pass, the defaults filling the rest). */
interface HeldOutScorer {
  readonly heldOut: MemoryDataset
  readonly description: string
  readonly questions: ReadonlyArray<{readonly id: string; readonly category: string}>
  rows(config: Config): Promise<MetricValues[]>
}

/** The held-out side of a retrieval-service engine study, from its stored objective options (data, split). */
function heldOutScorer(spec: EngineSpec, data: string, split: SplitSpec): HeldOutScorer {
  const loaded = loadMemoryDataset(data)
  const heldOut = splitDataset(loaded, split, 'holdout')
  const service = serviceSpecOf(spec)
  return {
    heldOut,
    description: describeSplit(loaded, split),
    questions: selectScoredQueries(heldOut).queries.map((q) => ({id: q.id, category: String(q.category)})),
    // latency is not what is tested here: one pass over the questions
    rows: async (config) =>
      (await evaluateService(service, heldOut, {...defaultConfig(spec.space), ...config}, {minTimings: 1})).rows,
  }
}

export interface EngineHoldoutInput {
  readonly spec: EngineSpec
  /** The study's stored objective options: file, data, split. */
  readonly options: Readonly<Record<string, unknown>>
  readonly seed: number
  /** Front points and profiles to score on the held-out side (HoldoutItem; the defaults are added). */
  readonly items: readonly HoldoutItem[]
  /** The defaults' tuning metrics, when the study measured them (trial -1). */
  readonly defaultsMetrics?: Readonly<Record<string, number>> | null
  /** The profiles to validate, by the name their verdict carries. */
  readonly profiles: ReadonlyArray<{
    readonly name: string
    readonly trial: number | null
    readonly config: Config
    readonly tuning_quality: number | null
  }>
  readonly settings: HoldoutValidationSettings
  /** The quality metric read on both sides (default the engine's service metric, else quality). */
  readonly quality?: string
}

export interface EngineHoldoutResult {
  readonly report: HoldoutReport
  readonly validation: HoldoutValidation
  readonly questions: HeldOutQuestions
}

/** Undefined when the study has no split or the engine is no retrieval service. */
export async function engineHoldout(input: EngineHoldoutInput): Promise<EngineHoldoutResult | undefined> {
  const {spec, options} = input
  const split = options.split as SplitSpec | undefined
  if (!split || spec.evaluate.kind !== 'retrieval-service') return undefined
  const scorer = heldOutScorer(spec, String(options.data), split)
  const quality = input.quality ?? serviceSpecOf(spec).metric ?? 'quality'
  const defaults = defaultConfig(spec.space)
  const items: HoldoutItem[] = [
    ...input.items,
    ...(input.defaultsMetrics !== undefined
      ? [{trial: DEFAULTS_TRIAL_ID, config: defaults, role: 'defaults', metrics: input.defaultsMetrics}]
      : []),
  ]
  const objective = await createEngineObjective({...options, part: 'holdout'})
  let report: HoldoutReport
  try {
    report = await evaluateHoldoutItems(items, {objective, description: scorer.description}, input.seed, {
      quality,
      latency: 'p99_ms',
    })
  } finally {
    await objective.close?.()
  }
  const defaultRows = await scorer.rows({})
  const scored = []
  for (const p of input.profiles)
    scored.push({name: p.name, trial: p.trial, tuning_quality: p.tuning_quality, rows: await scorer.rows(p.config)})
  const validation = noninferiorityValidation(defaultRows, scored, input.settings, scorer.description)
  const questions: HeldOutQuestions = {
    ids: scorer.questions.map((q) => q.id),
    categories: scorer.questions.map((q) => q.category),
    defaults: defaultRows,
    profiles: Object.fromEntries(scored.map((s) => [s.name, s.rows])),
  }
  return {report, validation, questions}
}
