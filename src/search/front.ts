/**
 * Bi-objective results: quality (maximised) against P99 latency (minimised). The Pareto front,
 * its hypervolume against a stated reference point (Zitzler & Thiele 1998; src/stats/pareto.ts),
 * and the dominated trials with the front trials that dominate them (charted by src/report/front-chart.ts).
 */
import type {Config} from '../space/index.js'
import {dominates, hypervolume2d, paretoFront, type Sense} from '../stats/pareto.js'

export interface FrontPoint {
  readonly trialId: number
  readonly quality: number
  readonly latencyMs: number
  readonly config: Config
  readonly metrics?: Readonly<Record<string, number>>
}

export interface ReferencePoint {
  readonly quality: number
  readonly latencyMs: number
}

export interface FrontReport {
  /** The reference point of the hypervolume and how it was chosen. */
  readonly reference: ReferencePoint & {readonly rule: string}
  /** Non-dominated trials, fastest first. */
  readonly front: FrontPoint[]
  /** Every other trial with (up to three) front trials that dominate it. */
  readonly dominated: Array<FrontPoint & {readonly dominatedBy: number[]}>
  /** Area dominated by the front up to the reference point (quality units x ms). */
  readonly hypervolume: number
  /** Hypervolume over the box between the reference and the best values (hypervolumeOf). */
  readonly hypervolumeShare: number
}

/** Front trials listed as dominating a dominated trial. */
const MAX_DOMINATORS_LISTED = 3

const SENSES: readonly [Sense, Sense] = ['max', 'min']

/** The quality/P99 objectives of a retrieval front; a stated reference replaces objectiveReference's rule. */
function qualityLatency(stated: Partial<ReferencePoint>): [FrontObjective, FrontObjective] {
  return [
    {metric: 'quality', direction: 'maximize', ...(stated.quality === undefined ? {} : {reference: stated.quality})},
    {metric: 'p99_ms', direction: 'minimize', ...(stated.latencyMs === undefined ? {} : {reference: stated.latencyMs})},
  ]
}

/**
 * The quality/P99 front of a retrieval study (kt's engine or an engine file's service): the one
 * hypervolume rule of every front (hypervolumeOf), `stated` overriding a reference value.
 */
export function frontReport(points: readonly FrontPoint[], stated: Partial<ReferencePoint> = {}): FrontReport {
  const objectives = [
    {value: (p: FrontPoint) => p.quality, sense: 'max' as const},
    {value: (p: FrontPoint) => p.latencyMs, sense: 'min' as const},
  ]
  const frontIdx = new Set(paretoFront(points, objectives))
  const front = points
    .filter((_, i) => frontIdx.has(i))
    .sort((a, b) => a.latencyMs - b.latencyMs || b.quality - a.quality || a.trialId - b.trialId)
  const vector = (p: FrontPoint): [number, number] => [p.quality, p.latencyMs]
  const dominated = points
    .filter((_, i) => !frontIdx.has(i))
    .map((p) => ({
      ...p,
      dominatedBy: front
        .filter((f) => dominates(vector(f), vector(p), SENSES))
        .slice(0, MAX_DOMINATORS_LISTED)
        .map((f) => f.trialId),
    }))
  const hv = hypervolumeOf(qualityLatency(stated), points.map(vector), front.map(vector))
  return {
    reference: {quality: hv.reference[0], latencyMs: hv.reference[1], rule: hv.rules.join('; ')},
    front,
    dominated,
    hypervolume: hv.hypervolume,
    hypervolumeShare: hv.share ?? 0,
  }
}

/** Text lines: the front, the hypervolume and a count of dominated trials. */
export function frontLines(report: FrontReport, qualityLabel = 'quality'): string[] {
  const lines = [`Pareto front (${report.front.length} trials; ${report.dominated.length} dominated):`]
  for (const p of report.front)
    lines.push(`  #${p.trialId}: ${qualityLabel} ${p.quality.toFixed(4)}, p99 ${p.latencyMs.toFixed(2)} ms`)
  lines.push(
    `hypervolume ${report.hypervolume.toFixed(4)} (${(100 * report.hypervolumeShare).toFixed(1)}% of the box between the reference and the best values; reference ${report.reference.rule})`,
  )
  return lines
}

