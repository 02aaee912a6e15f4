import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {loadAnyPlan} from '../../phases/engine-plan.js'
import {loadPlan} from '../../phases/plan.js'
import {checkEngineInputs} from '../../phases/lib/engine-inputs.js'
import {packageRoot} from '../../src/util/paths.js'
import {InputError} from '../../src/util/errors.js'

const memory = join(packageRoot, 'fixtures', 'memory_small.json')

function write(dir: string, name: string, value: unknown): string {
  const file = join(dir, name)
  writeFileSync(file, JSON.stringify(value))
  return file
}

const enginePlan = (edit: Record<string, unknown> = {}) => ({
  kt_plan: 2,
  name: 'engine-only',
  engine: 'kt:retrieval',
  data: {conversations: memory, split: 'conversations:0.5'},
  metric: 'recall@10',
  search: {optimizer: 'random', budget: 2},
  ...edit,
})

/** The one-line error of reading the plan and then checking its inputs as kt run does before writing anything. */
function errorOf(file: string): string {
  try {
    const any = loadAnyPlan(file)
    if (any.kind === 'engine') checkEngineInputs(any.loaded, 42, join(dirname(file), 'out'))
  } catch (error) {
    expect(error).toBeInstanceOf(InputError)
    expect((error as Error).message).not.toContain('\n')
    return (error as Error).message
  }
  throw new Error('no error')
}

describe('plans of format 2 name one engine', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kt-engine-plan-'))

  it('an engine-only plan needs no importance section and takes the defaults it leaves out', () => {
    const any = loadAnyPlan(write(dir, 'p.json', enginePlan()))
    expect(any.kind).toBe('engine')
    if (any.kind !== 'engine') return
    expect(any.loaded.plan.acceptance).toEqual({against: 'defaults'})
    expect(any.loaded.plan.bootstrap).toEqual({resamples: 1000, confidence: 0.95})
    expect(any.loaded.plan.search).toEqual({optimizer: 'random', budget: 2})
  })

  it('a kt_plan 1 file is read as before, with one line saying how; the default plan without it', () => {
    const v1 = JSON.parse(readFileSync(join(packageRoot, 'phases', 'plan.default.json'), 'utf8'))
    const any = loadAnyPlan(write(dir, 'v1.json', v1))
    expect(any.kind).toBe('importance')
    if (any.kind !== 'importance') return
    expect(any.note).toMatch(
      /v1\.json is a kt_plan 1 plan: read as kt:importance and kt:retrieval \(its retrieval section\)/,
    )
    expect(any.loaded.plan).toEqual(loadPlan(join(dir, 'v1.json')).plan)
    const def = loadAnyPlan()
    expect(def.kind === 'importance' && def.note).toBeUndefined()
  })

  it('kt:importance in format 2 is the format-1 plan its importance section spells out', () => {
    const v1 = JSON.parse(readFileSync(join(packageRoot, 'phases', 'plan.default.json'), 'utf8'))
    const {kt_plan: _v, name, description, ...importance} = v1
    importance.datasets = {
      tune: join(packageRoot, 'fixtures', 'realistic_100.json'),
      holdout: [join(packageRoot, 'fixtures', 'uniform_50.json')],
      imported: [],
    }
    const any = loadAnyPlan(
      write(dir, 'imp.json', {kt_plan: 2, name, description, engine: 'kt:importance', importance}),
    )
    expect(any.kind).toBe('importance')
    if (any.kind === 'importance') expect(any.loaded.plan.baseline).toEqual(v1.baseline)
    expect(errorOf(write(dir, 'imp2.json', {kt_plan: 2, name, engine: 'kt:importance'}))).toMatch(
      /imp2\.json: importance: expected the importance study's fields/,
    )
  })

  it('refuses held-out conversations that are also tuned on, naming the file and field', () => {
    const file = write(
      dir,
      'overlap.json',
      enginePlan({data: {conversations: memory, split: {train: ['synth-7-1'], holdout: ['synth-7-2', 'synth-7-1']}}}),
    )
    expect(errorOf(file)).toMatch(
      /overlap\.json: data\.split\.holdout\[1\]: expected a conversation not also tuned on \(validating on tuning data proves nothing\), got "synth-7-1"/,
    )
  })

  it("refuses sections that are not the engine's", () => {
    expect(errorOf(write(dir, 'imp3.json', enginePlan({importance: {}})))).toMatch(
      /imp3\.json: importance: expected no importance section for engine kt:retrieval/,
    )
    expect(errorOf(write(dir, 'nodata.json', enginePlan({data: undefined})))).toMatch(
      /nodata\.json: data: expected a data section/,
    )
    expect(
      errorOf(write(dir, 'both.json', enginePlan({acceptance: {against: 'defaults', margin: 0.01, gain: 0.01}}))),
    ).toMatch(/both\.json: acceptance: expected a margin or a gain, not both/)
  })

  it('takes a command engine without data, and refuses data or a metric the engine does not report', () => {
    const engine = join(packageRoot, 'examples', 'python-engine', 'engine.json')
    const command = (edit: Record<string, unknown>) => enginePlan({engine, data: undefined, metric: 'mrr', ...edit})
    const ok = loadAnyPlan(write(dir, 'command.json', command({})))
    expect(ok.kind === 'engine' && checkEngineInputs(ok.loaded, 42, dir).questions).toBeUndefined()
    expect(
      errorOf(write(dir, 'cdata.json', command({data: {conversations: memory, split: 'conversations:0.5'}}))),
    ).toMatch(
      /cdata\.json: data: expected no data section for .*engine\.json \(a command or http engine evaluates on its own data\)/,
    )
    expect(errorOf(write(dir, 'cmetric.json', command({metric: 'recall@10'})))).toMatch(
      /cmetric\.json: metric: expected a metric .*engine\.json reports among its objectives \(mrr, p99_ms\), got recall@10/,
    )
  })

  it('the kt_plan 1 checks still apply to a format-1 file', () => {
    const v1 = JSON.parse(readFileSync(join(packageRoot, 'phases', 'plan.default.json'), 'utf8'))
    const tune = join(packageRoot, 'fixtures', 'realistic_100.json')
    v1.datasets = {tune, holdout: [tune], imported: []}
    expect(errorOf(write(dir, 'same.json', v1))).toMatch(
      /same\.json: datasets\.holdout\[0\]: expected a dataset other than the tuning set/,
    )
  })

  it('the committed engine-only plans parse: the Python example and kt:retrieval on LoCoMo', () => {
    for (const file of [
      join(packageRoot, 'examples', 'python-engine', 'plan.json'),
      join(packageRoot, 'phases', 'plan.locomo-retrieval.json'),
    ])
      expect(loadAnyPlan(file).kind, file).toBe('engine')
  })
})
