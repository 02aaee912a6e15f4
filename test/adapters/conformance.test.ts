import {readFileSync} from 'node:fs'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {loadEngineFile, parseEngineFile} from '../../src/adapters/file.js'
import {runConformance, type ConformanceReport} from '../../src/adapters/conformance.js'
import {boundConfigs} from '../../src/adapters/conformance-configs.js'
import {loadMemoryDataset} from '../../src/data/conversations/index.js'
import {packageRoot} from '../../src/util/paths.js'
import {InputError} from '../../src/util/errors.js'
import {ktRetrievalService} from '../../src/adapters/kt-retrieval.js'
import {engineConformance} from '../../phases/lib/engine-phases.js'

const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), 'fixtures')
const DATA = loadMemoryDataset(join(packageRoot, 'fixtures/memory_small.json'))

async function suite(name: string): Promise<ConformanceReport> {
  return runConformance(loadEngineFile(join(FIXTURES, `${name}.json`)), {seed: 42, dataset: DATA})
}

function check(r: ConformanceReport, id: string) {
  const c = r.checks.find((x) => x.id === id)
  if (!c) throw new Error(`no check ${id} in ${r.checks.map((x) => x.id).join(', ')}`)
  return c
}

describe('conformance suite (phase 1 for any engine)', () => {
  it('passes a service without bugs: every check, the declared recall@k property included', async () => {
    const r = await suite('toy-good')
    expect(r.checks.map((c) => [c.id, c.violations])).toEqual([
      ['ingested-ids-once', 0],
      ['k-respected', 0],
      ['same-config-same-ranking', 0],
      ['odd-queries-answered', 0],
      ['reset-isolates', 0],
      ['parameters-at-bounds', 0],
      ['declared:recall-monotone-in-k', 0],
    ])
    expect(r.passed).toBe(true)
    // 3 parameters: a float and an int at low and high, two choices
    expect(check(r, 'parameters-at-bounds').cases).toBe(6)
  }, 60_000)

  it('names the planted duplicate id (one query in fifty) with a shrunk counterexample', async () => {
    const r = await suite('toy-duplicate')
    expect(r.passed).toBe(false)
    const c = check(r, 'ingested-ids-once')
    expect(c.violations).toBeGreaterThan(0)
    expect(c.violations).toBeLessThan(c.cases / 10)
    // shrunk: a short query at the smallest k that can hold a duplicate
    expect(c.counterexample).toMatch(
      /^\{"conversation":"synth-7-\d","words":\[[^\]]*\],"k":2\}: .*returned turn id "[^"]+" twice$/,
    )
    expect(check(r, 'reset-isolates').violations).toBe(0)
  }, 60_000)

  it('names the planted leak across /reset with a shrunk counterexample', async () => {
    const r = await suite('toy-leak')
    expect(r.passed).toBe(false)
    const c = check(r, 'reset-isolates')
    expect(c.violations).toBe(c.cases)
    expect(c.counterexample).toBe(
      '{"a":0,"b":0,"turns":1,"pick":0}: search of kt-conformance-1 returned "a:D1:1" (ingested before /reset)',
    )
    expect(check(r, 'ingested-ids-once').violations).toBe(0)
  }, 60_000)

  it('checks a command engine: determinism, parameters at bounds (naming the failing corner), declared properties', async () => {
    const spec = loadEngineFile(join(FIXTURES, 'engine.json'))
    const r = await runConformance(spec, {seed: 7})
    expect(check(r, 'same-config-same-loss').violations).toBe(0)
    const bounds = check(r, 'parameters-at-bounds')
    // x low/high and the four modes: crash, garbage and nometric fail; enumerated, each named by itself
    expect(bounds.cases).toBe(6)
    expect(bounds.violations).toBe(3)
    expect(bounds.counterexample).toBe('mode=crash: exit status 3')
    // the engine's score is x x budget: declared non-decreasing in x it holds, non-increasing it does not
    const file = JSON.parse(readFileSync(join(FIXTURES, 'engine.json'), 'utf8'))
    file.parameters[1].choices = ['ok']
    file.properties = [
      {id: 'score-up-in-x', metric: 'score', over: 'x', direction: 'non-decreasing'},
      {id: 'score-down-in-x', metric: 'score', over: 'x', direction: 'non-increasing'},
    ]
    const declared = await runConformance(parseEngineFile(file, join(FIXTURES, 'engine.json')), {seed: 7})
    expect(check(declared, 'declared:score-up-in-x').violations).toBe(0)
    const down = check(declared, 'declared:score-down-in-x')
    expect(down.violations).toBeGreaterThan(0)
    expect(down.counterexample).toMatch(/^\[\{"x":.*\]: score .* -> .*, not non-increasing for x /)
  }, 120_000)

  it("checks kt's built-in retrieval engine by the same service checks, in process", async () => {
    const r = await runConformance(ktRetrievalService(), {seed: 42, dataset: DATA})
    expect(r.kind).toBe('retrieval-service')
    expect(r.checks.map((c) => [c.id, c.violations, c.counterexample])).toEqual(
      [
        'ingested-ids-once',
        'k-respected',
        'same-config-same-ranking',
        'odd-queries-answered',
        'reset-isolates',
        'parameters-at-bounds',
        'declared:recall-monotone-in-k',
      ].map((id) => [id, 0, null]),
    )
    expect(check(r, 'parameters-at-bounds').cases).toBeGreaterThan(40)
  }, 120_000)

  it('puts each parameter alone at its bounds, a conditional one with its parent active, simplex members at their corners', () => {
    const spec = loadEngineFile(join(packageRoot, 'examples/python-engine/engine.service.json'))
    const labels = boundConfigs(spec.space).map((b) => b.label)
    expect(labels).toContain('recency.window_days=60')
    expect(labels).toContain('fusion: w.bm25=0.95')
    const window = boundConfigs(spec.space).find((b) => b.label === 'recency.window_days=1')!
    expect(window.config['recency.kind']).toBe('step')
  })
})

