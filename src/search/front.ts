/**
 * Bi-objective results: quality (maximised) against P99 latency (minimised). The Pareto front,
 * its hypervolume against a stated reference point (Zitzler & Thiele 1998; src/stats/pareto.ts),
 * the dominated trials with the front trials that dominate them, and a chart of the front.
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
export const REFERENCE_LATENCY_FACTOR = 1.1
/** Quality metrics in kt (recall, NDCG, accuracy) live in [0, 1]: 0 is the worst. */
export const REFERENCE_QUALITY = 0
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
  const front = points.filter((_, i) => frontIdx.has(i)).sort((a, b) => a.latencyMs - b.latencyMs || b.quality - a.quality || a.trialId - b.trialId)
  const vector = (p: FrontPoint): [number, number] => [p.quality, p.latencyMs]
  const dominated = points
    .filter((_, i) => !frontIdx.has(i))
    .map((p) => ({...p, dominatedBy: front.filter((f) => dominates(vector(f), vector(p), SENSES)).slice(0, MAX_DOMINATORS_LISTED).map((f) => f.trialId)}))
  const hypervolume = hypervolume2d(front.map(vector), [ref.quality, ref.latencyMs], SENSES)
  const box = (1 - ref.quality) * ref.latencyMs
  return {reference: ref, front, dominated, hypervolume, hypervolumeShare: box > 0 ? hypervolume / box : 0}
}

/** Text lines: the front, the hypervolume and a count of dominated trials. */
export function frontLines(report: FrontReport, qualityLabel = 'quality'): string[] {
  const lines = [`Pareto front (${report.front.length} trials; ${report.dominated.length} dominated):`]
  for (const p of report.front) lines.push(`  #${p.trialId}: ${qualityLabel} ${p.quality.toFixed(4)}, p99 ${p.latencyMs.toFixed(2)} ms`)
  lines.push(`hypervolume ${report.hypervolume.toFixed(4)} (${(100 * report.hypervolumeShare).toFixed(1)}% of the reference box; reference ${report.reference.rule})`)
  return lines
}

/** Vega-lite scatter of every trial, the front drawn as a step line. */
export function frontChartSpec(report: FrontReport, qualityLabel = 'quality'): Record<string, unknown> {
  const values = [
    ...report.front.map((p) => ({trial: p.trialId, quality: p.quality, p99_ms: p.latencyMs, set: 'Pareto front'})),
    ...report.dominated.map((p) => ({trial: p.trialId, quality: p.quality, p99_ms: p.latencyMs, set: 'dominated'})),
  ]
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: `${qualityLabel} vs P99 latency (hypervolume ${report.hypervolume.toFixed(3)} against ${report.reference.quality}, ${report.reference.latencyMs} ms)`,
    width: 420,
    height: 300,
    data: {values},
    layer: [
      {
        transform: [{filter: "datum.set === 'Pareto front'"}],
        mark: {type: 'line', interpolate: 'step-after', color: '#1f77b4'},
        encoding: {x: {field: 'p99_ms', type: 'quantitative', title: 'P99 latency (ms)'}, y: {field: 'quality', type: 'quantitative', title: qualityLabel}},
      },
      {
        mark: {type: 'point', filled: true, size: 40},
        encoding: {
          x: {field: 'p99_ms', type: 'quantitative'},
          y: {field: 'quality', type: 'quantitative'},
          color: {field: 'set', type: 'nominal', scale: {domain: ['Pareto front', 'dominated'], range: ['#1f77b4', '#bbbbbb']}, title: null},
        },
      },
    ],
  }
}
