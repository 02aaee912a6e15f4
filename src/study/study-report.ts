/**
 * The report.json (and report.md) of a `kt search --out` folder: the study's record, its front
 * over the objectives it was tuned on, its profiles and held-out checks, in the report schema
 * `kt report OUT --format md|html` renders. No absolute path: the data by its file name, the
 * engine file relative to the folder.
 */
import {basename, join, relative, resolve, sep} from 'node:path'
import type {EngineSpec} from '../adapters/file.js'
import type {HoldoutValidation} from '../eval/holdout-validation.js'
import type {FrontReport, ObjectiveFrontReport} from '../search/front.js'
import type {HoldoutReport} from '../search/holdout.js'
import type {ProfileChoice} from '../search/profiles.js'
import {writeReportFiles} from '../report/load.js'
import {REPORT_SCHEMA, REPORT_VERSION, type Report, type StudyReportSection} from '../report/types.js'
import {KT_VERSION} from '../util/paths.js'
import {incumbent} from '../search/incumbent.js'
import type {StudyRecord, TrialRow} from './model.js'

/** What the pipeline found, as the report shows it. */
export interface StudyFindings {
  readonly engine?: EngineSpec
  /** An engine file's front (its own objectives), or kt's retrieval front (quality vs P99). */
  readonly front: ObjectiveFrontReport | {readonly retrieval: FrontReport; readonly quality: string} | null
  readonly profiles: readonly ProfileChoice[]
  readonly holdout?: HoldoutReport
  readonly validation?: HoldoutValidation
}

function frontSection(front: StudyFindings['front']): StudyReportSection['front'] {
  if (!front) return null
  if ('retrieval' in front) {
    const f = front.retrieval
    return {
      objectives: [
        {metric: front.quality, direction: 'maximize', reference: f.reference.quality, rule: f.reference.rule},
        {metric: 'p99_ms', direction: 'minimize', reference: f.reference.latencyMs, rule: f.reference.rule},
      ],
      points: f.front.map((p) => ({trial: p.trialId, values: [p.quality, p.latencyMs]})),
      dominated: f.dominated.length,
      hypervolume: f.hypervolume,
      hypervolume_share: f.hypervolumeShare,
    }
  }
  return {
    objectives: front.objectives.map((o, j) => ({
      metric: o.metric,
      direction: o.direction,
      reference: front.reference?.[j] ?? null,
      rule: o.reference_rule,
    })),
    points: front.front.map((p) => ({trial: p.trialId, values: [...p.values]})),
    dominated: front.dominated.length,
    hypervolume: front.hypervolume,
    hypervolume_share: front.hypervolumeShare,
  }
}

/** The report of a finished study (timing: the trials' summed durations). */
function studyReport(
  study: Pick<StudyRecord, 'name' | 'objective' | 'optimizer' | 'seed'>,
  trials: readonly TrialRow[],
  findings: StudyFindings,
  out: string,
): Report {
  const spec = study.objective as {name: string; options?: Record<string, unknown>}
  const best = incumbent(trials)
  const engine = findings.engine
  const section: StudyReportSection = {
    name: study.name,
    objective: spec.name,
    ...(engine
      ? {
          engine: {
            name: engine.name,
            file: relative(resolve(out), resolve(engine.file)).split(sep).join('/'),
            latency: (engine.evaluate as {latency?: 'measured' | 'cost_model'}).latency ?? null,
          },
        }
      : {}),
    ...(typeof spec.options?.data === 'string' ? {data: basename(spec.options.data)} : {}),
    optimizer: study.optimizer,
    seed: study.seed,
    trials: {
      finished: trials.filter((t) => t.status === 'ok' || t.status === 'failed').length,
      ok: trials.filter((t) => t.status === 'ok').length,
      failed: trials.filter((t) => t.status === 'failed').length,
    },
    best: best
      ? {
          trial: best.id,
          loss: best.loss,
          budget: best.budget,
          config: best.config as Record<string, number | string | boolean>,
        }
      : null,
    front: frontSection(findings.front),
    profiles: findings.profiles.map((p) => ({
      name: p.profile,
      description: p.description,
      trial: p.trialId,
      rationale: [...p.rationale],
    })),
    ...(findings.holdout ? {holdout: findings.holdout} : {}),
    ...(findings.validation ? {validation: findings.validation} : {}),
  }
  const measured = engine && (engine.evaluate as {latency?: string}).latency !== 'cost_model'
  return {
    schema: REPORT_SCHEMA,
    version: REPORT_VERSION,
    run: {
      id: study.name,
      seed: study.seed,
      plan: {name: study.name, file: '-', sha256_12: '-'},
      phases_requested: [],
      phases_run: [],
      kt_version: KT_VERSION,
      reproducible: !measured,
      reproducible_reason: measured ? `engine ${engine.name}'s latency is wall time measured on the clock` : null,
    },
    phases: {},
    study: section,
    timing: {total_ms: Math.round(trials.reduce((s, t) => s + (t.durationMs ?? 0), 0)), phases_ms: {}},
  }
}

/** Writes the study's report.json and report.md to `out`; returns their paths. */
export function writeStudyReport(
  study: Pick<StudyRecord, 'name' | 'objective' | 'optimizer' | 'seed'>,
  trials: readonly TrialRow[],
  findings: StudyFindings,
  out: string,
): string[] {
  writeReportFiles(out, studyReport(study, trials, findings, out))
  return [join(out, 'report.json'), join(out, 'report.md')]
}
