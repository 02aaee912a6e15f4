import type {PhaseResults, RetrievalSearchResult} from './types.js'
import {withChartDefaults, type VegaLiteSpec} from './render.js'
import {axisScale, scaleNote} from '../util/axis-scale.js'
import {sharedConfidenceLabel} from './confidence.js'
import {FRONT_SETS, LATENCY_LABELS, ZOOM, frontChartSpec, latencyKindOf, objectiveTitle} from './front-chart.js'

/**
 * The study's charts (importance phases and the retrieval study). Each is a vega-lite spec whose data values are copied from the
 * phase results of the run: nothing here is typed in.
 */
export interface ChartSpec {
  readonly id: string
  readonly title: string
  readonly spec: VegaLiteSpec
}

const SIGNAL_COLORS = {
  domain: ['decay', 'surprise', 'relevance', 'habituation'],
  range: ['#4c78a8', '#f58518', '#54a24b', '#b279a2'],
}

export function studyCharts(r: Partial<PhaseResults>): ChartSpec[] {
  const charts: ChartSpec[] = []
  if (r.search) charts.push(heatmap(r.search), front(r.search), landscape(r.search))
  if (r.search?.retrieval) charts.push(retrievalFront(r.search.retrieval))
  if (r.ablation) charts.push(ablationBars(r.ablation))
  if (r.validation) charts.push(scatter(r.validation), levels(r.validation))
  return charts.map((c) => ({...c, spec: withChartDefaults({title: c.title, ...c.spec})}))
}

/** The retrieval study's front alone, with the chart defaults (for runs without the importance study's charts). */
export function retrievalFrontChart(r: RetrievalSearchResult): ChartSpec {
  const c = retrievalFront(r)
  return {...c, spec: withChartDefaults({title: c.title, ...c.spec})}
}

function heatmap(s: PhaseResults['search']): ChartSpec {
  const values = s.slices.flatMap((slice) =>
    slice.cells.map((c) => ({pair: `${slice.x} (x) vs ${slice.y} (y)`, x: c.x, y: c.y, objective: c.objective})),
  )
  return {
    id: 'weight-heatmap',
    title: `${s.objective} on ${s.dataset} over the weight simplex (best over the other two weights)`,
    spec: {
      data: {values},
      facet: {field: 'pair', type: 'nominal', title: null},
      columns: 3,
      spec: {
        width: 180,
        height: 180,
        mark: {type: 'rect', tooltip: {content: 'data'}},
        encoding: {
          x: {
            field: 'x',
            type: 'quantitative',
            bin: {step: s.grid.step, extent: [0, 1 + s.grid.step]},
            title: 'x weight',
            axis: {values: [0, 0.25, 0.5, 0.75, 1]},
          },
          y: {
            field: 'y',
            type: 'quantitative',
            bin: {step: s.grid.step, extent: [0, 1 + s.grid.step]},
            title: 'y weight',
            axis: {values: [0, 0.25, 0.5, 0.75, 1]},
          },
          color: {field: 'objective', type: 'quantitative', title: `${s.objective} (best)`, scale: {scheme: 'viridis'}},
        },
      },
      resolve: {scale: {color: 'shared'}},
    },
  }
}

