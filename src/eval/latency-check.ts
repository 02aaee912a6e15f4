/**
 * The cost model's error on the front: kt's in-process retrieval engine reports P99 from a
 * deterministic cost model (src/engine/retrieval/cost.ts) so fronts and profiles repeat exactly;
 * this measures the front's configurations on the clock (warm, repeated) and states the model's
 * error beside them. Timings only: they go to timing sections and measured_ fields, never into
 * what the optimiser or the profiles read.
 */
import {loadavg} from 'node:os'
import type {StudyAnalysis} from './retrieval-analysis.js'
import type {LatencyCheck} from './retrieval-objective.js'
import type {Objective} from '../search/types.js'
import {quantile} from '../stats/summary.js'

export interface FrontLatencyReport {
  readonly note: string
  readonly points: Array<LatencyCheck & {readonly trial: number}>
  /** Median over the front of |model - measured| / measured. */
  readonly median_abs_error_p50: number
  readonly median_abs_error_p99: number
  /** 1-minute load average before and after: a loaded machine inflates measured tails. */
  readonly load: {readonly before: number; readonly after: number}
}

/** An objective that can check its cost model against the clock (kt's retrieval objective). */
function canCheckLatency(
  objective: Objective,
): objective is Objective & {checkLatency(config: Record<string, unknown>): LatencyCheck} {
  return typeof (objective as {checkLatency?: unknown}).checkLatency === 'function'
}

export function checkFrontLatency(analysis: StudyAnalysis, objective: Objective): FrontLatencyReport | undefined {
  if (!canCheckLatency(objective) || analysis.front.front.length === 0) return undefined
  const before = loadavg()[0]
  const points = [...analysis.front.front]
    .sort((a, b) => a.trialId - b.trialId)
    .map((p) => ({trial: p.trialId, ...objective.checkLatency(p.config)}))
  const after = loadavg()[0]
  return {
    note: 'p99_ms on the front is the cost model (counted work per query, deterministic); measured = the same configurations on the clock, warm (one untimed pass) and repeated, on every query',
    points,
    median_abs_error_p50: quantile(
      points.map((p) => Math.abs(p.error_p50)),
      0.5,
    ),
    median_abs_error_p99: quantile(
      points.map((p) => Math.abs(p.error_p99)),
      0.5,
    ),
    load: {before, after},
  }
}

function pct(x: number): string {
  return `${x >= 0 ? '+' : ''}${(100 * x).toFixed(0)}%`
}

export function latencyCheckLines(r: FrontLatencyReport): string[] {
  const lines = [`latency: ${r.note} (load average ${r.load.before.toFixed(2)} -> ${r.load.after.toFixed(2)}):`]
  for (const p of r.points)
    lines.push(
      `  #${p.trial}: P99 model ${p.model_p99_ms.toFixed(3)} ms, measured ${p.measured_p99_ms.toFixed(3)} ms (model error ${pct(p.error_p99)}); P50 model ${p.model_p50_ms.toFixed(3)}, measured ${p.measured_p50_ms.toFixed(3)} ms (${pct(p.error_p50)}); ${p.timings} timings`,
    )
  lines.push(
    `  median |model error| over the front: P50 ${(100 * r.median_abs_error_p50).toFixed(0)}%, P99 ${(100 * r.median_abs_error_p99).toFixed(0)}%`,
  )
  return lines
}
