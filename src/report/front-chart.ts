/**
 * The one Pareto-front chart: every trial of a study at the largest budget (front and dominated)
 * and, faintly, the trials at lower budgets, on two objectives. The report, `kt search --out`
 * (front.vl.json) and the dashboard all draw it from here; the latency axis says how the study
 * obtained its latency (LatencyKind), never a fixed wording.
 */
import {axisScale, scaleNote} from '../util/axis-scale.js'
import type {VegaLiteSpec} from './render.js'
import type {StudyAnalysis} from '../eval/retrieval-analysis.js'
import type {RetrievalSearchResult} from './types.js'

/** estimated: kt's cost model; declared: the engine's declared cost model; measured: wall time on kt's side; reported: the figure the engine prints. */
export type LatencyKind = 'estimated' | 'declared' | 'measured' | 'reported'

/** Each latency kind in words, as axes and notes print it. */
export const LATENCY_LABELS: Readonly<Record<LatencyKind, string>> = {
  estimated: 'estimated by the cost model',
  declared: "the engine's declared cost model",
  measured: "kt's measurement (wall time per search)",
  reported: 'as the engine reports it',
}

/**
 * The latency kind of a study from what its engine file says of its evaluation (kt's own engines
 * have none: their P99 is kt's cost model). Only a retrieval service is timed by kt.
 */
export function latencyKindOf(evaluate: {readonly kind?: string; readonly latency?: string} | undefined): LatencyKind {
  if (!evaluate) return 'estimated'
  if (evaluate.kind !== undefined && evaluate.kind !== 'retrieval-service') return 'reported'
  return evaluate.latency === 'cost_model' ? 'declared' : 'measured'
}

/** A retrieval study's latency kind in words, from what the report recorded of its engine (none: kt's own). */
export function latencyKindLabel(r: Pick<RetrievalSearchResult, 'engine'>): string {
  return LATENCY_LABELS[latencyKindOf(r.engine ? {latency: r.engine.latency} : undefined)]
}

/** The sets a trial of a front chart falls in, in legend order, and their colours. */
export const FRONT_SETS = ['Pareto front', 'dominated', 'lower budget (fewer queries)'] as const
const FRONT_COLORS = ['#4c78a8', '#8c8c8c', '#d9d9d9']

/** Drag to pan, wheel to zoom (interactive renderings; ignored in the SVG and PNG). */
export const ZOOM = {name: 'zoom', select: 'interval', bind: 'scales'}

/** A field name as vega-lite reads it: dots, brackets and backslashes would otherwise mean nesting. */
function escapeField(name: string): string {
  return name.replace(/[.[\]\\]/g, (c) => `\\${c}`)
}

export interface FrontChartInput {
  readonly title: string | {readonly text: string; readonly subtitle: readonly string[]}
  /** The horizontal objective (latency, or an engine's second objective) with every charted value (for the scale rule). */
  readonly x: {
    readonly field: string
    readonly title: string
    readonly minimize: boolean
    readonly values: ReadonlyArray<number | null>
  }
  readonly y: {readonly field: string; readonly title: string}
  /** Inline records (each with `set`, one of FRONT_SETS, and the two fields), or a dataset the page fills by name. */
  readonly data: {readonly values: readonly object[]} | {readonly name: string}
  readonly width?: number | 'container'
  readonly height?: number
  /** Applied before the layers (the dashboard keeps only the trials that have a set). */
  readonly transform?: readonly object[]
}

/** The front as a step line (its attainment curve) over every trial's point, coloured by set. */
export function frontChartSpec(c: FrontChartInput): VegaLiteSpec {
  const scale = axisScale(c.x.values)
  const x = escapeField(c.x.field)
  const y = {field: escapeField(c.y.field), type: 'quantitative'}
  return {
    title: c.title,
    width: c.width ?? 460,
    height: c.height ?? 300,
    data: c.data,
    ...(c.transform ? {transform: c.transform} : {}),
    layer: [
      {
        transform: [{filter: `datum.set === '${FRONT_SETS[0]}'`}],
        mark: {type: 'line', interpolate: c.x.minimize ? 'step-after' : 'step-before', color: FRONT_COLORS[0]},
        encoding: {
          x: {field: x, type: 'quantitative', title: `${c.x.title}${scaleNote(scale)}`, scale},
          y: {...y, title: c.y.title, scale: {zero: false}},
        },
      },
      {
        params: [ZOOM],
        mark: {type: 'point', filled: true, size: 60, tooltip: {content: 'data'}},
        encoding: {
          x: {field: x, type: 'quantitative'},
          y,
          color: {
            field: 'set',
            type: 'nominal',
            scale: {domain: FRONT_SETS, range: FRONT_COLORS},
            title: null,
            legend: {labelLimit: 260, orient: 'bottom'},
          },
        },
      },
    ],
  }
}

/** An objective's axis title: its name and which way is better. */
export function objectiveTitle(metric: string, maximize: boolean): string {
  return `${metric} (${maximize ? 'higher' : 'lower'} is better)`
}

/** A front over an engine file's two objectives (the first on the vertical axis), from its analysis. */
export function objectiveFrontChart(front: {
  readonly objectives: ReadonlyArray<{readonly metric: string; readonly direction: 'maximize' | 'minimize'}>
  readonly front: ReadonlyArray<{readonly trialId: number; readonly values: readonly number[]; readonly config: object}>
  readonly dominated: ReadonlyArray<{readonly trialId: number; readonly values: readonly number[]}>
  readonly hypervolume: number | null
}): VegaLiteSpec {
  const [yo, xo] = front.objectives
  const record = (set: string, p: {trialId: number; values: readonly number[]; config?: object}) => ({
    trial: p.trialId,
    set,
    [yo.metric]: p.values[0],
    [xo.metric]: p.values[1],
    ...p.config,
  })
  const values = [
    ...front.dominated.map((p) => record(FRONT_SETS[1], p)),
    ...front.front.map((p) => record(FRONT_SETS[0], p)),
  ]
  return frontChartSpec({
    title: `${yo.metric} vs ${xo.metric}: ${front.front.length} on the front, ${front.dominated.length} dominated${front.hypervolume !== null ? ` (hypervolume ${Number(front.hypervolume.toPrecision(4))})` : ''}`,
    x: {
      field: xo.metric,
      title: objectiveTitle(xo.metric, xo.direction === 'maximize'),
      minimize: xo.direction === 'minimize',
      values: values.map((v) => v[xo.metric] as number),
    },
    y: {field: yo.metric, title: objectiveTitle(yo.metric, yo.direction === 'maximize')},
    data: {values},
  })
}

/** The report's record of a study's quality-latency front (kt's engine and engine files alike). */
export function frontRecord(analysis: StudyAnalysis): RetrievalSearchResult['front'] {
  const {front, dominated, reference, hypervolume, hypervolumeShare} = analysis.front
  const point = (p: {trialId: number; quality: number; latencyMs: number}) => ({
    trial: p.trialId,
    quality: p.quality,
    p99_ms: p.latencyMs,
  })
  return {
    reference: {quality: reference.quality, p99_ms: reference.latencyMs, rule: reference.rule},
    points: front.map(point),
    dominated: dominated.map(point),
    hypervolume,
    hypervolume_share: hypervolumeShare,
  }
}