function front(s: PhaseResults['search']): ChartSpec {
  const frontValues = s.front.map((p) => ({
    token_budget: p.token_budget,
    objective: p.objective,
    series: 'Pareto front (grid)',
    ...p.weights,
  }))
  const marks = [
    {
      token_budget: s.baseline.token_budget,
      objective: s.baseline.objective.estimate,
      series: 'baseline',
      ...s.baseline.weights,
    },
    {
      token_budget: s.optimum.token_budget,
      objective: s.optimum.objective.estimate,
      series: 'optimum',
      ...s.optimum.weights,
    },
  ]
  const x = axisScale([...frontValues, ...marks].map((v) => v.token_budget))
  return {
    id: 'front',
    title: `${s.objective} vs token budget on ${s.dataset}`,
    spec: {
      width: 420,
      height: 280,
      layer: [
        {
          data: {values: frontValues},
          params: [ZOOM],
          mark: {type: 'line', point: true, interpolate: 'step-after', tooltip: {content: 'data'}},
          encoding: {
            x: {
              field: 'token_budget',
              type: 'quantitative',
              title: `token budget (tokens kept per query, computed)${scaleNote(x)}`,
              scale: x,
            },
            y: {
              field: 'objective',
              type: 'quantitative',
              title: `${s.objective} against the truth (higher is better)`,
              scale: {zero: false},
            },
            color: {field: 'series', type: 'nominal', title: null},
          },
        },
        {
          data: {values: marks},
          mark: {type: 'point', size: 120, filled: true, shape: 'diamond', tooltip: {content: 'data'}},
          encoding: {
            x: {field: 'token_budget', type: 'quantitative'},
            y: {field: 'objective', type: 'quantitative'},
            color: {field: 'series', type: 'nominal'},
          },
        },
      ],
    },
  }
}

/** The retrieval study's front chart, its latency axis labelled with the latency kind the study really used. */
export function retrievalFrontSpec(
  r: Pick<RetrievalSearchResult, 'metric' | 'front' | 'trials' | 'engine'> & {readonly data?: string},
): VegaLiteSpec {
  const metric = r.metric
  // older reports carry only the full-budget trials' two numbers
  const trials = r.trials ?? [
    ...r.front.points.map((p) => ({...p, set: FRONT_SETS[0], budget: null, queries: null, config: {}, metrics: {}})),
    ...r.front.dominated.map((p) => ({...p, set: FRONT_SETS[1], budget: null, queries: null, config: {}, metrics: {}})),
  ]
  const order: Record<string, number> = {'lower budget': 0, dominated: 1, 'Pareto front': 2}
  const kind = latencyKindOf(r.engine ? {latency: r.engine.latency} : undefined)
  const latencyField = `P99 ms (${kind})`
  const latencyNote = r.engine ? `P99: ${LATENCY_LABELS[kind]}.` : "P99: the cost model's estimate."
  const values = [...trials]
    .sort((a, b) => order[a.set] - order[b.set] || a.trial - b.trial)
    .map((t) => ({
      trial: t.trial === -1 ? 'defaults' : t.trial,
      set: t.set === 'lower budget' ? FRONT_SETS[2] : t.set,
      [metric]: t.quality,
      [latencyField]: t.p99_ms,
      budget: t.budget,
      queries: t.queries,
      ...t.config,
      ...t.metrics,
    }))
  const lower = trials.filter((t) => t.set === 'lower budget').length
  const text = `Retrieval: ${metric} vs P99 latency${r.data ? ` on ${r.data.split('/').pop()}` : ''} (hypervolume ${r.front.hypervolume.toFixed(3)})`
  return frontChartSpec({
    title: {
      text,
      subtitle: [
        `${r.front.points.length} trials on the front and ${r.front.dominated.length} dominated, scored on all queries;`,
        lower ? `${lower} more at lower budgets (fewer queries), shown faintly. ${latencyNote}` : latencyNote,
      ],
    },
    x: {
      field: latencyField,
      title: `P99 latency, ms (${LATENCY_LABELS[kind]})`,
      minimize: true,
      values: trials.map((t) => t.p99_ms),
    },
    y: {field: metric, title: objectiveTitle(metric, true)},
    data: {values},
  })
}

function retrievalFront(r: RetrievalSearchResult): ChartSpec {
  const spec = retrievalFrontSpec(r)
  return {id: 'retrieval-front', title: (spec.title as {text: string}).text, spec}
}

function landscape(s: PhaseResults['search']): ChartSpec {
  const values = s.landscape.flatMap((l) =>
    l.points.map((p) => ({signal: l.signal, weight: p.weight, objective: p.objective})),
  )
  return {
    id: 'landscape',
    title: `${s.objective} along each weight through the optimum (others rescaled)`,
    spec: {
      width: 420,
      height: 280,
      data: {values},
      params: [ZOOM],
      mark: {type: 'line', point: true, tooltip: {content: 'data'}},
      encoding: {
        x: {field: 'weight', type: 'quantitative', title: 'weight of the signal'},
        y: {field: 'objective', type: 'quantitative', title: `${s.objective} against the truth`, scale: {zero: false}},
        color: {field: 'signal', type: 'nominal', scale: SIGNAL_COLORS},
      },
    },
  }
}

