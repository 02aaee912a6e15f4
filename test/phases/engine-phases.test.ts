import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {runStudy} from '../../phases/runner.js'
import {runVerdict} from '../../src/cli/study.js'
import {packageRoot} from '../../src/util/paths.js'
import {InputError} from '../../src/util/errors.js'

const ENGINES = resolve(dirname(fileURLToPath(import.meta.url)), '../engines/fixtures')
const dir = mkdtempSync(join(tmpdir(), 'kt-engine-phases-'))

/** The python example's plan with its retrieval engine replaced by `engine` (absolute paths). */
function planFor(engine: string, name: string): string {
  const example = join(packageRoot, 'examples/python-engine/plan.json')
  const plan = JSON.parse(readFileSync(example, 'utf8'))
  const abs = (p: string) => resolve(dirname(example), p)
  plan.datasets = {tune: abs(plan.datasets.tune), holdout: plan.datasets.holdout.map(abs), imported: []}
  plan.retrieval = {...plan.retrieval, engine, data: abs(plan.retrieval.data)}
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
    const plan = join(packageRoot, 'examples/python-engine/plan.json')
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
