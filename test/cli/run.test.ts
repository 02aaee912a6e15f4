import {describe, expect, it, beforeAll, vi, afterEach} from 'vitest'
import {mkdtempSync, readFileSync, existsSync, writeFileSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {kt, withoutTiming} from './helpers.js'
import {runStudy} from '../../phases/runner.js'

const dir = mkdtempSync(join(tmpdir(), 'kt-run-test-'))

describe('kt run', () => {
  let first: ReturnType<typeof kt>
  beforeAll(() => {
    first = kt(['run', '--seed', '42', '--out', join(dir, 'a'), '--json'])
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('runs all seven phases and writes report, charts and profiles', () => {
    expect(first.status, first.stderr).toBe(0)
    const summary = JSON.parse(first.stdout)
    expect(summary.phases_run).toEqual(['properties', 'synthetic', 'ablation', 'search', 'validation', 'deploy', 'visualize'])
    const report = JSON.parse(readFileSync(join(dir, 'a', 'report.json'), 'utf8'))
    expect(report.schema).toBe('kt.report')
    expect(report.phases.search.grid.points).toBe(1771)
    for (const c of report.phases.visualize.charts) {
      for (const f of [c.spec, c.svg, c.png]) expect(existsSync(join(dir, 'a', f)), f).toBe(true)
      expect(statSync(join(dir, 'a', c.png)).size).toBeGreaterThan(5000)
    }
    for (const f of ['optimum.env', 'optimum.sh', 'optimum.json', 'baseline.env', 'rollback.sh']) expect(existsSync(join(dir, 'a', 'profiles', f))).toBe(true)
    const md = readFileSync(join(dir, 'a', 'report.md'), 'utf8')
    expect(md).toContain('## Phase 7: charts')
    expect(md).toMatch(/\(absolute, spearman correlation\)/)
    expect(md).toMatch(/% \(relative\)/)
  })

  it('gives a byte-identical report.json for the same seed (timing aside)', () => {
    const again = kt(['run', '--seed', '42', '--out', join(dir, 'b'), '--json'])
    expect(again.status, again.stderr).toBe(0)
    const a = readFileSync(join(dir, 'a', 'report.json'), 'utf8')
    const b = readFileSync(join(dir, 'b', 'report.json'), 'utf8')
    expect(withoutTiming(b)).toBe(withoutTiming(a))
    expect(readFileSync(join(dir, 'b', 'profiles', 'optimum.env'), 'utf8')).toBe(readFileSync(join(dir, 'a', 'profiles', 'optimum.env'), 'utf8'))
  })

  it('gives the same report with the system clock a month ahead', async () => {
    vi.useFakeTimers({toFake: ['Date'], now: Date.now() + 31 * 24 * 3_600_000})
    const {report} = await runStudy({seed: 42, outDir: join(dir, 'c'), phases: ['properties', 'synthetic', 'ablation', 'search', 'validation', 'deploy']})
    vi.useRealTimers()
    const a = JSON.parse(withoutTiming(readFileSync(join(dir, 'a', 'report.json'), 'utf8')))
    const c = JSON.parse(JSON.stringify(report))
    delete c.timing
    delete a.phases.visualize
    delete a.content_sha256 // a checksum of the content, which here has one phase less
    a.run.phases_requested = c.run.phases_requested
    a.run.phases_run = c.run.phases_run
    expect(JSON.stringify(c, null, 2)).toBe(JSON.stringify(a, null, 2))
  })

  it('changes with the seed', () => {
    const other = kt(['phase', 'ablation', '--seed', '7', '--out', join(dir, 'd'), '--json'])
    expect(other.status, other.stderr).toBe(0)
    const a = JSON.parse(readFileSync(join(dir, 'a', 'report.json'), 'utf8'))
    const d = JSON.parse(readFileSync(join(dir, 'd', 'report.json'), 'utf8'))
    // same point estimates, different bootstrap intervals
    expect(d.phases.ablation.datasets[0].configs[0].spearman.estimate).toBe(a.phases.ablation.datasets[0].configs[0].spearman.estimate)
    expect(d.phases.ablation.datasets[0].configs[0].spearman.low).not.toBe(a.phases.ablation.datasets[0].configs[0].spearman.low)
  })

  it('re-renders report.md from report.json alone', () => {
    const r = kt(['report', join(dir, 'a'), '--stdout'])
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toBe(readFileSync(join(dir, 'a', 'report.md'), 'utf8'))
  })

  it('resumes: reuses finished phases from an interrupted run', () => {
    const r = kt(['phase', 'search', '--seed', '42', '--out', join(dir, 'a'), '--resume', '--json'])
    expect(r.status, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout).reused_phases).toEqual(['search'])
  })
})

describe('bad input', () => {
  const bad = (name: string, content: string) => {
    const file = join(dir, name)
    writeFileSync(file, content)
    return file
  }

  it('rejects malformed plan JSON with file and line, exit 2', () => {
    const r = kt(['run', '--plan', bad('broken.json', '{\n  "kt_plan": 1,\n  oops\n}'), '--out', join(dir, 'x')])
    expect(r.status).toBe(2)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(/broken\.json:3:\d+: expected valid JSON/)
  })

  it('names the field of a plan with non-summing weights', () => {
    const plan = JSON.parse(readFileSync(join(__dirname, '../../phases/plan.default.json'), 'utf8'))
    plan.baseline.decay = 0.5
    plan.datasets.tune = join(__dirname, '../../fixtures/realistic_100.json')
    const r = kt(['run', '--plan', bad('sum.json', JSON.stringify(plan)), '--out', join(dir, 'x')])
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/sum\.json: baseline: expected weights summing to 1/)
  })

  it('names the field of a NaN or negative weight and a missing field', () => {
    const plan = JSON.parse(readFileSync(join(__dirname, '../../phases/plan.default.json'), 'utf8'))
    plan.baseline.surprise = -0.3
    expect(kt(['run', '--plan', bad('neg.json', JSON.stringify(plan))]).stderr).toMatch(/neg\.json: baseline\.surprise: expected a number >= 0, got -0\.3/)
    delete plan.baseline.surprise
    expect(kt(['run', '--plan', bad('missing.json', JSON.stringify(plan))]).stderr).toMatch(/missing\.json: baseline\.surprise: expected number \(the field is missing\), got nothing/)
  })

  it('rejects a dataset with a NaN-like truth, naming the turn', () => {
    const ds = JSON.parse(readFileSync(join(__dirname, '../../fixtures/uniform_50.json'), 'utf8'))
    ds.turns[3].truth = 'NaN'
    const file = bad('nan-ds.json', JSON.stringify(ds))
    const plan = JSON.parse(readFileSync(join(__dirname, '../../phases/plan.default.json'), 'utf8'))
    plan.datasets = {tune: file, holdout: [], imported: []}
    const r = kt(['phase', '2', '--plan', bad('p.json', JSON.stringify(plan)), '--out', join(dir, 'y')])
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/nan-ds\.json: turns\[3\]\.truth: expected number, got "NaN"/)
  })

  it('rejects an unknown phase', () => {
    const r = kt(['phase', 'tuning'])
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/phase "tuning": expected a phase number 1-7 or a name/)
  })

  it('reports an unwritable output folder and leaves nothing half-written', () => {
    const blocker = bad('file-not-dir', 'x')
    const r = kt(['phase', '1', '--out', join(blocker, 'sub')])
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/file-not-dir\/sub: expected a writable folder/)
  })
})

