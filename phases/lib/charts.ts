import {join} from 'node:path'
import type {ChartSpec} from '../../src/report/study-charts.js'
import {writeFileAtomic} from '../../src/util/fs.js'
import type {ChartRecord} from '../../src/report/types.js'
import type {PhaseContext} from './context.js'

export const CHARTS_DIR = 'charts'

/** Renders each chart and writes it as vega-lite spec, SVG and PNG under the run folder's charts/. */
export async function writeCharts(
  ctx: Pick<PhaseContext, 'charts' | 'outDir' | 'progress'>,
  specs: readonly ChartSpec[],
): Promise<ChartRecord[]> {
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
  return charts
}
