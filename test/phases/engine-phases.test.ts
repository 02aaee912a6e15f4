import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {runStudy} from '../../phases/runner.js'
import {runVerdict} from '../../src/cli/study.js'
import {packageRoot} from '../../src/util/paths.js'
import {InputError} from '../../src/util/errors.js'
import {fastImportancePlan} from '../helpers/fast-plan.js'
import {latencyKindLabel} from '../../src/report/front-chart.js'

const ENGINES = resolve(dirname(fileURLToPath(import.meta.url)), '../adapters/fixtures')
const dir = mkdtempSync(join(tmpdir(), 'kt-engine-phases-'))

/** A format-1 plan at fast settings whose retrieval section tunes `engine` on kt's memory fixture (absolute paths). */
function planFor(engine: string, name: string): string {
  const plan = fastImportancePlan()
  plan.retrieval = {
    engine,
    data: join(packageRoot, 'fixtures', 'memory_small.json'),
    metric: 'recall@10',
    optimizer: 'bohb',
    budget: 4,
    split: 'conversations:0.5',
  }
  const file = join(dir, `${name}.plan.json`)
  writeFileSync(file, JSON.stringify(plan))
  return file
}

describe('phase 1 for the engine a plan names', () => {
  it("reports the engine's conformance checks, names the planted duplicate, and fails the run's verdict", async () => {
    const out = join(dir, 'dup')
    const {report} = await runStudy({
      planFile: planFor(join(ENGINES, 'toy-duplicate.json'), 'dup'),
      seed: 42,
      outDir: out,
      phases: ['properties'],
    })
    const c = report.phases.properties!.conformance!
    expect(c).toMatchObject({engine: 'toy-duplicate', kind: 'retrieval-service', passed: false})
    expect(c.file).not.toMatch(/^\//)
    const ids = c.checks.find((x) => x.id === 'ingested-ids-once')!
    expect(ids.violations).toBeGreaterThan(0)
    expect(ids.counterexample).toMatch(/returned turn id "[^"]+" twice/)
    expect(report.phases.properties!.passed).toBe(false)
    expect(runVerdict(report).reasons.join('; ')).toMatch(
      /engine toy-duplicate fails conformance checks: ingested-ids-once/,
    )
    const md = readFileSync(join(out, 'report.md'), 'utf8')
    expect(md).toContain('### Conformance of engine toy-duplicate')
    expect(md).toMatch(/\| Every id a search returns .* \| 200 \| [1-9]\d* \| `\{"conversation"/)
  }, 120_000)

  it('refuses an engine file whose declared property names a metric it never reports: one line, nothing written', async () => {
    const engine = JSON.parse(readFileSync(join(ENGINES, 'toy-good.json'), 'utf8'))
    engine.properties = [{id: 'p', metric: 'precision@10', over: 'boost', direction: 'non-decreasing'}]
    engine.evaluate.cwd = ENGINES
    const file = join(dir, 'bad-engine.json')
    writeFileSync(file, JSON.stringify(engine))
    const out = join(dir, 'bad-out')
    const run = runStudy({planFile: planFor(file, 'bad'), seed: 42, outDir: out, phases: ['properties']})
    await expect(run).rejects.toThrow(InputError)
    await expect(run).rejects.toThrow(/bad-engine\.json: properties\[0\]\.metric: expected a metric the engine reports/)
    expect(existsSync(out)).toBe(false)
  })
})

describe('phase 2 for the engine a plan names', () => {
  it("drives kt's synthetic conversations through the engine: planted facts found per category, fingerprints, the split's leakage audit", async () => {
    const out = join(dir, 'synth')
    const plan = planFor(join(packageRoot, 'examples', 'python-engine', 'engine.service.json'), 'synth')
    const {report} = await runStudy({planFile: plan, seed: 42, outDir: out, phases: ['synthetic']})
    const e = report.phases.synthetic!.engine!
    expect(e.engine).toBe('memengine-py-service')
    expect(e.generator).toMatchObject({kind: 'memory-synth', seed: 42})
    expect(e.regenerates_identically).toBe(true)
    expect(e.data.file).toBe('fixtures/memory_small.json')
    expect(e.data.sha256).toMatch(/^[0-9a-f]{64}$/)
    const s = e.scored!
    expect(s.questions).toBeGreaterThan(10)
    expect(s.found).toBeGreaterThan(0)
    expect(s.found).toBeLessThanOrEqual(s.questions)
    expect(s.by_category.reduce((n, c) => n + c.found, 0)).toBe(s.found)
    expect(s.by_category.reduce((n, c) => n + c.questions, 0)).toBe(s.questions)
    // the plan splits conversations:0.5 of two conversations: one tuned on, one held out
    expect(e.leakage).toMatchObject({tuning_conversations: 1, holdout_conversations: 1})
    const md = readFileSync(join(out, 'report.md'), 'utf8')
    expect(md).toContain('### Engine memengine-py-service on synthetic conversations with planted evidence')
    expect(md).toContain(`finds a planted evidence turn in its top 10 for ${s.found} of ${s.questions} questions`)
    // the same seed gives the same synthetic data and the same scores (the engine is deterministic)
    const again = await runStudy({planFile: plan, seed: 42, outDir: join(dir, 'synth2'), phases: ['synthetic']})
    expect(again.report.phases.synthetic!.engine).toEqual(e)
  }, 120_000)
})

describe('phase 7 for the engine a plan names', () => {
  it("charts the engine's own objectives and parameters from the run, labelled with the study's latency kind", async () => {
    const out = join(dir, 'charts')
    const plan = planFor(join(packageRoot, 'examples/python-engine/engine.service.json'), 'py')
    const {report} = await runStudy({planFile: plan, seed: 42, outDir: out, phases: ['visualize']})
    const v = report.phases.visualize!
    const trials = report.phases.search!.retrieval!.trials!
    expect(v.engine).toMatchObject({engine: 'memengine-py-service', latency: 'cost_model'})
    expect(v.engine!.latency_label).toBe("the engine's declared cost model")
    expect(v.engine!.importance.map((i) => i.objective)).toEqual(['recall@10', 'p99_ms'])
    for (const i of v.engine!.importance) expect(i.trials_used).toBe(trials.length)
    expect(v.charts.map((c) => c.id)).toEqual(
      expect.arrayContaining(['retrieval-front', 'engine-importance', 'engine-slices']),
    )
    // the chart's numbers are the run's
    const spec = JSON.parse(readFileSync(join(out, 'charts/engine-importance.vl.json'), 'utf8'))
    const charted = spec.data.values.filter((x: {objective: string}) => x.objective === 'recall@10')
    expect(charted.map((x: {parameter: string; importance: number}) => [x.parameter, x.importance])).toEqual(
      v.engine!.importance[0].params.map((p) => [p.param, p.importance]),
    )
    const slices = JSON.parse(readFileSync(join(out, 'charts/engine-slices.vl.json'), 'utf8'))
    const k1 = slices.data.values.filter((x: {parameter: string}) => x.parameter === 'bm25.k1')
    expect(k1.map((x: {value: number}) => x.value)).toEqual(trials.map((t) => t.config['bm25.k1']))
    const front = readFileSync(join(out, 'charts/retrieval-front.vl.json'), 'utf8')
    expect(front).toContain("P99 latency, ms (the engine's declared cost model)")
    expect(front).not.toContain('estimate')
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toMatch(
      /Engine memengine-py-service: P99 latency from the engine's declared cost model .*\n\n\| parameter \| recall@10 \(\d+ trials\) \| p99_ms \(\d+ trials\) \|/,
    )
  }, 300_000)

  it("names each latency kind as the study recorded it, never kt's estimate for an engine that measures", () => {
    expect(latencyKindLabel({engine: {name: 'e', file: 'e.json', latency: 'measured'}})).toBe(
      "kt's measurement (wall time per search)",
    )
    expect(latencyKindLabel({engine: {name: 'e', file: 'e.json', latency: 'cost_model'}})).toBe(
      "the engine's declared cost model",
    )
    expect(latencyKindLabel({})).toBe('estimated by the cost model')
  })
})

describe('phases 1, 2 and 7 of an engine-only plan (kt_plan 2)', () => {
  /** A kt_plan 2 plan for an engine file on the committed memory fixture. */
  function enginePlan(engine: string, name: string): string {
    const file = join(dir, `${name}.plan2.json`)
    writeFileSync(
      file,
      JSON.stringify({
        kt_plan: 2,
        name,
        engine,
        data: {conversations: join(packageRoot, 'fixtures/memory_small.json'), split: 'conversations:0.5'},
        metric: 'recall@10',
        search: {optimizer: 'bohb', budget: 4},
        acceptance: {against: 'defaults', margin: 0.05},
        bootstrap: {resamples: 200, confidence: 0.95},
      }),
    )
    return file
  }

  it("writes the engine's conformance, its synthetic scores and its own charts beside phases 3-6", async () => {
    const out = join(dir, 'plan2')
    const engine = join(packageRoot, 'examples/python-engine/engine.service.json')
    const {report} = await runStudy({planFile: enginePlan(engine, 'py'), seed: 42, outDir: out})
    expect(report.run.phases_run).toHaveLength(7)
    const {properties, synthetic, visualize} = report.phases
    expect(properties!.conformance).toMatchObject({engine: 'memengine-py-service', passed: true})
    expect(properties!.conformance!.file).not.toMatch(/^\//)
    expect(synthetic!.engine!.scored!.found).toBeGreaterThan(0)
    expect(visualize!.engine!.latency_label).toBe("the engine's declared cost model")
    const ids = visualize!.charts.map((c) => c.id)
    expect(ids).toEqual(expect.arrayContaining(['retrieval-front', 'engine-importance', 'engine-slices']))
    for (const c of visualize!.charts) expect(existsSync(join(out, c.png))).toBe(true)
    // the ablation chart's bars are phase 3's intervals
    if (ids.includes('engine-ablation')) {
      const spec = JSON.parse(readFileSync(join(out, 'charts/engine-ablation.vl.json'), 'utf8'))
      const first = report.engine!.ablation!.changes[0]
      expect(spec.data.values[0]).toMatchObject({change: first.parameter, value: first.reverted.value})
    }
    const md = readFileSync(join(out, 'report.md'), 'utf8')
    expect(md).toContain('### Conformance of engine memengine-py-service')
    expect(md).not.toContain('| property | cases | violations | shrunk counterexample |\n|---|---:|---:|---|\n\n')
  }, 300_000)

  it("fails the run's verdict when the engine does not conform, whatever its held-out verdict", async () => {
    const {report} = await runStudy({
      planFile: enginePlan(join(ENGINES, 'toy-leak.json'), 'leak'),
      seed: 42,
      outDir: join(dir, 'plan2-leak'),
    })
    const c = report.phases.properties!.conformance!
    expect(c.checks.find((x) => x.id === 'reset-isolates')!.counterexample).toMatch(/ingested before \/reset/)
    const verdict = runVerdict(report)
    expect(verdict.exitCode).toBe(1)
    expect(verdict.reasons[0]).toBe('engine toy-leak fails conformance checks: reset-isolates')
  }, 300_000)
})
