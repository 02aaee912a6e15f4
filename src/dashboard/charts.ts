/**
 * The dashboard's vega-lite specs, built here from a StudyView so the scale rule
 * (src/util/axis-scale.ts) and the titles live in one place. Specs name their data ('trials',
 * 'parallel', 'importance', 'per_type', 'compare'); the page fills those datasets from the JSON it
 * already has, so the trials cross the wire once.
 */
import {axisScale, scaleNote} from '../util/axis-scale.js'
import type {StudyView} from './views.js'

export type Spec = Record<string, unknown>

/** Parallel coordinates draw at most this many trials (the best ones): more lines are unreadable and slow. */
const PARALLEL_MAX_TRIALS = 200

const FRONT_COLORS = {domain: ['Pareto front', 'dominated', 'lower budget'], range: ['#1f77b4', '#9a9a9a', '#dddddd']}

function valueTitle(v: StudyView): string {
  return `${v.value.name} (${v.value.sense === 'max' ? 'higher' : 'lower'} is better)`
}

const zoom = {name: 'zoom', select: 'interval', bind: 'scales'}

function historyChart(v: StudyView): Spec {
  const y = axisScale(v.trials.value)
  return {
    title: `Best ${v.value.name} against trials finished`,
    width: 'container',
    height: 260,
    data: {name: 'trials'},
    layer: [
      {
        params: [zoom],
        transform: [{filter: 'datum.value != null'}],
        mark: {type: 'point', filled: true, size: 22, opacity: 0.55, tooltip: {content: 'data'}},
        encoding: {
          x: {field: 'order', type: 'quantitative', title: 'trials finished'},
          y: {field: 'value', type: 'quantitative', title: `${valueTitle(v)}${scaleNote(y)}`, scale: y},
          color: {field: 'budget', type: 'ordinal', title: 'budget'},
        },
      },
      // the incumbent's steps only (the page passes the trials where the best value changes)
      {
        data: {name: 'steps'},
        mark: {type: 'line', interpolate: 'step-after', color: '#d62728'},
        encoding: {x: {field: 'order', type: 'quantitative'}, y: {field: 'best_so_far', type: 'quantitative'}},
      },
    ],
  }
}

function budgetChart(v: StudyView): Spec {
  const x = axisScale(v.trials.budget_so_far)
  return {
    title: `Best ${v.value.name} against consumed budget`,
    width: 'container',
    height: 260,
    data: {name: 'trials'},
    transform: [{filter: 'datum.best_so_far != null'}],
    params: [zoom],
    mark: {type: 'line', interpolate: 'step-after', point: {size: 14}},
    encoding: {
      x: {
        field: 'budget_so_far',
        type: 'quantitative',
        title: `budget consumed (units of the largest budget, ${v.max_budget ?? '?'})${scaleNote(x)}`,
        scale: x,
      },
      y: {field: 'best_so_far', type: 'quantitative', title: `best ${valueTitle(v)}`, scale: {zero: false}},
      tooltip: [
        {field: 'trial'},
        {field: 'budget_so_far', format: '.2f', title: 'budget consumed'},
        {field: 'best_so_far', title: `best ${v.value.name}`},
      ],
    },
  }
}

/** A metric name as a vega field (dots and brackets would be read as nested access). */
function fieldName(metric: string): string {
  return metric.replace(/[.[\]\\]/g, (c) => `\\${c}`)
}

/** The front's latency axis as the study measured it: the cost model's estimate, wall time, or the engine's own figure. */
function latencyTitle(front: NonNullable<StudyView['front']>): string {
  const how =
    front.latency_kind === 'estimated'
      ? 'estimated by the cost model; measured timings are the measured_* metrics'
      : front.latency_kind === 'measured'
        ? "measured on kt's side"
        : 'as the engine reports it'
  return `${front.latency === 'p99_ms' ? 'P99 latency, ms' : front.latency} (${how})`
}

/** The front: every trial at the largest budget (front and dominated) and, faint, the lower budgets. */
export function frontChart(v: StudyView): Spec | null {
  if (!v.front) return null
  const lat = v.trials.metric[v.front.latency] ?? []
  const x = axisScale(lat)
  return {
    title: `${v.front.quality} against ${latencyTitle(v.front)}: ${v.front.points.length} on the front, ${v.front.dominated.length} dominated at the largest budget`,
    width: 'container',
    height: 320,
    data: {name: 'trials'},
    transform: [{filter: 'datum.set != null'}],
    params: [zoom],
    mark: {type: 'point', filled: true, size: 60, tooltip: {content: 'data'}},
    encoding: {
      x: {
        field: fieldName(v.front.latency),
        type: 'quantitative',
        title: `${latencyTitle(v.front)}${scaleNote(x)}`,
        scale: x,
      },
      y: {
        field: fieldName(v.front.quality_metric),
        type: 'quantitative',
        title: `${v.front.quality} (higher is better)`,
        scale: {zero: false},
      },
      color: {field: 'set', type: 'nominal', scale: FRONT_COLORS, title: null},
      order: {field: '_draw_order', type: 'quantitative'},
    },
  }
}

