import {rmSync} from 'node:fs'
import {join} from 'node:path'
import type {MetricValues} from '../../src/data/conversations/metrics.js'
import {makeProfile, validationFrom, writeProfileFiles, type ProfileValidation} from '../../src/deploy/profile.js'
import type {AblationDelta} from '../../src/eval/ablation.js'
import {compareByCategory} from '../../src/eval/categories.js'
import {compareRows} from '../../src/eval/compare.js'
import {NONINFERIORITY_MARGIN} from '../../src/eval/holdout-validation.js'
import type {EngineComparison, EngineReport, EngineValidation, RetrievalSearchResult} from '../../src/report/types.js'
import {UNSAFE_TEXT} from '../../src/space/names.js'
import {defaultConfig} from '../../src/space/space.js'
import type {Config} from '../../src/space/types.js'
import type {EngineContext} from '../engine-run.js'
import {PROFILES_DIR} from '../6-deploy.js'
import {DEFAULTS_TRIAL} from './retrieval-study.js'

/** The name of the tuned profile a format-2 run writes (and of its minimal profile, with -minimal). */
const TUNED_PROFILE = 'tuned'

type Scores = {rows: MetricValues[]; categories: string[]}

/**
 * The tuned profile: the best full-budget trial on the tuning conversations, the defaults competing
 * (ties: lower P99, then the defaults, then the earlier trial); undefined when the defaults are best.
 */
export function tunedTrial(r: RetrievalSearchResult): EngineReport['tuned'] | undefined {
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

/** The lower bound the acceptance rule needs: the required gain, or minus the non-inferiority margin. */
function acceptanceThreshold(ctx: EngineContext): number {
  const {acceptance} = ctx.loaded.plan
  return acceptance.gain ?? -(acceptance.margin ?? NONINFERIORITY_MARGIN)
}

function acceptanceRule(ctx: EngineContext): string {
  const {metric, acceptance} = ctx.loaded.plan
  const pct = `${Math.round(100 * ctx.settings.confidence)}%`
  return `pass when the lower bound of the ${pct} paired bootstrap interval of ${metric} (profile - ${ctx.inputs.reference.name}) on the held-out questions is >= ${acceptance.gain ?? `-${acceptance.margin ?? NONINFERIORITY_MARGIN}`}`
}

/** The tuned profile against the plan's reference: the comparison the run's verdict (and each seed's) is. */
export async function checkTuned(ctx: EngineContext, tuned: Config): Promise<EngineComparison> {
  return engineComparison(ctx, TUNED_PROFILE, await ctx.score(ctx.inputs.reference.config), await ctx.score(tuned))
}

/** Phase 5: the tuned and the minimal profile against the plan's reference, overall and per category; the tuned one's verdict is the run's. */
export async function validateEngine(ctx: EngineContext, tuned: Config, minimal: Config): Promise<EngineValidation> {
  const tunedCheck = await checkTuned(ctx, tuned)
  const reference = await ctx.score(ctx.inputs.reference.config)
  return {
    split: ctx.inputs.questions!.splitText,
    metric: ctx.loaded.plan.metric,
    confidence: ctx.settings.confidence,
    resamples: ctx.settings.resamples,
    rule: acceptanceRule(ctx),
    tuned: tunedCheck,
    minimal: engineComparison(ctx, `${TUNED_PROFILE}-minimal`, reference, await ctx.score(minimal)),
    verdict: tunedCheck.passed ? 'pass' : 'fail',
  }
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
function engineComparison(ctx: EngineContext, name: string, ref: Scores, own: Scores): EngineComparison {
  const {settings} = ctx
  const options = {seed: settings.seed, confidence: settings.confidence, resamples: settings.resamples}
  const a = {name: ctx.inputs.reference.name, rows: ref.rows}
  const b = {name, rows: own.rows}
  const overall = compareRows(a, b, [settings.metric], options).differences[0]
  return {
    name,
    against: a.name,
    queries: ref.rows.length,
    reference_quality: overall.a,
    delta: toDelta(overall),
    categories: compareByCategory(a, b, ref.categories, [settings.metric], options).map((d) => ({
      category: d.category,
      queries: d.queries,
      reference_quality: d.a,
      delta: toDelta(d),
    })),
    passed: overall.low !== null && overall.low >= acceptanceThreshold(ctx),
  }
}

/** Phase 6: the tuned and the minimal profile, each with its held-out check as its validation record, through the profile checks every profile passes. */
export function writeEngineProfiles(
  ctx: EngineContext,
  tuned: NonNullable<EngineReport['tuned']>,
  minimal: Config,
  v: EngineValidation,
): NonNullable<EngineReport['deploy']> {
  const {outDir, inputs} = ctx
  const {engine} = inputs
  rmSync(join(outDir, PROFILES_DIR), {recursive: true, force: true})
  const key = (suffix: string) => `${v.metric}_${suffix}`.replace(/[^A-Za-z0-9_.@:-]/g, '_').slice(0, 64)
  const validationOf = (c: EngineComparison): ProfileValidation =>
    validationFrom(
      [
        {
          id: 'holdout-acceptance',
          description: `${v.rule} (${c.queries} questions)`.slice(0, 2000),
          metric: key('delta_ci_low'),
          op: '>=',
          threshold: acceptanceThreshold(ctx),
          value: c.delta.low,
          passed: c.passed,
          dataset: 'holdout',
          confidence: v.confidence,
        },
      ],
      ['holdout'],
      `held-out conversations: ${v.split}`.replace(new RegExp(UNSAFE_TEXT.source, 'gu'), ' ').slice(0, 2000),
    )
  const engineRef = engine.profileRef(join(outDir, PROFILES_DIR))
  const tunedNote =
    tuned.profile === undefined
      ? `trial ${tuned.trial}: the best on the tuning conversations`
      : `the plan's ablated profile ${tuned.profile}`
  const minimalNote =
    "the smallest set of the tuned profile's changes non-inferior to it on the held-out questions (phase 3)"
  const profiles = [
    {check: v.tuned, config: tuned.config, notes: [tunedNote]},
    {check: v.minimal, config: minimal, notes: [minimalNote]},
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
      sourceRun: ctx.runId,
      notes,
      validation: validationOf(check),
      ...(engineRef ? {engine: engineRef} : {}),
    })
    const files = writeProfileFiles(outDir, `${PROFILES_DIR}/${check.name}`, profile)
    return {name: check.name, files, verdict: profile.validation.verdict}
  })
  return {profiles}
}