function ablationBars(a: PhaseResults['ablation']): ChartSpec {
  const values = a.datasets.flatMap((d) =>
    d.configs.map((c, k) => ({
      dataset: d.dataset,
      config: c.id,
      order: k,
      estimate: c.spearman.estimate,
      low: c.spearman.low,
      high: c.spearman.high,
    })),
  )
  const order = a.datasets[0].configs.map((c) => c.id)
  const level = sharedConfidenceLabel(a.datasets.flatMap((d) => d.configs.map((c) => c.spearman)))
  return perDataset(
    'ablation',
    `Ablation: Spearman against the truth with ${level} bootstrap intervals`,
    values,
    a.datasets.length,
    {
      width: 200,
      height: 320,
      layer: [
        {
          mark: {type: 'bar', color: '#4c78a8', tooltip: {content: 'data'}},
          encoding: {
            y: {field: 'config', type: 'nominal', sort: order, title: null, axis: {labelLimit: 240}},
            x: {
              field: 'estimate',
              type: 'quantitative',
              title: `Spearman correlation with the truth (${level} CI)`,
              scale: {domain: [-1, 1]},
            },
          },
        },
        {
          mark: {type: 'rule', color: 'black'},
          encoding: {
            y: {field: 'config', type: 'nominal', sort: order},
            x: {field: 'low', type: 'quantitative'},
            x2: {field: 'high'},
          },
        },
      ],
    },
  )
}

function scatter(v: PhaseResults['validation']): ChartSpec {
  const values = v.datasets.flatMap((d) =>
    d.scatter.flatMap((p) => [
      {dataset: d.dataset, truth: p.truth, score: p.baseline, weights: 'baseline'},
      {dataset: d.dataset, truth: p.truth, score: p.optimum, weights: 'optimum'},
    ]),
  )
  return perDataset('scatter', 'Calculated importance vs ground truth (held-out data)', values, v.datasets.length, {
    width: 240,
    height: 240,
    params: [ZOOM],
    mark: {type: 'point', opacity: 0.7, tooltip: {content: 'data'}},
    encoding: {
      x: {field: 'truth', type: 'quantitative', title: 'ground truth', scale: {domain: [0, 1]}},
      y: {field: 'score', type: 'quantitative', title: 'calculated importance', scale: {domain: [0, 1]}},
      color: {field: 'weights', type: 'nominal', title: null},
    },
  })
}

/** One panel per dataset (`spec` draws one), side by side. */
function perDataset(id: string, title: string, values: object[], datasets: number, spec: object): ChartSpec {
  const facet = {field: 'dataset', type: 'nominal', title: null}
  return {id, title, spec: {data: {values}, facet, columns: Math.max(1, datasets), spec}}
}

function levels(v: PhaseResults['validation']): ChartSpec {
  const values = v.datasets.flatMap((d) =>
    d.levels.order.flatMap((level, k) => [
      {dataset: d.dataset, level, rank: k, weights: 'baseline', turns: d.levels.baseline_counts[k]},
      {dataset: d.dataset, level, rank: k, weights: 'optimum', turns: d.levels.optimum_counts[k]},
    ]),
  )
  const order = v.datasets[0]?.levels.order ?? []
  return perDataset('detail-levels', 'Detail levels before (baseline) and after (optimum)', values, v.datasets.length, {
    width: 240,
    height: 200,
    mark: {type: 'bar', tooltip: {content: 'data'}},
    encoding: {
      x: {field: 'level', type: 'ordinal', sort: order, title: 'detail level (least to most detail)'},
      xOffset: {field: 'weights'},
      y: {field: 'turns', type: 'quantitative', title: 'turns'},
      color: {field: 'weights', type: 'nominal', title: null},
    },
  })
}