/** An objective of a study's front: a metric and whether more is better. */
export interface FrontObjective {
  readonly metric: string
  readonly direction: 'maximize' | 'minimize'
  /** The hypervolume's reference value for this metric (default: see objectiveReference). */
  readonly reference?: number
}

/**
 * Default reference of a metric: the worst value any compared trial reached, pushed out by this
 * share of the observed range (by this share of its magnitude, or by ZERO_SPREAD_MARGIN when all
 * trials reached 0), so the extreme front points still add area; every front's rule (hypervolumeOf).
 */
const REFERENCE_RANGE_MARGIN = 0.1
/** The reference margin when every trial reached exactly 0: no range or magnitude to scale by, so one unit of the metric. */
const ZERO_SPREAD_MARGIN = 1

export interface ObjectiveFrontReport {
  readonly objectives: ReadonlyArray<FrontObjective & {readonly reference_rule: string}>
  /** The reference point (one value per objective), when there are exactly two objectives. */
  readonly reference: number[] | null
  /** Non-dominated trials, best first by the first objective. */
  readonly front: Array<{readonly trialId: number; readonly values: number[]; readonly config: Config}>
  readonly dominated: Array<{readonly trialId: number; readonly values: number[]; readonly dominatedBy: number[]}>
  /** Area dominated within the reference box (two objectives only). */
  readonly hypervolume: number | null
  readonly hypervolumeShare: number | null
}

export function objectiveReference(
  objective: FrontObjective,
  values: readonly number[],
): {value: number; rule: string} {
  if (objective.reference !== undefined) return {value: objective.reference, rule: 'stated in the engine file'}
  const worst = objective.direction === 'maximize' ? Math.min(...values) : Math.max(...values)
  const range = Math.max(...values) - Math.min(...values)
  const [margin, what]: [number, string] =
    range > 0
      ? [REFERENCE_RANGE_MARGIN * range, `${REFERENCE_RANGE_MARGIN} x the observed range`]
      : worst !== 0
        ? [
            REFERENCE_RANGE_MARGIN * Math.abs(worst),
            `${REFERENCE_RANGE_MARGIN} x its magnitude (every trial reached the same value: no range)`,
          ]
        : [ZERO_SPREAD_MARGIN, `${ZERO_SPREAD_MARGIN} (every trial reached 0: no range or magnitude to scale by)`]
  const value = Number((objective.direction === 'maximize' ? worst - margin : worst + margin).toPrecision(6))
  return {
    value,
    rule: `the worst trial's ${objective.metric} (${Number(worst.toPrecision(6))}) ${objective.direction === 'maximize' ? 'minus' : 'plus'} ${what}`,
  }
}

/**
 * The Pareto front of candidates over any number of objectives (each maximised or minimised), the
 * dominated trials with up to three dominating front trials, and with two objectives the
 * hypervolume against the reference point.
 */
