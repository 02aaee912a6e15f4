import {join} from 'node:path'
import {studyCharts, type ChartSpec} from '../src/report/study-charts.js'
import {engineCharts, latencyKindLabel} from '../src/report/engine-charts.js'
import {CHART_FONT_FAMILY} from '../src/report/render.js'
import {studyImportance, type ImportanceTrial} from '../src/search/importance.js'
import {writeFileAtomic} from '../src/util/fs.js'
import type {PhaseContext} from './lib/context.js'
import {namedEngine} from './lib/named-engine.js'
import type {ChartRecord, EngineVisualization, RetrievalSearchResult, VisualizeResult} from '../src/report/types.js'

export const CHARTS_DIR = 'charts'

/**
 * Phase 7: every chart from this run's phase results, as vega-lite spec, SVG and PNG side by side;
 * for the engine a plan names, also its own charts (parameter importance per objective, slices).
 */
export async function runVisualize(ctx: PhaseContext): Promise<VisualizeResult> {
  const engine = engineVisualization(ctx)
  const retrieval = ctx.results.search?.retrieval
  const specs: ChartSpec[] = [
    ...studyCharts(ctx.results),
    ...(engine && retrieval ? engineCharts(retrieval, engine) : []),
  ]
  ctx.progress(`phase 7: rendering ${specs.length} charts`)
  const rendered = await Promise.all(specs.map((c) => ctx.charts.render(c.spec)))
  const charts: ChartRecord[] = []
  for (const [k, chart] of specs.entries()) {
    const {svg, png} = rendered[k]
    const record = {
      id: chart.id,
      title: chart.title,
      spec: `${CHARTS_DIR}/${chart.id}.vl.json`,
      svg: `${CHARTS_DIR}/${chart.id}.svg`,
      png: `${CHARTS_DIR}/${chart.id}.png`,
    }
    writeFileAtomic(join(ctx.outDir, record.spec), `${JSON.stringify(chart.spec, null, 2)}\n`)
    writeFileAtomic(join(ctx.outDir, record.svg), svg)
    writeFileAtomic(join(ctx.outDir, record.png), png)
    charts.push(record)
  }
  return {charts, font: CHART_FONT_FAMILY, ...(engine ? {engine} : {})}
}

/** The numbers of the engine's own charts, from phase 4's study of it (undefined without one). */
function engineVisualization(ctx: PhaseContext): EngineVisualization | undefined {
  const r = ctx.results.search?.retrieval
  const named = namedEngine(ctx.plan)
  if (!r?.engine || !named) return undefined
  const spec = named.engine
  const numeric = spec.parameters.filter((p) => p.type === 'float' || p.type === 'int').map((p) => p.name)
  return {
    engine: spec.name,
    latency: r.engine.latency,
    latency_label: latencyKindLabel(r),
    numeric,
    importance: spec.objectives.map((o) => {
      const got = studyImportance(spec.space, importanceTrials(r, o.metric), {seed: ctx.seed})
      return {
        objective: o.metric,
        method: got.method,
        trials_used: got.trials_used,
        params: got.params.map((p) => ({param: p.param, importance: p.importance})),
        note: got.note,
      }
    }),
  }
}

/** Phase 4's trials (every budget, the defaults too) with `metric` as the value importance explains. */
function importanceTrials(r: RetrievalSearchResult, metric: string): ImportanceTrial[] {
  return (r.trials ?? []).flatMap((t) => {
    const value = metric === r.metric ? t.quality : metric === 'p99_ms' ? t.p99_ms : t.metrics[metric]
    return Number.isFinite(value)
      ? [{id: t.trial, status: 'ok', budget: t.budget, loss: value, config: t.config, metrics: t.metrics}]
      : []
  })
}
