import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {estimatedLatencyMs} from '../../src/engine/retrieval/cost.js'
import {analyzeStudy} from '../../src/eval/retrieval-analysis.js'
import {createObjective} from '../../src/eval/retrieval-objective.js'
import {splitTimingMetrics, TIMING_METRIC_PREFIX} from '../../src/search/types.js'
import type {TrialRow} from '../../src/study/model.js'
import {runSearch} from '../../src/study/search.js'

const data = fileURLToPath(new URL('./fixtures/mini-memory.jsonl', import.meta.url))

/** What must repeat: everything but the timings (durations, start times, measured_* metrics). */
function repeatable(t: TrialRow): unknown {
  return {
    id: t.id,
    configId: t.configId,
    config: t.config,
    budget: t.budget,
    continues: t.continues,
    info: t.info,
    status: t.status,
    loss: t.loss,
    values: t.values,
    metrics: t.metrics && splitTimingMetrics(t.metrics).deterministic,
  }
}

describe('the retrieval objective is deterministic', () => {
  it('reports the cost-model P99 as the latency value and keeps the measured timings apart', async () => {
    const objective = await createObjective({data})
    const ctx = {trialId: 0, configId: 'a', seed: 0}
    const first = await objective.evaluate({}, 9, ctx)
    const second = await objective.evaluate({}, 9, ctx)
    expect(second.values).toEqual(first.values)
    const {deterministic, timings} = splitTimingMetrics(first.metrics!)
    expect(splitTimingMetrics(second.metrics!).deterministic).toEqual(deterministic)
    expect(Object.keys(timings).sort()).toEqual([`${TIMING_METRIC_PREFIX}p50_ms`, `${TIMING_METRIC_PREFIX}p99_ms`])
    // The estimate is the cost model applied to the counted work (a monotone map, so P99s correspond).
    expect(deterministic.p99_ms).toBeCloseTo(estimatedLatencyMs(deterministic.work_p99), 12)
    expect(first.values![1]).toBe(deterministic.p99_ms)
  })

  it('two BOHB studies with the same seed give the same trials, losses, values, front and profiles', async () => {
    const run = () =>
      runSearch({
        storage: ':memory:',
        objective: {name: 'retrieval', options: {data}},
        optimizer: 'bohb',
        seed: 1,
        maxBudget: 6,
      })
    const a = await run()
    const b = await run()
    expect(a.trials.length).toBeGreaterThan(10)
    // Several budgets: BOHB promoted configurations by their (quality, latency) Pareto rank.
    expect(new Set(a.trials.map((t) => t.budget)).size).toBeGreaterThan(1)
    expect(b.trials.map(repeatable)).toEqual(a.trials.map(repeatable))
    expect(analyzeStudy(b.trials)).toEqual(analyzeStudy(a.trials))
  })
})
