/**
 * The front and profiles a study page shows, computed as the CLI computes them: an engine file's
 * study through the engine's own objectives and profile rules (analyzeObjectiveStudy, the same
 * front, reference point and hypervolume `kt search` prints), kt's retrieval studies through the
 * retrieval analysis and its domain profiles. The latency kind is the one the study really used.
 */
import {analyzeStudy} from '../eval/retrieval-analysis.js'
import type {EngineSpec} from '../adapters/file.js'
import {analyzeObjectiveStudy} from '../search/analysis.js'
import type {ProfileChoice} from '../search/profiles.js'
import type {StudyRecord, TrialRow} from '../study/model.js'
import {studyEngine} from '../study/pipeline.js'
import type {StudyView, ValueDefinition} from './views.js'
import {latencyKindOf} from '../report/front-chart.js'

/** Engine files by study name and stored file: read once (a file gone or changed shows no engine front). */
const engines = new Map<string, EngineSpec | null>()

export function studyEngineOrNull(study: StudyRecord): EngineSpec | null {
  const spec = study.objective as {name?: string; options?: {file?: unknown; fingerprint?: unknown}}
  if (spec.name !== 'engine') return null
  const key = `${study.name}\n${String(spec.options?.file)}\n${JSON.stringify(spec.options?.fingerprint ?? null)}`
  if (!engines.has(key)) {
    let found: EngineSpec | null
    try {
      found = studyEngine(study) ?? null
    } catch {
      found = null
    }
    engines.set(key, found)
  }
  return engines.get(key)!
}

function profilesOf(profiles: readonly ProfileChoice[]): StudyView['profiles'] {
  return profiles.map((p) => ({
    name: p.profile,
    description: p.description,
    trial: p.trialId,
    on_front: p.onFront,
    rationale: p.rationale,
  }))
}

/** An engine file's study: its own objectives (the first two make the chart), rules and latency kind. */
export function engineFront(
  spec: EngineSpec,
  trials: readonly TrialRow[],
): {front: StudyView['front']; profiles: StudyView['profiles']} {
  const a = analyzeObjectiveStudy(trials, spec.objectives, spec.profiles)
  const f = a.front
  if (!f || !f.reference || f.objectives.length !== 2) return {front: null, profiles: profilesOf(a.profiles)}
  return {
    front: {
      quality: f.objectives[0].metric,
      quality_metric: f.objectives[0].metric,
      latency: f.objectives[1].metric,
      directions: {quality: f.objectives[0].direction, latency: f.objectives[1].direction},
      latency_kind: latencyKindOf(spec.evaluate),
      reference: {
        quality: f.reference[0],
        p99_ms: f.reference[1],
        rule: f.objectives.map((o) => `${o.metric}: ${o.reference_rule}`).join('; '),
      },
      points: f.front.map((p) => p.trialId),
      dominated: f.dominated.map((p) => p.trialId),
      hypervolume: f.hypervolume ?? 0,
      hypervolume_share: f.hypervolumeShare ?? 0,
    },
    profiles: profilesOf(a.profiles),
  }
}

/** kt's retrieval studies: quality against the cost model's P99, and the retrieval domain profiles. */
export function retrievalFront(
  trials: readonly TrialRow[],
  def: ValueDefinition,
): {front: StudyView['front']; profiles: StudyView['profiles']} {
  const a = analyzeStudy(trials)
  return {
    front: {
      quality: def.source === 'metric:quality' ? def.name : 'quality',
      quality_metric: 'quality',
      latency: 'p99_ms',
      directions: {quality: 'maximize', latency: 'minimize'},
      // kt's retrieval objective states no evaluation: its p99_ms is kt's cost model (src/engine/retrieval/cost.ts)
      latency_kind: latencyKindOf(undefined),
      reference: {
        quality: a.front.reference.quality,
        p99_ms: a.front.reference.latencyMs,
        rule: a.front.reference.rule,
      },
      points: a.front.front.map((p) => p.trialId),
      dominated: a.front.dominated.map((p) => p.trialId),
      hypervolume: a.front.hypervolume,
      hypervolume_share: a.front.hypervolumeShare,
    },
    profiles: profilesOf(a.profiles),
  }
}
