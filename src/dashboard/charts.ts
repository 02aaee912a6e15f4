/**
 * The dashboard's vega-lite specs, built here from a StudyView so the scale rule
 * (src/util/axis-scale.ts) and the titles live in one place. Specs name their data ('trials',
 * 'parallel', 'importance', 'per_type', 'compare'); the page fills those datasets from the JSON it
 * already has, so the trials cross the wire once.
 */
import {axisScale, scaleNote} from '../util/axis-scale.js'
import type {StudyView} from './views.js'
import {LATENCY_LABELS, ZOOM, frontChartSpec, objectiveTitle} from '../report/front-chart.js'

export type Spec = Record<string, unknown>

/** Parallel coordinates draw at most this many trials (the best ones): more lines are unreadable and slow. */
const PARALLEL_MAX_TRIALS = 200

function valueTitle(v: StudyView): string {
  return objectiveTitle(v.value.name, v.value.sense === 'max')
}

function historyChart(v: StudyView): Spec {
  const y = axisScale(v.trials.value)
  return {
    title: `Best ${v.value.name} against trials finished`,
    width: 'container',
    height: 260,
    data: {name: 'trials'},
    layer: [
      {
        params: [ZOOM],
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
    params: [ZOOM],
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

/** The front's latency axis: its metric and the latency kind the study really used. */
function latencyTitle(front: NonNullable<StudyView['front']>): string {
  return `${front.latency === 'p99_ms' ? 'P99 latency, ms' : front.latency} (${LATENCY_LABELS[front.latency_kind]})`
}

/** The front: every trial at the largest budget (front and dominated) and, faint, the lower budgets (the page fills `trials`). */
export function frontChart(v: StudyView): Spec | null {
  const f = v.front
  if (!f) return null
  return frontChartSpec({
    title: `${f.quality} against ${latencyTitle(f)}: ${f.points.length} on the front, ${f.dominated.length} dominated at the largest budget`,
    x: {
      field: f.latency,
      title: latencyTitle(f),
      minimize: f.directions.latency === 'minimize',
      values: v.trials.metric[f.latency] ?? [],
    },
    y: {field: f.quality_metric, title: objectiveTitle(f.quality, f.directions.quality === 'maximize')},
    data: {name: 'trials'},
    width: 'container',
    height: 320,
    transform: [{filter: 'datum.set != null'}],
  })
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
    params: [ZOOM],
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
    params: [ZOOM],
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
            title: objectiveTitle(bi[0].front!.quality, bi[0].front!.directions.quality === 'maximize'),
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
