import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {kt} from './helpers.js'
import {packageRoot} from '../../src/util/paths.js'

const memory = join(packageRoot, 'fixtures', 'memory_small.json')

/** A format-2 plan for kt's retrieval engine on the committed memory fixture (in-process: no service to start). */
function plan(dir: string, name: string, edit: Record<string, unknown> = {}): string {
  const file = join(dir, name)
  writeFileSync(
    file,
    JSON.stringify({
      kt_plan: 2,
      name: 'kt-retrieval',
      engine: 'kt:retrieval',
      data: {conversations: memory, split: 'conversations:0.5'},
      metric: 'recall@10',
      search: {optimizer: 'random', budget: 2},
      acceptance: {against: 'defaults', margin: 0.05},
      bootstrap: {resamples: 200, confidence: 0.95},
      ...edit,
    }),
  )
  return file
}

describe('kt run --plan with an engine-only plan', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kt-engine-run-'))

  it("runs the engine's phases, prints its verdict and exits with it; the minimal profile goes through the profile checks", () => {
    const out = join(dir, 'out')
    const r = kt(['run', '--plan', plan(dir, 'p.json'), '--out', out, '--json'])
    const summary = JSON.parse(r.stdout)
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'))
    // the run's verdict is the engine's (the tuned profile under the plan's rule), and so is its exit code
    expect(summary.verdict).toBe(report.engine.validation.verdict)
    expect(r.status).toBe(report.engine.validation.verdict === 'pass' ? 0 : 1)
    expect(report.phases).toEqual({})
    expect(report.run.phases_run).toEqual(['ablation', 'search', 'validation', 'deploy'])
    expect(report.engine.engine).toEqual({ref: 'kt:retrieval', name: 'retrieval', latency: 'cost_model'})
    const v = report.engine.validation
    expect(v.tuned.queries).toBe(26)
    // per category: the categories' questions add up to all of them
    expect(v.tuned.categories.reduce((n: number, c: {queries: number}) => n + c.queries, 0)).toBe(26)
    expect(v.tuned.passed).toBe(v.tuned.delta.low >= -0.05)
    // the ablation's changes are the tuned profile's differences from the defaults; the fusion weights are one change
    const changes = report.engine.ablation.changes.map((c: {parameter: string}) => c.parameter)
    expect(changes.some((c: string) => c.startsWith('fusion.'))).toBe(false)
    for (const name of ['tuned', 'tuned-minimal']) {
      const profile = JSON.parse(readFileSync(join(out, 'profiles', `${name}.json`), 'utf8'))
      expect(profile.kind).toBe('retrieval')
      expect(profile.validation.criteria[0]).toMatchObject({id: 'holdout-acceptance', threshold: -0.05})
    }
    const minimal = JSON.parse(readFileSync(join(out, 'profiles', 'tuned-minimal.json'), 'utf8'))
    for (const [k, value] of Object.entries(minimal.config))
      if (
        !report.engine.ablation.minimal.changes.some(
          (c: string) => c === k || (c === 'fusion' && k.startsWith('fusion.')),
        )
      )
        expect(value, k).toEqual(report.engine.ablation.minimal.config[k])
    const md = readFileSync(join(out, 'report.md'), 'utf8')
    expect(md).toContain('## Phase 3: ablation of retrieval')
    expect(md).toContain('## Phase 5: validation of retrieval')
    expect(md).toContain(report.engine.ablation.headline)
    // kt report renders the same markdown from report.json alone
    expect(kt(['report', out, '--format', 'md']).status).toBe(0)
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toBe(md)
  }, 120_000)

  it('refuses, in one line and before writing anything, held-out ids also tuned on and a reference profile of another engine', () => {
    const overlap = plan(dir, 'overlap.json', {
      data: {conversations: memory, split: {train: ['synth-7-1'], holdout: ['synth-7-1']}},
    })
    const other = join(dir, 'other.json')
    writeFileSync(other, JSON.stringify({kt_profile: 1, kind: 'engine', name: 'x', space: 'engine:other', config: {}}))
    const foreign = plan(dir, 'foreign.json', {acceptance: {against: 'other.json'}})
    for (const [file, message] of [
      [overlap, /overlap\.json: data\.split\.holdout\[0\]: expected a conversation not also tuned on/],
      [foreign, /other\.json/],
    ] as const) {
      const out = join(dir, `out-${file.split('/').pop()}`)
      const r = kt(['run', '--plan', file, '--out', out])
      expect(r.status, r.stderr).toBe(2)
      expect(r.stderr.trim().split('\n')).toHaveLength(1)
      expect(r.stderr).toMatch(message)
      expect(existsSync(out)).toBe(false)
    }
  }, 60_000)
})
