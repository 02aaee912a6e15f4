import {join} from 'node:path'
import {studyCharts} from '../src/report/study-charts.js'
import {CHART_FONT_FAMILY} from '../src/report/render.js'
import {writeFileAtomic} from '../src/util/fs.js'
import type {PhaseContext} from './lib/context.js'
import type {ChartRecord, VisualizeResult} from '../src/report/types.js'

export const CHARTS_DIR = 'charts'

/** Phase 7: every chart from this run's phase results, as vega-lite spec, SVG and PNG side by side. */
export async function runVisualize(ctx: PhaseContext): Promise<VisualizeResult> {
  const specs = studyCharts(ctx.results)
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
  return {charts, font: CHART_FONT_FAMILY}
}
