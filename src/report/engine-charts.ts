import type {EngineAblation} from '../eval/ablation.js'
import type {EngineVisualization, RetrievalSearchResult} from './types.js'
import {withChartDefaults} from './render.js'
import type {ChartSpec} from './study-charts.js'

/**
 * Charts of the engine a plan names, in its own terms: the importance of its parameters for each
 * of its objectives, and slices (each numeric parameter against the quality metric, every trial of
 * the study). Every number is copied from the run's phase 4 trials and phase 7's importance.
 */
export function engineCharts(r: RetrievalSearchResult, v: EngineVisualization, ablation?: EngineAblation): ChartSpec[] {
  const charts = [importanceChart(v), slicesChart(r, v), ablation ? ablationChart(ablation) : undefined].filter(
    (c): c is ChartSpec => c !== undefined,
  )
  return charts.map((c) => ({...c, spec: withChartDefaults({title: c.title, ...c.spec})}))
}

function importanceChart(v: EngineVisualization): ChartSpec | undefined {
  const values = v.importance.flatMap((i) =>
    i.params.map((p) => ({objective: i.objective, parameter: p.param, importance: p.importance})),
  )
  if (values.length === 0) return undefined
  const used = v.importance.map((i) => `${i.objective}: ${i.trials_used} trials`).join(', ')
  return {
    id: 'engine-importance',
    title: `${v.engine}: parameter importance per objective (fANOVA over a random forest; ${used})`,
    spec: {
      data: {values},
      facet: {field: 'objective', type: 'nominal', title: null},
      columns: v.importance.length,
      spec: {
        width: 240,
        height: {step: 18},
        mark: {type: 'bar', color: '#4c78a8', tooltip: {content: 'data'}},
        encoding: {
          y: {field: 'parameter', type: 'nominal', sort: '-x', title: null, axis: {labelLimit: 240}},
          x: {field: 'importance', type: 'quantitative', title: 'share of explained variance', scale: {domain: [0, 1]}},
        },
      },
      resolve: {scale: {y: 'independent'}},
    },
  }
}

function slicesChart(r: RetrievalSearchResult, v: EngineVisualization): ChartSpec | undefined {
  const trials = r.trials ?? []
  const values = trials.flatMap((t) =>
    v.numeric.flatMap((p) => {
      const x = t.config[p]
      return typeof x === 'number'
        ? [{parameter: p, value: x, [r.metric]: t.quality, set: t.set, trial: t.trial === -1 ? 'defaults' : t.trial}]
        : []
    }),
  )
  if (values.length === 0) return undefined
  return {
    id: 'engine-slices',
    title: `${v.engine}: ${r.metric} against each numeric parameter (every trial of the study)`,
    spec: {
      data: {values},
      facet: {field: 'parameter', type: 'nominal', title: null},
      columns: Math.min(4, v.numeric.length),
      spec: {
        width: 170,
        height: 150,
        mark: {type: 'point', filled: true, size: 30, tooltip: {content: 'data'}},
        encoding: {
          x: {field: 'value', type: 'quantitative', title: null, scale: {zero: false}},
          y: {field: r.metric.replace(/[.[\]]/g, (c) => `\\${c}`), type: 'quantitative', scale: {zero: false}},
          color: {
            field: 'set',
            type: 'nominal',
            scale: {domain: ['Pareto front', 'dominated', 'lower budget'], range: ['#4c78a8', '#8c8c8c', '#d9d9d9']},
            title: null,
            legend: {orient: 'bottom'},
          },
        },
      },
      resolve: {scale: {x: 'independent'}},
    },
  }
}

/** Phase 3's paired intervals: each change (and declared group) reverted from the tuned profile, and applied alone to the defaults. */
function ablationChart(a: EngineAblation): ChartSpec | undefined {
  const rows = [
    ...a.changes.map((c) => ({name: c.parameter, reverted: c.reverted, alone: c.alone})),
    ...a.groups.map((g) => ({name: `group ${g.name}`, reverted: g.reverted, alone: g.alone})),
  ]
  if (rows.length === 0) return undefined
  const values = rows.flatMap((r) => [
    {
      change: r.name,
      test: 'tuned with it reverted - tuned',
      value: r.reverted.value,
      low: r.reverted.low,
      high: r.reverted.high,
    },
    {
      change: r.name,
      test: 'defaults with it alone - defaults',
      value: r.alone.value,
      low: r.alone.low,
      high: r.alone.high,
    },
  ])
  const order = rows.map((r) => r.name)
  const level = `${Math.round(100 * a.confidence)}%`
  return {
    id: 'engine-ablation',
    title: `Ablation on the held-out questions: change in ${a.metric} with ${level} paired bootstrap intervals (${a.queries} questions)`,
    spec: {
      data: {values},
      facet: {field: 'test', type: 'nominal', title: null},
      columns: 2,
      spec: {
        width: 260,
        height: {step: 20},
        layer: [
          {
            mark: {type: 'bar', color: '#4c78a8', tooltip: {content: 'data'}},
            encoding: {
              y: {field: 'change', type: 'nominal', sort: order, title: null, axis: {labelLimit: 240}},
              x: {field: 'value', type: 'quantitative', title: `change in ${a.metric} (${level} CI)`},
            },
          },
          {
            mark: {type: 'rule', color: 'black'},
            encoding: {
              y: {field: 'change', type: 'nominal', sort: order},
              x: {field: 'low', type: 'quantitative'},
              x2: {field: 'high'},
            },
          },
        ],
      },
    },
  }
}
