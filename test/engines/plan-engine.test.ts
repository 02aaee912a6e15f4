import {existsSync, mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, resolve} from 'node:path'
import {describe, expect, it} from 'vitest'
import {kt} from '../cli/helpers.js'

const ROOT = resolve(__dirname, '../..')

describe('kt run --plan examples/python-engine/plan.json (the Python engine through service.py, for real)', () => {
  it('runs the seven phases on the external engine: search with held-out data, profiles in its own variables, charts, report', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'kt-plan-engine-')), 'run')
    const r = kt(['run', '--plan', join(ROOT, 'examples/python-engine/plan.json'), '--out', out, '--json'])
    expect(r.status, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout).verdict).toBe('pass')
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'))
    expect(report.run.phases_run).toEqual(['properties', 'synthetic', 'ablation', 'search', 'validation', 'deploy', 'visualize'])
    const retrieval = report.phases.search.retrieval
    expect(retrieval.engine).toEqual({name: 'memengine-py-service', file: 'engine.service.json', latency: 'measured'})
    expect(retrieval.front.points.length).toBeGreaterThan(0)
    // tuned on one conversation of the fixture, every front point scored on the other
    expect(retrieval.holdout.split).toMatch(/tuning on 1 conversation.*held out 1/)
    for (const point of retrieval.front.points) {
      const row = retrieval.holdout.rows.find((h: {trial: number}) => h.trial === point.trial)
      expect(row.holdout.quality).toBeGreaterThanOrEqual(0)
      expect(row.tuning.quality).toBe(point.quality)
    }
    expect(retrieval.routed).toBeUndefined()
    // every profile against the engine's defaults on the held-out questions (the service's rankings, question by question)
    expect(retrieval.validation.queries).toBe(26)
    const defaultsRow = retrieval.holdout.rows.find((h: {trial: number}) => h.trial === -1)
    expect(retrieval.validation.defaults_quality).toBe(defaultsRow.holdout.quality)
    for (const v of retrieval.validation.profiles) {
      expect(v.quality).toBe(retrieval.holdout.rows.find((h: {trial: number}) => h.trial === v.trial).holdout.quality)
      expect(v.criteria[0]).toMatchObject({id: 'holdout-noninferior', metric: 'recall@10_delta_ci_low', threshold: -0.01})
      const profile = JSON.parse(readFileSync(join(out, 'profiles', `${v.name}.json`), 'utf8'))
      expect(profile.validation.verdict).toBe(v.verdict)
    }
    const names = report.phases.deploy.retrieval.domain.map((d: {name: string}) => d.name)
    expect(names).toEqual(['retrieval-best-quality', 'retrieval-high-throughput'])
    const env = readFileSync(join(out, 'profiles', 'retrieval-best-quality.env'), 'utf8')
    expect(env).toContain('MEMENGINE_W_BM25=')
    expect(env).not.toContain('KT_')
    expect(report.phases.visualize.charts.some((c: {id: string}) => c.id === 'retrieval-front')).toBe(true)
    expect(existsSync(join(out, 'charts', 'retrieval-front.png')) || report.phases.visualize.charts.some((c: {png: string}) => existsSync(join(out, c.png)))).toBe(true)
    const md = readFileSync(join(out, 'report.md'), 'utf8')
    expect(md).toContain('### Retrieval engine: memengine-py-service (external')
    expect(md).toMatch(/\| trial \| recall@10 \(tuning\) \| recall@10 \(held-out\) \|/)
  }, 120_000)
})