export function objectiveFront(
  candidates: ReadonlyArray<{trialId: number; config: Config; metrics: Readonly<Record<string, number>>}>,
  objectives: readonly FrontObjective[],
): ObjectiveFrontReport {
  const usable = candidates.filter((c) => objectives.every((o) => Number.isFinite(c.metrics[o.metric])))
  const senses: Sense[] = objectives.map((o) => (o.direction === 'maximize' ? 'max' : 'min'))
  const vec = (c: (typeof usable)[number]): number[] => objectives.map((o) => c.metrics[o.metric])
  const refs = objectives.map((o) =>
    usable.length
      ? objectiveReference(
          o,
          usable.map((c) => c.metrics[o.metric]),
        )
      : {value: Number.NaN, rule: 'no trial'},
  )
  const frontIdx = new Set(
    paretoFront(
      usable,
      objectives.map((o, j) => ({value: (c: (typeof usable)[number]) => vec(c)[j], sense: senses[j]})),
    ),
  )
  const first = senses[0] === 'max' ? -1 : 1
  const front = usable
    .filter((_, i) => frontIdx.has(i))
    .map((c) => ({trialId: c.trialId, values: vec(c), config: c.config}))
    .sort((a, b) => first * (a.values[0] - b.values[0]) || a.trialId - b.trialId)
  const dominated = usable
    .filter((_, i) => !frontIdx.has(i))
    .map((c) => ({
      trialId: c.trialId,
      values: vec(c),
      dominatedBy: front
        .filter((f) => dominates(f.values, vec(c), senses))
        .slice(0, MAX_DOMINATORS_LISTED)
        .map((f) => f.trialId),
    }))
  const hv =
    objectives.length === 2 && usable.length > 0
      ? hypervolumeOf(
          [objectives[0], objectives[1]],
          usable.map(vec),
          front.map((f) => f.values),
        )
      : null
  return {
    objectives: objectives.map((o, j) => ({...o, reference_rule: refs[j].rule})),
    reference: hv ? [...hv.reference] : null,
    front,
    dominated,
    hypervolume: hv?.hypervolume ?? null,
    hypervolumeShare: hv?.share ?? null,
  }
}

/**
 * THE hypervolume of a two-objective front, one rule everywhere (kt's retrieval studies and engine
 * files alike, in the CLI, the report and the dashboard): each objective's reference is stated or
 * objectiveReference's over every compared trial, and the share is over the box between the
 * reference and the best value each objective reached.
 */
function hypervolumeOf(
  objectives: readonly [FrontObjective, FrontObjective],
  values: ReadonlyArray<readonly number[]>,
  front: ReadonlyArray<readonly number[]>,
): {reference: [number, number]; rules: [string, string]; hypervolume: number; share: number | null} {
  if (values.length === 0) return {reference: [0, 0], rules: ['no trial', 'no trial'], hypervolume: 0, share: null}
  const senses = objectives.map((o) => (o.direction === 'maximize' ? 'max' : 'min')) as [Sense, Sense]
  const refs = objectives.map((o, j) =>
    objectiveReference(
      o,
      values.map((v) => v[j]),
    ),
  )
  const reference: [number, number] = [refs[0].value, refs[1].value]
  const hypervolume = hypervolume2d(
    front.map((f) => [f[0], f[1]] as [number, number]),
    reference,
    senses,
  )
  const best = senses.map((s, j) => (s === 'max' ? Math.max : Math.min)(...values.map((v) => v[j])))
  const box = Math.abs(best[0] - reference[0]) * Math.abs(best[1] - reference[1])
  return {reference, rules: [refs[0].rule, refs[1].rule], hypervolume, share: box > 0 ? hypervolume / box : null}
}

export function objectiveFrontLines(report: ObjectiveFrontReport): string[] {
  const names = report.objectives.map((o) => o.metric)
  const lines = [
    `Pareto front over ${names.join(', ')} (${report.front.length} trials; ${report.dominated.length} dominated):`,
  ]
  for (const p of report.front)
    lines.push(`  #${p.trialId}: ${p.values.map((v, j) => `${names[j]} ${Number(v.toPrecision(5))}`).join(', ')}`)
  if (report.hypervolume !== null && report.reference)
    lines.push(
      `hypervolume ${Number(report.hypervolume.toPrecision(5))}${report.hypervolumeShare !== null ? ` (${(100 * report.hypervolumeShare).toFixed(1)}% of the box between the reference and the best values)` : ''}; reference ${report.objectives.map((o, j) => `${o.metric} ${report.reference![j]} (${o.reference_rule})`).join(', ')}`,
    )
  return lines
}
