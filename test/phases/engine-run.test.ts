import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {runStudy} from '../../phases/runner.js'
import {runVerdict} from '../../src/cli/study.js'
import {InputError} from '../../src/util/errors.js'
import {MEMORY_FIXTURE, writeRetrievalPlan} from '../helpers/engine-plan.js'

const memory = MEMORY_FIXTURE
const dir = mkdtempSync(join(tmpdir(), 'kt-engine-run-'))
const plan = (name: string, edit: Record<string, unknown> = {}) => writeRetrievalPlan(dir, name, edit)

/** The report without its timing (the one part that differs between identical runs). */
const untimed = (file: string) => {
  const {timing: _t, content_sha256: _c, ...rest} = JSON.parse(readFileSync(file, 'utf8'))
  return rest
}

describe('a format-2 plan runs one phase, resumes and checks seeds as a kt_plan 1 plan does', () => {
  it('kt phase 3 runs the search it reads and the ablation, nothing else: its verdict is n/a', async () => {
    const {report} = await runStudy({
      planFile: plan('one.json'),
      seed: 42,
      outDir: join(dir, 'one'),
      phases: ['ablation'],
    })
    expect(report.run.phases_requested).toEqual(['ablation'])
    expect(report.run.phases_run).toEqual(['ablation', 'search'])
    expect(Object.keys(report.phases)).toEqual([])
    expect(report.engine!.ablation!.changes.length).toBeGreaterThanOrEqual(0)
    expect(report.engine!.search!.trials!.length).toBeGreaterThan(0)
    expect(report.engine!.validation).toBeUndefined()
    expect(report.engine!.deploy).toBeUndefined()
    expect(runVerdict(report)).toMatchObject({verdict: 'n/a', exitCode: 0})
    const md = readFileSync(join(dir, 'one', 'report.md'), 'utf8')
    expect(md).toContain('## Phase 3: ablation of retrieval')
    expect(md).not.toContain('## Phase 5')
  }, 120_000)

  it('--resume reuses the finished phases of an interrupted run (keyed by the inputs) and writes the same report', async () => {
    const file = plan('resume.json')
    const out = join(dir, 'resume')
    // an interrupted run: only the search and the ablation finished
    await runStudy({planFile: file, seed: 42, outDir: out, phases: ['ablation']})
    const resumed = await runStudy({planFile: file, seed: 42, outDir: out, resume: true})
    expect(resumed.reused).toEqual(['search', 'ablation'])
    expect(resumed.notReused.map((n) => n.phase)).toEqual([
      'properties',
      'synthetic',
      'validation',
      'deploy',
      'visualize',
    ])
    const fresh = await runStudy({planFile: file, seed: 42, outDir: join(dir, 'fresh')})
    expect(untimed(join(out, 'report.json'))).toEqual(untimed(join(dir, 'fresh', 'report.json')))
    expect(fresh.report.engine!.validation).toEqual(resumed.report.engine!.validation)
    // all seven reused; a changed plan invalidates them, saying why
    expect((await runStudy({planFile: file, seed: 42, outDir: out, resume: true})).reused).toHaveLength(7)
    writeFileSync(file, JSON.stringify({...JSON.parse(readFileSync(file, 'utf8')), description: 'changed'}))
    const changed = await runStudy({planFile: file, seed: 42, outDir: out, resume: true, phases: ['search']})
    expect(changed.reused).toEqual([])
    expect(changed.notReused[0].reason).toMatch(/^the inputs changed since its checkpoint: plan .*resume\.json changed/)
  }, 300_000)

  it("--seeds re-runs the search and the tuned profile's validation per seed: the spread and whether the verdict holds", async () => {
    const {report} = await runStudy({
      planFile: plan('seeds.json'),
      seed: 42,
      outDir: join(dir, 'seeds'),
      checkSeeds: [1, 42],
    })
    const s = report.seeds!
    expect(s.seeds).toEqual([1, 42])
    expect(s.run_verdict).toBe(report.engine!.validation!.verdict)
    expect(s.per_seed.find((p) => p.seed === 42)!.verdict).toBe(s.run_verdict)
    expect(s.verdict_held).toBe(s.per_seed.filter((p) => p.verdict === s.run_verdict).length)
    expect(Object.keys(s.spread)).toContain('bm25.k1')
    for (const v of Object.values(s.spread)) expect(v.range).toBeCloseTo(v.max - v.min, 12)
    expect(existsSync(join(dir, 'seeds', '.seeds'))).toBe(false)
    expect(readFileSync(join(dir, 'seeds', 'report.md'), 'utf8')).toContain('re-run for seeds 1, 42')
  }, 300_000)
})

describe('the data of a format-2 plan: one file with a split, or tuning and held-out files', () => {
  const [a, b] = JSON.parse(readFileSync(memory, 'utf8'))
  const tune = join(dir, 'tune.json')
  const hold = join(dir, 'hold.json')
  writeFileSync(tune, JSON.stringify([a]))
  writeFileSync(hold, JSON.stringify([b]))

  it('tunes on the tuning file and validates on the held-out one', async () => {
    const {report} = await runStudy({
      planFile: plan('two.json', {data: {tuning: 'tune.json', holdout: 'hold.json'}}),
      seed: 42,
      outDir: join(dir, 'two'),
      phases: ['validation'],
    })
    const e = report.engine!
    expect(e.data).toBe('tune.json + hold.json')
    expect(e.validation!.split).toBe(
      `tuning on 1 conversation(s) (${a.sample_id}), held out 1 (${b.sample_id}); explicit ids`,
    )
    // the same held-out questions as the one-file plan whose split holds out the same conversation
    const one = await runStudy({
      planFile: plan('ids.json', {
        data: {conversations: memory, split: {train: [a.sample_id], holdout: [b.sample_id]}},
      }),
      seed: 42,
      outDir: join(dir, 'ids'),
      phases: ['validation'],
    })
    expect(e.validation!.tuned.queries).toBe(one.report.engine!.validation!.tuned.queries)
    expect(e.validation!.minimal).toEqual(one.report.engine!.validation!.minimal)
  }, 300_000)

  it('refuses held-out data that overlaps the tuning data: one line naming the file and field, nothing written', async () => {
    const renamed = join(dir, 'renamed.json')
    writeFileSync(renamed, JSON.stringify([{...a, sample_id: 'other-id'}]))
    const sameId = join(dir, 'same-id.json')
    writeFileSync(sameId, JSON.stringify([{...b, sample_id: a.sample_id}]))
    for (const [holdout, message] of [
      ['tune.json', /two-bad\.json: data\.holdout: expected a file other than data\.tuning/],
      [
        'renamed.json',
        /data\.holdout: expected conversations not also in data\.tuning \(held-out "other-id" is tuning conversation/,
      ],
      ['same-id.json', /data\.holdout: expected conversations not also in data\.tuning/],
    ] as const) {
      const out = join(dir, `bad-${holdout}`)
      const run = runStudy({
        planFile: plan('two-bad.json', {data: {tuning: 'tune.json', holdout}}),
        seed: 42,
        outDir: out,
      })
      await expect(run).rejects.toThrow(InputError)
      await expect(run).rejects.toThrow(message)
      await run.catch((e: Error) => expect(e.message).not.toContain('\n'))
      expect(existsSync(out)).toBe(false)
    }
  })
})