describe('declared properties in the engine file', () => {
  const base = JSON.parse(JSON.stringify(loadEngineFile(join(FIXTURES, 'toy-good.json')).parameters))
  const file = (properties: unknown[], evaluate?: unknown) => ({
    kt_engine: 1,
    name: 'e',
    parameters: base,
    evaluate: evaluate ?? {kind: 'retrieval-service', transport: 'stdio', command: ['python3', 'x.py']},
    objectives: [{metric: 'recall@10', direction: 'maximize'}],
    properties,
  })
  const errorOf = (value: unknown): string => {
    try {
      parseEngineFile(value, 'eng.json')
    } catch (error) {
      expect(error).toBeInstanceOf(InputError)
      expect((error as Error).message).not.toContain('\n')
      return (error as Error).message
    }
    throw new Error('no error')
  }

  it('refuses a metric the engine never reports, in one line naming the file and the field', () => {
    expect(errorOf(file([{id: 'p', metric: 'precision@10', over: 'boost', direction: 'non-decreasing'}]))).toMatch(
      /^eng\.json: properties\[0\]\.metric: expected a metric the engine reports \(recall@1, .*\), got "precision@10"/,
    )
    expect(errorOf(file([{id: 'p', metric: 'ndcg@k', over: 'k', direction: 'non-decreasing'}]))).toMatch(
      /^eng\.json: properties\[0\]\.metric: expected a template NAME@k/,
    )
    const command = {kind: 'command', command: ['python3', 'x.py']}
    expect(errorOf(file([{id: 'p', metric: 'p99_ms', over: 'boost', direction: 'non-decreasing'}], command))).toMatch(
      /^eng\.json: properties\[0\]\.metric: expected a metric the engine reports \(recall@10\), got "p99_ms"/,
    )
    expect(errorOf(file([{id: 'p', metric: 'recall@10', over: 'mode', direction: 'non-decreasing'}]))).toMatch(
      /^eng\.json: properties\[0\]\.over: expected "k" or the name of a float or int parameter/,
    )
  })

  it('accepts a reported metric and keeps the properties and the determinism flag', () => {
    const spec = parseEngineFile(
      {
        ...file([{id: 'p', metric: 'recall@10', over: 'depth', direction: 'non-decreasing'}]),
        deterministic: false,
      },
      'eng.json',
    )
    expect(spec.properties).toHaveLength(1)
    expect(spec.deterministic).toBe(false)
  })
})

describe('planted bugs of a command engine, named by phase 1', () => {
  const path = join(FIXTURES, 'toy-command.json')
  const phase1 = (bug?: string) => {
    const file = JSON.parse(readFileSync(path, 'utf8'))
    if (bug) file.evaluate.env = {TOY_BUG: bug}
    const input = {data: '', dataLabel: '', seed: 42, progress: () => {}}
    return engineConformance(parseEngineFile(file, path), input)
  }

  it('passes the engine without a bug: determinism, every tier answered, bounds, the declared property', async () => {
    const r = await phase1()
    expect(r.checks.map((c) => [c.id, c.violations])).toEqual([
      ['same-config-same-loss', 0],
      ['configurations-answered', 0],
      ['parameters-at-bounds', 0],
      ['declared:score-up-in-x', 0],
    ])
    expect(r.passed).toBe(true)
  }, 120_000)

  it('names nondeterministic output with a shrunk counterexample', async () => {
    const r = await phase1('nondeterministic')
    expect(r.passed).toBe(false)
    const c = r.checks.find((x) => x.id === 'same-config-same-loss')!
    expect(c.violations).toBe(c.cases)
    expect(c.counterexample).toMatch(/^\{"x":[^}]+\}: score [\d.]+ then [\d.]+$/)
  }, 120_000)

  it('names a parameter refused at its bound, and bad output on part of the table', async () => {
    const high = await phase1('high-rejected')
    const bounds = high.checks.find((x) => x.id === 'parameters-at-bounds')!
    expect([bounds.violations, bounds.counterexample]).toEqual([1, 'x=1: exit status 2'])
    const bad = await phase1('no-score')
    const answered = bad.checks.find((x) => x.id === 'configurations-answered')!
    expect(answered.violations).toBeGreaterThan(0)
    expect(answered.counterexample).toMatch(
      /^\[\{"x":0\.5\d*\},\d\]: the metrics have no "score" \(objective\); got other$/,
    )
  }, 120_000)
})