// run b is a full run that no later test overwrites
describe('kt run: the retrieval study in Phase 4', () => {
  it('writes the front, the domain profiles and the routed profile, and Phase 6 exports them', () => {
    const report = JSON.parse(readFileSync(join(dir, 'b', 'report.json'), 'utf8'))
    const r = report.phases.search.retrieval
    expect(r.optimizer).toBe('bohb')
    expect(r.studies[0]).toBe('retrieval-all')
    expect(r.front.points.length).toBeGreaterThan(0)
    expect(r.front.hypervolume).toBeGreaterThan(0)
    expect(r.profiles.map((p: {name: string}) => p.name)).toEqual(['financial-compliance', 'high-throughput', 'coding-assistant'])
    const d = report.phases.deploy.retrieval
    for (const p of d.domain) for (const f of p.files) expect(existsSync(join(dir, 'b', f)), f).toBe(true)
    const routed = JSON.parse(readFileSync(join(dir, 'b', d.routed), 'utf8'))
    expect(Object.keys(routed.overrides).sort()).toEqual([...d.overridden_types].sort())
    expect(report.phases.visualize.charts.map((c: {id: string}) => c.id)).toContain('retrieval-front')
  })
})

describe('plans and deploys that would mislead', () => {
  const write = (name: string, value: unknown) => {
    const file = join(dir, name)
    writeFileSync(file, JSON.stringify(value))
    return file
  }
  const plan = () => {
    const p = JSON.parse(readFileSync(join(__dirname, '../../phases/plan.default.json'), 'utf8'))
    p.datasets.tune = join(__dirname, '../../fixtures/realistic_100.json')
    delete p.retrieval
    return p
  }

  it('refuses a plan that validates on the tuning set', () => {
    const p = plan()
    p.datasets.holdout = [p.datasets.tune]
    const r = kt(['phase', '5', '--plan', write('self.json', p), '--out', join(dir, 'self')])
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/self\.json: datasets\.holdout\[0\]: expected a dataset other than the tuning set/)
  })

  it('does not call a run without held-out data validated', () => {
    const p = plan()
    p.datasets.holdout = []
    const r = kt(['phase', '5', '--plan', write('none.json', p), '--out', join(dir, 'none'), '--json'])
    expect(r.status, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout).validation_passed).toBe(false)
    expect(readFileSync(join(dir, 'none', 'report.md'), 'utf8')).toMatch(/not validated/)
  })

  it('refuses to deploy a profile whose run failed validation, unless forced', () => {
    const profile = JSON.parse(readFileSync(join(dir, 'b', 'profiles', 'optimum.json'), 'utf8'))
    profile.metrics.validation_passed = 'false'
    const file = write('failed-profile.json', profile)
    const r = kt(['deploy', file, '--target', join(dir, 'dep')])
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/metrics\.validation_passed: expected a profile that passed its validation \(or --force\)/)
    expect(kt(['deploy', file, '--target', join(dir, 'dep'), '--force']).status).toBe(0)
  })

  it('keeps the optimum within the plan token-budget criterion on the tuning set', () => {
    const report = JSON.parse(readFileSync(join(dir, 'b', 'report.json'), 'utf8'))
    const s = report.phases.search
    expect(s.constraint.token_budget_max).toBeCloseTo(s.baseline.token_budget * 1.2, 9)
    expect(s.optimum.token_budget).toBeLessThan(s.constraint.token_budget_max)
  })
})

describe('output folders', () => {
  it('fails at once, in one line, on a folder that cannot be made (no hang on /proc)', () => {
    const r = kt(['phase', '1', '--out', '/proc/kt-cannot-exist'])
    expect(r.status).toBe(2)
    expect(r.stderr.trim()).toBe('kt: /proc/kt-cannot-exist: expected a writable folder, got ENOENT')
  })
})
