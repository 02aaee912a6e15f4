import {describe, expect, it} from 'vitest'
import {Resvg} from '@resvg/resvg-js'
import {existsSync} from 'node:fs'
import {renderChart, withChartDefaults, CHART_FONT_FILE, PNG_SCALE} from '../../src/report/render.js'
import {studyCharts} from '../../src/report/study-charts.js'
import type {PhaseResults} from '../../src/report/types.js'

describe('chart rendering', () => {
  it('ships its font file', () => {
    expect(existsSync(CHART_FONT_FILE)).toBe(true)
  })

  it('draws text into the PNG (resvg without the font would drop it)', async () => {
    const spec = withChartDefaults({title: 'Hello kt', data: {values: [{a: 'x', b: 1}, {a: 'y', b: 2}]}, mark: 'bar', encoding: {x: {field: 'a', type: 'nominal'}, y: {field: 'b', type: 'quantitative'}}})
    const {svg, png} = await renderChart(spec)
    expect(svg).toContain('Hello kt')
    const withoutFont = new Resvg(svg, {font: {loadSystemFonts: false}, fitTo: {mode: 'zoom', value: PNG_SCALE}}).render().asPng()
    expect(Buffer.from(png).equals(Buffer.from(withoutFont))).toBe(false)
    expect(png.length).toBeGreaterThan(withoutFont.length)
  })

  it('builds every chart from the results it is given', () => {
    const ablation = {headline: 'h', datasets: [{dataset: 'd1', configs: [{id: 'baseline', kind: 'baseline', weights: {decay: 1, surprise: 0, relevance: 0, habituation: 0}, pearson: {estimate: 0.5, low: 0.4, high: 0.6}, spearman: {estimate: 0.123456, low: 0.1, high: 0.2}}]}]}
    const charts = studyCharts({ablation} as unknown as Partial<PhaseResults>)
    expect(charts.map((c) => c.id)).toEqual(['ablation'])
    expect(JSON.stringify(charts[0].spec)).toContain('0.123456')
  })
})
