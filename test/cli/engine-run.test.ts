import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {kt} from './helpers.js'
import {packageRoot} from '../../src/util/paths.js'
import {PHASE_NAMES} from '../../src/report/types.js'
import {MEMORY_FIXTURE, writeRetrievalPlan} from '../helpers/engine-plan.js'

const memory = MEMORY_FIXTURE
const plan = writeRetrievalPlan

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
    // phases 1, 2 and 7 for the engine: kt's built-in engine goes through the retrieval-service conformance
    // suite (in process), is scored on kt's synthetic conversations and charted in its own terms
    expect(Object.keys(report.phases)).toEqual(['properties', 'synthetic', 'visualize'])
    expect(report.phases.properties.passed).toBe(true)
    expect(report.phases.properties.conformance.kind).toBe('retrieval-service')
    expect(report.phases.properties.conformance.checks.map((c: {id: string}) => c.id)).toEqual(
      expect.arrayContaining([
        'ingested-ids-once',
        'k-respected',
        'same-config-same-ranking',
        'reset-isolates',
        'declared:recall-monotone-in-k',
      ]),
    )
    expect(report.phases.properties.conformance.checks.every((c: {violations: number}) => c.violations === 0)).toBe(
      true,
    )
    expect(report.phases.synthetic.engine.scored.questions).toBeGreaterThan(0)
    expect(report.phases.visualize.engine.importance.map((i: {objective: string}) => i.objective)).toEqual([
      'recall@10',
      'p99_ms',
    ])
    expect(report.phases.visualize.charts.map((c: {id: string}) => c.id)).toEqual(
      expect.arrayContaining(['retrieval-front', 'engine-slices', 'engine-ablation']),
    )
    expect(report.run.phases_run).toEqual([...PHASE_NAMES])
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
    // an ablation asked on a profile of another engine (the Python example's, against kt's retrieval engine)
    const pyProfile = join(dir, 'py-profile.json')
    writeFileSync(
      pyProfile,
      JSON.stringify({
        kt_profile: 1,
        kind: 'engine',
        name: 'py',
        space: 'engine:memengine-py-service',
        engine: {name: 'memengine-py-service', file: null, space_sha256: '0'.repeat(64)},
        config: {'bm25.k1': 1.5},
      }),
    )
    const ablateForeign = plan(dir, 'ablate-foreign.json', {ablation: {profile: 'py-profile.json'}})
    for (const [file, message] of [
      [overlap, /overlap\.json: data\.split\.holdout\[0\]: expected a conversation not also tuned on/],
      [foreign, /other\.json: space/],
      [ablateForeign, /py-profile\.json: /],
    ] as const) {
      const out = join(dir, `out-${file.split('/').pop()}`)
      const r = kt(['run', '--plan', file, '--out', out])
      expect(r.status, r.stderr).toBe(2)
      expect(r.stderr.trim().split('\n')).toHaveLength(1)
      expect(r.stderr).toMatch(message)
      expect(existsSync(out)).toBe(false)
    }
  }, 60_000)

  it('ablates the profile the plan names instead of the tuned one: here the fusion weights alone, one change', () => {
    const out = join(dir, 'out-ablate')
    const fusion = join(packageRoot, 'fixtures', 'profile-balanced-fusion.json')
    const r = kt(['run', '--plan', plan(dir, 'ablate.json', {ablation: {profile: fusion}}), '--out', out, '--json'])
    expect([0, 1]).toContain(r.status)
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'))
    expect(report.engine.tuned).toMatchObject({trial: null, tuning_quality: null})
    expect(report.engine.tuned.profile).toMatch(/profile-balanced-fusion\.json$/)
    expect(report.engine.ablation.changes.map((c: {parameter: string}) => c.parameter)).toEqual(['fusion'])
    expect(report.engine.ablation.changes[0].tuned).toEqual({
      'fusion.bm25': 0.4,
      'fusion.vector': 0.3,
      'fusion.graph': 0.3,
    })
  }, 120_000)
})
