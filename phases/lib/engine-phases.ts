import {loadMemoryDataset} from '../../src/data/conversations/index.js'
import type {SplitSpec} from '../../src/data/conversations/split.js'
import {conformanceData, runConformance, type ConformanceSubject} from '../../src/adapters/conformance.js'
import type {EngineAblation} from '../../src/eval/ablation.js'
import {engineCharts} from '../../src/report/engine-charts.js'
import {CHART_FONT_FAMILY, renderChart} from '../../src/report/render.js'
import {retrievalFrontChart} from '../../src/report/study-charts.js'
import type {
  EngineConformance,
  EngineVisualization,
  RetrievalSearchResult,
  SyntheticResult,
  VisualizeResult,
} from '../../src/report/types.js'
import {writeCharts} from './charts.js'
import {latencyKindLabel} from '../../src/report/front-chart.js'
import {studyImportance, type ImportanceTrial} from '../../src/search/parameter-importance.js'
import type {ParamSpace} from '../../src/space/types.js'
import {engineSynthetic} from './engine-synthetic.js'
import type {PlanEngine} from './plan-engine.js'

/**
 * Phases 1, 2 and 7 for the engine a plan names, whatever the plan's format: the conformance suite
 * of an engine file, kt's synthetic conversations through the engine, and the engine's own charts.
 */
export interface EnginePhaseInput {
  readonly engine: PlanEngine
  /** The plan's conversations (absent for a command or http engine): absolute path, and as reports name it. */
  readonly data?: string
  readonly dataLabel: string
  /** The engine file as reports name it (undefined for a built-in engine). */
  readonly fileLabel?: string
  readonly seed: number
  readonly progress: (line: string) => void
}

/** The conformance suite of an engine (an engine file, or a built-in engine's service description) on the first conversations of the plan's data. */
export async function engineConformance(
  spec: ConformanceSubject,
  input: Omit<EnginePhaseInput, 'engine'>,
): Promise<EngineConformance> {
  const service = !('evaluate' in spec) || spec.evaluate.kind === 'retrieval-service'
  const dataset = service ? conformanceData(loadMemoryDataset(input.data!)) : undefined
  const report = await runConformance(spec, {
    seed: input.seed,
    dataset,
    progress: (line) => input.progress(`phase 1: ${line}`),
  })
  return {
    engine: report.engine,
    file: input.fileLabel ?? spec.name,
    kind: report.kind,
    ...(service ? {data: input.dataLabel} : {}),
    deterministic: report.deterministic,
    checks: report.checks.map((c) => ({...c})),
    passed: report.passed,
  }
}

/** Phase 2 of a kt_plan 2 run: kt's synthetic conversations through the engine, the data's fingerprint and the split's leakage audit. */
export async function engineSyntheticPhase(input: EnginePhaseInput, split: SplitSpec): Promise<SyntheticResult> {
  return {datasets: [], leaks_found: 0, engine: await engineSynthetic({...input, data: input.data!, split})}
}

/** Phase 7 of a kt_plan 2 run: the front, the parameters' importance per objective, slices and the ablation's intervals. */
export async function engineVisualize(
  input: EnginePhaseInput & {
    readonly metric: string
    readonly search: RetrievalSearchResult
    readonly ablation?: EngineAblation
    readonly outDir: string
  },
): Promise<VisualizeResult> {
  const {engine, search} = input
  const objectives = engine.objectives(input.metric)
  const v = engineVisualization({name: engine.name, space: engine.space, objectives}, search, input.seed)
  const specs = [retrievalFrontChart(search), ...engineCharts(search, v, input.ablation)]
  const ctx = {outDir: input.outDir, progress: input.progress, charts: {render: renderChart, close: async () => {}}}
  return {charts: await writeCharts(ctx, specs), font: CHART_FONT_FAMILY, engine: v}
}

/** The engine as its charts name it: its parameters and the metrics it is tuned on. */
export interface ChartedEngine {
  readonly name: string
  readonly space: ParamSpace
  readonly objectives: readonly string[]
}

/** The numbers of the engine's own charts, from phase 4's study of it. */
export function engineVisualization(
  engine: ChartedEngine,
  r: RetrievalSearchResult,
  seed: number,
): EngineVisualization {
  const numeric = engine.space.params.flatMap((p) =>
    p.kind === 'simplex' ? p.members.map((m) => m.name) : p.kind === 'categorical' ? [] : [p.name],
  )
  return {
    engine: engine.name,
    latency: r.engine?.latency ?? 'cost_model',
    latency_label: latencyKindLabel(r),
    numeric,
    importance: engine.objectives.map((metric) => {
      const got = studyImportance(engine.space, importanceTrials(r, metric), {seed})
      return {
        objective: metric,
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
