/**
 * Bi-objective results: quality (maximised) against P99 latency (minimised). The Pareto front,
 * its hypervolume against a stated reference point (Zitzler & Thiele 1998; src/stats/pareto.ts),
 * the dominated trials with the front trials that dominate them, and a chart of the front.
 */
import type {Config} from '../space/index.js'
import {dominates, hypervolume2d, paretoFront, type Sense} from '../stats/pareto.js'
import {axisScale, scaleNote} from '../report/scale.js'

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

/** A trial at a lower budget than the front's (fewer queries): drawn faintly, never on the front. */
export interface LowerBudgetPoint extends FrontPoint {
  readonly budget: number
}

/**
 * Vega-lite scatter of every trial: the front (step line and points), the dominated trials and,
 * faint, the trials at lower budgets, so a reviewer sees every configuration tried and why only a
 * few reached the front. The quality axis names its metric; the latency axis says it is the cost
 * model's estimate and goes logarithmic by the rule of src/report/scale.ts. Hover: the trial's
 * configuration and every metric; drag and wheel: pan and zoom.
 */
export function frontChartSpec(report: FrontReport, options: {qualityLabel?: string; latencyKind?: 'estimated' | 'measured'; lower?: readonly LowerBudgetPoint[]} = {}): Record<string, unknown> {
  const qualityLabel = options.qualityLabel ?? 'quality'
  const kind = options.latencyKind ?? 'estimated'
  const datum = (p: FrontPoint, set: string, budget?: number) => ({trial: p.trialId, set, [qualityLabel]: p.quality, 'P99 ms': p.latencyMs, ...(budget === undefined ? {} : {budget}), ...p.config, ...(p.metrics ?? {})})
  const values = [
    ...(options.lower ?? []).map((p) => datum(p, 'lower budget (fewer queries)', p.budget)),
    ...report.dominated.map((p) => datum(p, 'dominated')),
    ...report.front.map((p) => datum(p, 'Pareto front')),
  ]
  const x = axisScale(values.map((v) => v['P99 ms'] as number))
  const field = (name: string) => name.replace(/[.[\]]/g, (c) => `\\${c}`)
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: `${qualityLabel} vs P99 latency: ${report.front.length} trials on the front, ${report.dominated.length} dominated${options.lower?.length ? `, ${options.lower.length} at lower budgets` : ''}`,
      subtitle: [
        `P99 latency ${kind === 'estimated' ? "estimated by the engine's cost model (deterministic)" : 'measured'}; lower budgets score fewer queries.`,
        `Hypervolume ${report.hypervolume.toFixed(3)} against ${qualityLabel} ${report.reference.quality} at ${report.reference.latencyMs} ms.`,
      ],
    },
    width: 460,
    height: 300,
    data: {values},
    layer: [
      {
        transform: [{filter: "datum.set === 'Pareto front'"}],
        mark: {type: 'line', interpolate: 'step-after', color: '#1f77b4'},
        encoding: {
          x: {field: 'P99 ms', type: 'quantitative', title: `P99 latency, ms (${kind})${scaleNote(x)}`, scale: x},
          y: {field: field(qualityLabel), type: 'quantitative', title: `${qualityLabel} (higher is better)`, scale: {zero: false}},
        },
      },
      {
        params: [{name: 'zoom', select: 'interval', bind: 'scales'}],
        mark: {type: 'point', filled: true, size: 50, tooltip: {content: 'data'}},
        encoding: {
          x: {field: 'P99 ms', type: 'quantitative'},
          y: {field: field(qualityLabel), type: 'quantitative'},
          color: {field: 'set', type: 'nominal', scale: {domain: ['Pareto front', 'dominated', 'lower budget (fewer queries)'], range: ['#1f77b4', '#8c8c8c', '#d9d9d9']}, title: null, legend: {labelLimit: 260, orient: 'bottom'}},
        },
      },
    ],
  }
}
