import {studyCharts} from '../src/report/study-charts.js'
import {engineCharts} from '../src/report/engine-charts.js'
import {CHART_FONT_FAMILY} from '../src/report/render.js'
import type {PhaseContext} from './lib/context.js'
import {writeCharts} from './lib/charts.js'
import {engineVisualization} from './lib/engine-phases.js'
import {engineUnderTest} from './lib/engine-under-test.js'
import type {VisualizeResult} from '../src/report/types.js'

export {CHARTS_DIR} from './lib/charts.js'

/**
 * Phase 7: every chart from this run's phase results, as vega-lite spec, SVG and PNG side by side;
 * for the engine a plan names, also its own charts (parameter importance per objective, slices).
 */
export async function runVisualize(ctx: PhaseContext): Promise<VisualizeResult> {
  const r = ctx.results.search?.retrieval
  const named = engineUnderTest(ctx.plan)
  const engine =
    r?.engine && named
      ? engineVisualization(
          {
            name: named.engine.name,
            space: named.engine.space,
            objectives: named.engine.objectives.map((o) => o.metric),
          },
          r,
          ctx.seed,
        )
      : undefined
  const specs = [...studyCharts(ctx.results), ...(engine && r ? engineCharts(r, engine) : [])]
  return {charts: await writeCharts(ctx, specs), font: CHART_FONT_FAMILY, ...(engine ? {engine} : {})}
}
