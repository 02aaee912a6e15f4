import {describe, expect, it} from 'vitest'
import {Resvg} from '@resvg/resvg-js'
import {existsSync} from 'node:fs'
import {renderChart, withChartDefaults, CHART_FONT_FILE, PNG_SCALE} from '../../src/report/render.js'
import {retrievalFrontChart, studyCharts} from '../../src/report/study-charts.js'
import {renderMarkdown} from '../../src/report/markdown.js'
import {reproducibility} from '../../src/report/reproducibility.js'
import type {PhaseResults, Report} from '../../src/report/types.js'

describe('chart rendering', () => {
  it('ships its font file', () => {
    expect(existsSync(CHART_FONT_FILE)).toBe(true)
  })

  it('draws text into the PNG (resvg without the font would drop it)', async () => {
    const spec = withChartDefaults({
      title: 'Hello kt',
      data: {
        values: [
          {a: 'x', b: 1},
          {a: 'y', b: 2},
        ],
      },
      mark: 'bar',
      encoding: {x: {field: 'a', type: 'nominal'}, y: {field: 'b', type: 'quantitative'}},
    })
    const {svg, png} = await renderChart(spec)
    expect(svg).toContain('Hello kt')
    const withoutFont = new Resvg(svg, {font: {loadSystemFonts: false}, fitTo: {mode: 'zoom', value: PNG_SCALE}})
      .render()
      .asPng()
    expect(Buffer.from(png).equals(Buffer.from(withoutFont))).toBe(false)
    expect(png.length).toBeGreaterThan(withoutFont.length)
  })

  it('builds every chart from the results it is given', () => {
    const ablation = {
      headline: 'h',
      datasets: [
        {
          dataset: 'd1',
          configs: [
            {
              id: 'baseline',
              kind: 'baseline',
              weights: {decay: 1, surprise: 0, relevance: 0, habituation: 0},
              pearson: {estimate: 0.5, low: 0.4, high: 0.6},
              spearman: {estimate: 0.123456, low: 0.1, high: 0.2},
            },
          ],
        },
      ],
    }
    const charts = studyCharts({ablation} as unknown as Partial<PhaseResults>)
    expect(charts.map((c) => c.id)).toEqual(['ablation'])
    expect(JSON.stringify(charts[0].spec)).toContain('0.123456')
  })

  it("labels intervals with the level they were computed at (the plan's bootstrap.confidence), never a typed-in 95% (review R#7)", () => {
    const iv = (estimate: number) => ({
      estimate,
      low: estimate - 0.1,
      high: estimate + 0.1,
      confidence: 0.8,
      resamples: 100,
      undefined_resamples: 0,
    })
    const ablation = {
      headline: 'h',
      datasets: [
        {
          dataset: 'd1',
          configs: [
            {
              id: 'baseline',
              kind: 'baseline',
              weights: {decay: 1, surprise: 0, relevance: 0, habituation: 0},
              pearson: iv(0.5),
              spearman: iv(0.4),
            },
          ],
        },
      ],
    }
    const chart = JSON.stringify(studyCharts({ablation} as unknown as Partial<PhaseResults>)[0])
    expect(chart).toContain('with 80% bootstrap intervals')
    expect(chart).toContain('(80% CI)')
    expect(chart).not.toContain('95%')
    const criterion = {
      id: 'rank-gain',
      description: 'the lower end of the 95% interval of the change is above 0',
      metric: 'spearman_delta_abs_ci_low',
      op: '>',
      threshold: 0,
      value: 0.05,
      passed: true,
      evaluable: true,
      confidence: 0.8,
    }
    const delta = {kind: 'absolute', unit: 'spearman correlation', ...iv(0.1)}
    const dataset = {
      dataset: 'h1',
      role: 'holdout',
      turns: 10,
      mean_change: {kind: 'absolute', unit: 'u', value: 0, low: 0, high: 0, confidence: 0.8},
      share_positive: {value: 0.5, low: 0.4, high: 0.6, confidence: 0.8},
      baseline: {pearson: iv(0.1), spearman: iv(0.1), token_budget: 10},
      optimum: {pearson: iv(0.2), spearman: iv(0.2), token_budget: 10},
      delta: {pearson: delta, spearman: delta},
      token_budget_change: {kind: 'relative', unit: '%', value: 0},
      levels: {order: ['FULL'], baseline_counts: [1], optimum_counts: [1], transitions: [[1]]},
      scatter: [],
      verdicts: [criterion],
    }
    const validation = {
      optimum: ablation.datasets[0].configs[0].weights,
      baseline: ablation.datasets[0].configs[0].weights,
      datasets: [dataset],
      verdict: 'pass',
      passed: true,
      leakage_flagged: [],
    }
    const md = renderMarkdown({
      schema: 'kt.report',
      version: 1,
      run: {
        id: 'r',
        seed: 42,
        plan: {name: 'p', file: 'plan.json', sha256_12: '0'},
        kt_version: '0',
        phases_run: ['ablation', 'validation'],
      },
      phases: {ablation, validation},
      timing: {total_ms: 0, phases_ms: {}},
    } as unknown as Report)
    expect(md).toContain('| configuration | weights | Pearson (80% CI) | Spearman (80% CI) |')
    expect(md).toContain('| spearman_delta_abs_ci_low (80% interval) |')
    expect(md).toContain("(the plan's text says 95%; the interval used is 80%, from bootstrap.confidence)")
    expect(md).toContain('bootstrap 80%')
  })

  it('calls a run reproducible only when nothing above the timing section was measured on the clock (review R#6)', () => {
    const withEngine = (latency: 'measured' | 'cost_model') =>
      ({search: {retrieval: {engine: {name: 'eng', file: 'eng.json', latency}}}}) as unknown as Partial<PhaseResults>
    expect(reproducibility({})).toEqual({reproducible: true, reason: null})
    expect(reproducibility({search: {retrieval: {}}} as unknown as Partial<PhaseResults>)).toEqual({
      reproducible: true,
      reason: null,
    }) // kt's own engine: cost model
    expect(reproducibility(withEngine('cost_model'))).toEqual({reproducible: true, reason: null})
    const measured = reproducibility(withEngine('measured'))
    expect(measured.reproducible).toBe(false)
    expect(measured.reason).toMatch(
      /wall time measured on the clock for the external engine eng \(eng\.json: evaluate\.latency "measured"\).*front.*profiles/,
    )
    const report = (run: object) =>
      ({
        schema: 'kt.report',
        version: 1,
        run: {
          id: 'r',
          seed: 42,
          plan: {name: 'p', file: 'plan.json', sha256_12: '0'},
          kt_version: '0',
          phases_run: [],
          ...run,
        },
        phases: {},
        timing: {total_ms: 0, phases_ms: {}},
      }) as unknown as Report
    const notRepro = renderMarkdown(report({reproducible: false, reproducible_reason: measured.reason}))
    expect(notRepro).toContain(`**Not reproducible:** ${measured.reason}.`)
    expect(notRepro).not.toContain('everything above is reproducible')
    expect(notRepro).toContain('## Timing (differs between runs; this run is NOT reproducible')
    expect(renderMarkdown(report({reproducible: true, reproducible_reason: null}))).toContain(
      '## Timing (differs between runs; everything above is reproducible)',
    )
  })
})

describe('the retrieval front chart of a report', () => {
  const retrieval = {
    data: 'memory_small.json',
    metric: 'recall@10',
    optimizer: 'bohb',
    budget: 1,
    studies: ['s'],
    store: 's.sqlite',
    missing_types: [],
    default_quality: 0.5,
    front: {
      reference: {quality: 0, p99_ms: 10, rule: 'r'},
      points: [{trial: 1, quality: 0.6, p99_ms: 3}],
      dominated: [],
      hypervolume: 4.2,
      hypervolume_share: 0.42,
    },
    profiles: [],
  }

  it("labels P99 as the cost model's estimate for kt's engine and as measured for an engine file that measures it", () => {
    const own = JSON.stringify(retrievalFrontChart(retrieval as never))
    expect(own).toContain('P99 ms (estimated)')
    expect(own).not.toContain('measured on')
    const engine = {...retrieval, engine: {name: 'xap', file: 'engine.json', latency: 'measured'}}
    const measured = JSON.stringify(retrievalFrontChart(engine as never))
    expect(measured).toContain('P99 ms (measured)')
    expect(measured).not.toContain('cost model')
  })
})