function parallelChart(v: StudyView): Spec {
  return {
    title: `Parameters of the best ${PARALLEL_MAX_TRIALS} trials (each axis scaled to its range) against ${v.value.name}`,
    width: 'container',
    height: 300,
    data: {name: 'parallel'},
    mark: {type: 'line', opacity: 0.45, strokeWidth: 1},
    encoding: {
      x: {field: 'param', type: 'nominal', sort: null, title: null, axis: {labelAngle: -40, labelLimit: 140}},
      y: {
        field: 'scaled',
        type: 'quantitative',
        title: 'position in the parameter range (0 = low, 1 = high)',
        scale: {domain: [0, 1]},
      },
      detail: {field: 'trial', type: 'nominal'},
      color: {
        field: 'value',
        type: 'quantitative',
        title: v.value.name,
        scale: {scheme: 'viridis', reverse: v.value.sense === 'min'},
      },
      tooltip: [
        {field: 'trial'},
        {field: 'param'},
        {field: 'raw', title: 'value'},
        {field: 'value', title: v.value.name},
      ],
    },
  }
}

export function importanceChart(target: string): Spec {
  return {
    title: {
      text: `Parameter importance for ${target}`,
      subtitle: "fANOVA: the share of the fitted objective's variance each parameter explains alone",
      anchor: 'start',
    },
    width: 380,
    height: {step: 16},
    data: {name: 'importance'},
    layer: [
      {
        mark: {type: 'bar', color: '#4c78a8'},
        encoding: {
          y: {field: 'param', type: 'nominal', sort: '-x', title: null, axis: {labelLimit: 200}},
          x: {
            field: 'importance',
            type: 'quantitative',
            title: 'importance (shares rescaled to sum to 1)',
            axis: {format: '.0%'},
          },
          tooltip: [
            {field: 'param'},
            {field: 'importance', format: '.3f'},
            {field: 'variance_share', format: '.3f', title: 'variance share'},
            {field: 'variance_share_sd', format: '.3f', title: 'sd over trees'},
          ],
        },
      },
    ],
  }
}

function perTypeChart(v: StudyView): Spec | null {
  if (v.per_type.length === 0) return null
  return {
    title: `${v.value.name} per query type: this study's best configuration and each type's own study`,
    width: 'container',
    height: 220,
    data: {name: 'per_type'},
    mark: {type: 'bar'},
    encoding: {
      x: {field: 'type', type: 'nominal', title: 'query type', axis: {labelAngle: 0}},
      xOffset: {field: 'source'},
      y: {field: 'quality', type: 'quantitative', title: `${v.value.name} (higher is better)`},
      color: {field: 'source', type: 'nominal', title: null},
      tooltip: [
        {field: 'type'},
        {field: 'source'},
        {field: 'quality', format: '.3f'},
        {field: 'study'},
        {field: 'queries'},
      ],
    },
  }
}

/** Side by side: the best value so far of several studies on one chart, against trials or consumed budget. */
export function compareChart(views: readonly StudyView[], x: 'order' | 'budget_so_far'): Spec {
  const names = [...new Set(views.map((v) => v.value.name))]
  const xs = axisScale(views.flatMap((v) => v.trials[x]))
  return {
    title: `Best ${names.join(' / ')} so far: ${views.map((v) => v.name).join(' vs ')}`,
    width: 'container',
    height: 300,
    data: {name: 'compare'},
    params: [zoom],
    mark: {type: 'line', interpolate: 'step-after', point: {size: 12}},
    encoding: {
      x: {
        field: x,
        type: 'quantitative',
        title: `${x === 'order' ? 'trials finished' : "budget consumed (units of each study's largest budget)"}${scaleNote(xs)}`,
        scale: xs,
      },
      y: {field: 'best_so_far', type: 'quantitative', title: `best ${names.join(' / ')}`, scale: {zero: false}},
      color: {field: 'study', type: 'nominal', title: 'study'},
      tooltip: [
        {field: 'study'},
        {field: 'trial'},
        {field: x, format: '.2f'},
        {field: 'best_so_far', title: 'best so far'},
      ],
    },
  }
}

export function compareFrontChart(views: readonly StudyView[]): Spec | null {
  const bi = views.filter((v) => v.front)
  if (bi.length < 2) return null
  const x = axisScale(bi.flatMap((v) => v.trials.metric[v.front!.latency] ?? []))
  return {
    title: `Pareto fronts at each study's largest budget: ${bi.map((v) => v.name).join(' vs ')}`,
    width: 'container',
    height: 300,
    data: {name: 'compare_front'},
    params: [zoom],
    layer: [
      {
        mark: {type: 'line', interpolate: 'step-after'},
        transform: [{filter: "datum.set === 'Pareto front'"}],
        encoding: {
          x: {
            field: 'p99_ms',
            type: 'quantitative',
            scale: x,
            title: `${latencyTitle(bi[0].front!)}${scaleNote(x)}`,
          },
          y: {
            field: 'quality',
            type: 'quantitative',
            scale: {zero: false},
            title: `${bi[0].front!.quality} (higher is better)`,
          },
          color: {field: 'study', type: 'nominal'},
        },
      },
      {
        mark: {type: 'point', filled: true, size: 40, tooltip: {content: 'data'}},
        encoding: {
          x: {field: 'p99_ms', type: 'quantitative'},
          y: {field: 'quality', type: 'quantitative'},
          color: {field: 'study', type: 'nominal', title: 'study'},
          opacity: {condition: {test: "datum.set === 'Pareto front'", value: 1}, value: 0.25},
        },
      },
    ],
  }
}

export function studyCharts(v: StudyView): Record<string, Spec> {
  const out: Record<string, Spec> = {history: historyChart(v), budget: budgetChart(v), parallel: parallelChart(v)}
  const f = frontChart(v)
  if (f) out.front = f
  const t = perTypeChart(v)
  if (t) out.per_type = t
  return out
}
