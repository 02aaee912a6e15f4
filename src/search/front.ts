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
  /** Area dominated by the front within the reference box (quality units x ms). */
  readonly hypervolume: number
  /** Hypervolume over the reference box's area (quality 1 at 0 ms would give 1). */
  readonly hypervolumeShare: number
}

/** Default reference: quality 0 and 1.1 x the slowest trial's P99, rounded up to two significant digits. */
const REFERENCE_LATENCY_FACTOR = 1.1
/** Quality metrics in kt (recall, NDCG, accuracy) live in [0, 1]: 0 is the worst. */
const REFERENCE_QUALITY = 0
/** Front trials listed as dominating a dominated trial. */
const MAX_DOMINATORS_LISTED = 3

const SENSES: readonly [Sense, Sense] = ['max', 'min']

/** Rounds up to two significant digits (63.4 -> 64, 0.1234 -> 0.13). */
export function roundUpTwoDigits(x: number): number {
  if (!(x > 0)) return x
  const scale = Math.pow(10, Math.floor(Math.log10(x)) - 1)
  // toPrecision drops the binary noise of the product (0.059000000000000004 -> 0.059)
  return Number((Math.ceil(x / scale - 1e-9) * scale).toPrecision(2))
}

export function defaultReference(points: readonly FrontPoint[]): ReferencePoint & {rule: string} {
  const slowest = Math.max(0, ...points.map((p) => p.latencyMs))
  return {
    quality: REFERENCE_QUALITY,
    latencyMs: roundUpTwoDigits(REFERENCE_LATENCY_FACTOR * slowest) || 1,
    rule: `quality ${REFERENCE_QUALITY}, latency ${REFERENCE_LATENCY_FACTOR} x the slowest trial's P99 (${slowest.toFixed(2)} ms) rounded up to two significant digits`,
  }
}

export function frontReport(points: readonly FrontPoint[], reference?: ReferencePoint): FrontReport {
  const ref = reference ? {...reference, rule: 'stated by the caller'} : defaultReference(points)
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
  const hypervolume = hypervolume2d(front.map(vector), [ref.quality, ref.latencyMs], SENSES)
  const box = (1 - ref.quality) * ref.latencyMs
  return {reference: ref, front, dominated, hypervolume, hypervolumeShare: box > 0 ? hypervolume / box : 0}
}

/** Text lines: the front, the hypervolume and a count of dominated trials. */
export function frontLines(report: FrontReport, qualityLabel = 'quality'): string[] {
  const lines = [`Pareto front (${report.front.length} trials; ${report.dominated.length} dominated):`]
  for (const p of report.front)
    lines.push(`  #${p.trialId}: ${qualityLabel} ${p.quality.toFixed(4)}, p99 ${p.latencyMs.toFixed(2)} ms`)
  lines.push(
    `hypervolume ${report.hypervolume.toFixed(4)} (${(100 * report.hypervolumeShare).toFixed(1)}% of the reference box; reference ${report.reference.rule})`,
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
 * trials reached 0), so the extreme front points still add area; the same idea as kt's retrieval
 * front (1.1 x the slowest).
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
  let hypervolume: number | null = null
  let share: number | null = null
  let reference: number[] | null = null
  if (objectives.length === 2 && usable.length > 0) {
    reference = refs.map((r) => r.value)
    const s2: [Sense, Sense] = [senses[0], senses[1]]
    hypervolume = hypervolume2d(
      front.map((f) => [f.values[0], f.values[1]] as [number, number]),
      [reference[0], reference[1]],
      s2,
    )
    // the box between the reference and the best value each objective reached
    const best = objectives.map((o, j) =>
      senses[j] === 'max' ? Math.max(...usable.map((c) => vec(c)[j])) : Math.min(...usable.map((c) => vec(c)[j])),
    )
    const box = Math.abs(best[0] - reference[0]) * Math.abs(best[1] - reference[1])
    share = box > 0 ? hypervolume / box : null
  }
  return {
    objectives: objectives.map((o, j) => ({...o, reference_rule: refs[j].rule})),
    reference,
    front,
    dominated,
    hypervolume,
    hypervolumeShare: share,
  }
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
