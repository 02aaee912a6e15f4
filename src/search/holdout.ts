/**
 * Tuning quality next to held-out quality: after a study tuned on one part of the data, every
 * front point and every chosen profile is evaluated once more, at the full budget, on the
 * held-out part (an objective of the same kind over the held-out conversations). A configuration
 * whose held-out quality falls far below its tuning quality was fitted to the tuning questions.
 */
import type {Config} from '../space/index.js'
import type {FrontReport} from './front.js'
import type {ProfileChoice} from './profiles.js'
import {splitTimingMetrics, type Objective} from './types.js'

/** The held-out side: an objective over the held-out data and what the split was. */
export interface HoldoutSide {
  readonly objective: Objective
  /** One line: which conversations were tuned on and which were held out. */
  readonly description: string
  /** The engine's defaults (trial -1) with their tuning metrics, scored on the held-out side too: what a profile replaces. */
  readonly defaults?: {readonly config: Config; readonly metrics: Readonly<Record<string, number>> | null}
}

/** One configuration, scored on both parts. */
interface HoldoutRow {
  readonly trial: number
  /** Where it appears: front, and/or profile names. */
  readonly roles: string[]
  readonly tuning: {readonly quality: number; readonly p99_ms: number}
  readonly holdout: {readonly quality: number; readonly p99_ms: number; readonly metrics: Record<string, number>} | null
  /** Holdout minus tuning quality (absolute). */
  readonly gap: number | null
  readonly error?: string
}

export interface HoldoutReport {
  readonly split: string
  readonly rows: HoldoutRow[]
}

/** A configuration to score on the held-out side, with where it came from and its tuning metrics. */
export interface HoldoutItem {
  readonly trial: number
  readonly config: Config
  readonly role: string
  readonly metrics: Readonly<Record<string, number>> | null | undefined
}

/** The configurations a study's held-out check scores: every front point and every chosen profile's trial. */
export function frontAndProfileItems(
  front: readonly {readonly trialId: number; readonly config: Config}[],
  profiles: readonly {readonly profile: string; readonly trialId: number | null; readonly config?: Config | null}[],
  metricsOf: (trial: number) => HoldoutItem['metrics'],
): HoldoutItem[] {
  return [
    ...front.map((p) => ({trial: p.trialId, config: p.config, role: 'front', metrics: metricsOf(p.trialId)})),
    ...profiles.flatMap((p) =>
      p.trialId !== null && p.config
        ? [{trial: p.trialId, config: p.config, role: `profile ${p.profile}`, metrics: metricsOf(p.trialId)}]
        : [],
    ),
  ]
}

/**
 * Evaluates configurations on the held-out objective at its largest budget (each trial once), in
 * trial order so the result does not depend on the front's order. `names` are the quality and
 * latency metrics read on both sides.
 */
export async function evaluateHoldoutItems(
  items: readonly HoldoutItem[],
  side: HoldoutSide,
  seed: number,
  names = {quality: 'quality', latency: 'p99_ms'},
): Promise<HoldoutReport> {
  const wanted = new Map<number, {config: Config; roles: string[]; quality: number; p99: number}>()
  for (const it of items) {
    const row = wanted.get(it.trial) ?? {
      config: it.config,
      roles: [],
      quality: it.metrics?.[names.quality] ?? NaN,
      p99: it.metrics?.[names.latency] ?? NaN,
    }
    if (!row.roles.includes(it.role)) row.roles.push(it.role)
    wanted.set(it.trial, row)
  }
  const budget = side.objective.fidelity?.max ?? 1
  const rows: HoldoutRow[] = []
  for (const [trial, w] of [...wanted.entries()].sort((a, b) => a[0] - b[0])) {
    const tuning = {quality: w.quality, p99_ms: w.p99}
    try {
      const r = await side.objective.evaluate(w.config, budget, {trialId: trial, configId: `holdout-${trial}`, seed})
      const all = r.metrics ?? {}
      const metrics = splitTimingMetrics(all).deterministic
      const quality = metrics[names.quality] ?? -r.loss
      // a measured latency (an external engine's) is a timing but still the held-out latency
      const p99 = all[names.latency] ?? NaN
      rows.push({trial, roles: w.roles, tuning, holdout: {quality, p99_ms: p99, metrics}, gap: quality - w.quality})
    } catch (error) {
      rows.push({
        trial,
        roles: w.roles,
        tuning,
        holdout: null,
        gap: null,
        error: (error as Error).message.split('\n')[0],
      })
    }
  }
  return {split: side.description, rows}
}

/** The front's and the profiles' configurations of a kt retrieval study (src/eval/retrieval-analysis.ts StudyAnalysis) on the held-out side. */
export async function evaluateHoldout(
  analysis: {readonly front: FrontReport; readonly profiles: readonly ProfileChoice[]},
  side: HoldoutSide,
  seed: number,
  names = {quality: 'quality', latency: 'p99_ms'},
): Promise<HoldoutReport> {
  const items: HoldoutItem[] = [
    ...analysis.front.front.map((p) => ({
      trial: p.trialId,
      config: p.config,
      role: 'front',
      metrics: p.metrics ?? {[names.quality]: p.quality, [names.latency]: p.latencyMs},
    })),
    ...analysis.profiles
      .filter((p) => p.trialId !== null && p.config)
      .map((p) => ({trial: p.trialId!, config: p.config!, role: `profile ${p.profile}`, metrics: p.metrics})),
    ...(side.defaults
      ? [{trial: DEFAULTS_TRIAL_ID, config: side.defaults.config, role: 'defaults', metrics: side.defaults.metrics}]
      : []),
  ]
  return evaluateHoldoutItems(items, side, seed, names)
}

/** The trial id the engine's defaults carry in held-out tables (no real trial has it). */
export const DEFAULTS_TRIAL_ID = -1

/** Lines for the console: tuning and held-out quality side by side. */
export function holdoutLines(report: HoldoutReport): string[] {
  const lines = [
    `held-out data: ${report.split}`,
    '  trial   tuning quality   held-out quality   gap      p99 (held-out)   where',
  ]
  for (const r of report.rows) {
    const h = r.holdout
    lines.push(
      `  ${(r.trial === DEFAULTS_TRIAL_ID ? 'dflt' : `#${r.trial}`).padEnd(7)} ${r.tuning.quality.toFixed(4).padEnd(16)} ${h ? h.quality.toFixed(4).padEnd(18) : 'failed'.padEnd(18)} ${r.gap === null ? '-'.padEnd(8) : `${r.gap >= 0 ? '+' : ''}${r.gap.toFixed(4)}`.padEnd(8)} ${h ? `${h.p99_ms.toFixed(3)} ms`.padEnd(16) : '-'.padEnd(16)} ${r.roles.join(', ')}${r.error ? ` (${r.error})` : ''}`,
    )
  }
  return lines
}
