import {describe, expect, it, beforeAll, vi, afterEach} from 'vitest'
import {mkdtempSync, readFileSync, existsSync, writeFileSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {kt, withoutTiming} from './helpers.js'
import {runStudy} from '../../phases/runner.js'

const dir = mkdtempSync(join(tmpdir(), 'kt-run-test-'))
/** content_sha256 of the default plan's report at seed 42. */
const DEFAULT_PLAN_CONTENT_SHA256 = 'fe2ab08dbac609dfd8f48bea9292815f282fd85f269390cdf75bbc07ce3468b0'

describe('kt run', () => {
  let first: ReturnType<typeof kt>
  beforeAll(() => {
    first = kt(['run', '--seed', '42', '--out', join(dir, 'a'), '--json'])
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('runs all seven phases and writes report, charts and profiles', () => {
    // the default study's optimum fails its token-budget criterion on uniform_50: exit 1 for CI
    expect(first.status, first.stderr).toBe(1)
    const summary = JSON.parse(first.stdout)
    expect(summary).toMatchObject({verdict: 'fail', validation_passed: false, validation_verdict: 'fail'})
    expect(summary.verdict_reasons).toEqual(['validation failed: token-budget on uniform_50'])
    expect(summary.phases_run).toEqual([
      'properties',
      'synthetic',
      'ablation',
      'search',
      'validation',
      'deploy',
      'visualize',
    ])
    const report = JSON.parse(readFileSync(join(dir, 'a', 'report.json'), 'utf8'))
    expect(report.schema).toBe('kt.report')
    expect(report.phases.search.grid.points).toBe(1771)
    expect(report.run).toMatchObject({reproducible: true, reproducible_reason: null}) // no external engine measured on the clock
    for (const c of report.phases.visualize.charts) {
      for (const f of [c.spec, c.svg, c.png]) expect(existsSync(join(dir, 'a', f)), f).toBe(true)
      expect(statSync(join(dir, 'a', c.png)).size).toBeGreaterThan(5000)
    }
    for (const f of ['optimum.env', 'optimum.sh', 'optimum.json', 'baseline.env'])
      expect(existsSync(join(dir, 'a', 'profiles', f))).toBe(true)
    const md = readFileSync(join(dir, 'a', 'report.md'), 'utf8')
    expect(md).toContain('## Phase 7: charts')
    expect(md).toMatch(/\(absolute, spearman correlation\)/)
    expect(md).toMatch(/% \(relative\)/)
  })

  it('reproduces the importance study byte for byte from its own plan (a kt_plan 1 file, read without conversion)', () => {
    // the content hash of report.json (timing aside) as kt wrote it before plans of format 2 existed;
    // a change that moves it changes the importance study's numbers and must say so in CHANGELOG.md
    const report = JSON.parse(readFileSync(join(dir, 'a', 'report.json'), 'utf8'))
    expect(report.content_sha256).toBe(DEFAULT_PLAN_CONTENT_SHA256)
    // no note about the plan's format for kt's own default plan
    expect(first.stderr).not.toContain('kt_plan 1')
  })

  it('gives a byte-identical report.json for the same seed (timing aside)', () => {
    const again = kt(['run', '--seed', '42', '--out', join(dir, 'b'), '--json'])
    expect(again.status, again.stderr).toBe(1)
    const a = readFileSync(join(dir, 'a', 'report.json'), 'utf8')
    const b = readFileSync(join(dir, 'b', 'report.json'), 'utf8')
    expect(withoutTiming(b)).toBe(withoutTiming(a))
    expect(readFileSync(join(dir, 'b', 'profiles', 'optimum.env'), 'utf8')).toBe(
      readFileSync(join(dir, 'a', 'profiles', 'optimum.env'), 'utf8'),
    )
  })

  it('gives the same report with the system clock a month ahead', async () => {
    vi.useFakeTimers({toFake: ['Date'], now: Date.now() + 31 * 24 * 3_600_000})
    const {report} = await runStudy({
      seed: 42,
      outDir: join(dir, 'c'),
      phases: ['properties', 'synthetic', 'ablation', 'search', 'validation', 'deploy'],
    })
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
    expect(d.phases.ablation.datasets[0].configs[0].spearman.estimate).toBe(
      a.phases.ablation.datasets[0].configs[0].spearman.estimate,
    )
    expect(d.phases.ablation.datasets[0].configs[0].spearman.low).not.toBe(
      a.phases.ablation.datasets[0].configs[0].spearman.low,
    )
  })

  it('re-renders report.md from report.json alone', () => {
    const r = kt(['report', join(dir, 'a'), '--stdout'])
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toBe(readFileSync(join(dir, 'a', 'report.md'), 'utf8'))
  })

  it('resumes: reuses finished phases from an interrupted run', () => {
    const r = kt(['phase', 'search', '--seed', '42', '--out', join(dir, 'a'), '--resume', '--json'])
    expect(r.status, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout).verdict).toBe('n/a')
    expect(JSON.parse(r.stdout).reused_phases).toEqual(['search'])
  })

  it('never calls a partial run that did not validate a PASS: n/a, exit 0 when nothing that ran failed', () => {
    const r = kt(['phase', '3', '--out', join(dir, 'p3'), '--json'])
    expect(r.status, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({
      verdict: 'n/a',
      verdict_reasons: ['partial run: the validation (phase 5) did not run, so nothing was validated'],
      validation_verdict: null,
    })
    const text = kt(['phase', '3', '--out', join(dir, 'p3')])
    expect(text.stdout).toMatch(
      /verdict: N\/A \(partial run: the validation \(phase 5\) did not run, so nothing was validated\); exit 0/,
    )
    expect(text.stdout).not.toMatch(/PASS/)
    expect(readFileSync(join(dir, 'p3', 'report.md'), 'utf8')).toMatch(
      /- Verdict: \*\*n\/a\*\*: the validation \(phase 5\) did not run/,
    )
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
    expect(kt(['run', '--plan', bad('neg.json', JSON.stringify(plan))]).stderr).toMatch(
      /neg\.json: baseline\.surprise: expected a number >= 0, got -0\.3/,
    )
    delete plan.baseline.surprise
    expect(kt(['run', '--plan', bad('missing.json', JSON.stringify(plan))]).stderr).toMatch(
      /missing\.json: baseline\.surprise: expected number \(the field is missing\), got nothing/,
    )
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
    expect(r.profiles.map((p: {name: string}) => p.name)).toEqual([
      'financial-compliance',
      'high-throughput',
      'coding-assistant',
    ])
    const d = report.phases.deploy.retrieval
    for (const p of d.domain) for (const f of p.files) expect(existsSync(join(dir, 'b', f)), f).toBe(true)
    const routed = JSON.parse(readFileSync(join(dir, 'b', d.routed), 'utf8'))
    expect(Object.keys(routed.overrides).sort()).toEqual([...d.overridden_types].sort())
    // the default plan holds out half of the conversations: every retrieval profile has a verdict the gate reads
    expect(r.validation.split).toMatch(/held out 1 \(synth-7-\d\)/)
    for (const p of [...d.domain.map((x: {verdict: string}) => x.verdict), d.routed_verdict])
      expect(['pass', 'fail']).toContain(p)
    expect(routed.validation.criteria[0]).toMatchObject({
      id: 'holdout-noninferior',
      metric: 'recall@10_delta_ci_low',
      dataset: 'holdout',
    })
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

  it('does not call a run without held-out data validated, and exits 1', () => {
    const p = plan()
    p.datasets.holdout = []
    const r = kt(['phase', '5', '--plan', write('none.json', p), '--out', join(dir, 'none'), '--json'])
    expect(r.status, r.stderr).toBe(1)
    expect(JSON.parse(r.stdout)).toMatchObject({validation_passed: false, verdict: 'not-validated'})
    expect(readFileSync(join(dir, 'none', 'report.md'), 'utf8')).toMatch(/not validated/)
  })

  it('refuses to deploy a profile whose run failed validation (exit 1, one line), unless forced with a reason', () => {
    const file = join(dir, 'b', 'profiles', 'optimum.json')
    expect(JSON.parse(readFileSync(file, 'utf8')).validation).toMatchObject({verdict: 'fail', validation_passed: false})
    const r = kt(['deploy', file, '--target', join(dir, 'dep')])
    expect(r.status).toBe(1)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(
      /deploy refused: .*optimum\.json \(importance profile optimum\): its run failed validation: token-budget on uniform_50 \(token_budget_change_rel 0\.4343, needs < 0\.2\); to deploy it anyway: --force --reason "why"/,
    )
    expect(kt(['deploy', file, '--target', join(dir, 'dep'), '--force']).status).toBe(2)
    const forced = kt(['deploy', file, '--target', join(dir, 'dep'), '--force', '--reason', 'CI test', '--json'])
    expect(forced.status, forced.stderr).toBe(0)
    expect(JSON.parse(forced.stdout)).toMatchObject({forced: true, reason: 'CI test', verdict: 'fail'})
    const index = JSON.parse(readFileSync(join(dir, 'dep', 'index.json'), 'utf8'))
    expect(index.events.at(-1)).toMatchObject({action: 'deploy', forced: true, reason: 'CI test'})
  })

  it('deploys or refuses each retrieval profile by its held-out verdict, and refuses them all when the plan holds nothing out', () => {
    const report = JSON.parse(readFileSync(join(dir, 'b', 'report.json'), 'utf8'))
    const d = report.phases.deploy.retrieval
    for (const [name, verdict] of [
      ...d.domain.map((x: {name: string; verdict: string}) => [x.name, x.verdict]),
      ['retrieval-routed', d.routed_verdict],
    ]) {
      const r = kt(['deploy', join(dir, 'b', 'profiles', `${name}.json`), '--target', join(dir, `dep-${name}`)])
      expect(r.status, `${name} ${verdict} ${r.stderr}`).toBe(verdict === 'pass' ? 0 : 1)
      if (verdict !== 'pass') expect(r.stderr).toMatch(/its run failed validation: holdout-noninferior/)
    }
    // without retrieval.split kt tunes on all of retrieval.data: nothing is validated, the gate refuses
    const p = JSON.parse(readFileSync(join(__dirname, '../../phases/plan.default.json'), 'utf8'))
    for (const k of ['tune'] as const) p.datasets[k] = join(__dirname, '../../phases', p.datasets[k])
    p.datasets.holdout = p.datasets.holdout.map((h: string) => join(__dirname, '../../phases', h))
    p.retrieval = {...p.retrieval, data: join(__dirname, '../../fixtures/memory_small.json'), budget: 2}
    delete p.retrieval.split
    const run = kt(['run', '--plan', write('no-split.json', p), '--out', join(dir, 'no-split'), '--json'])
    expect([0, 1], run.stderr).toContain(run.status)
    const r = kt([
      'deploy',
      join(dir, 'no-split', 'profiles', 'retrieval-high-throughput.json'),
      '--target',
      join(dir, 'dep-r'),
    ])
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(
      /deploy refused: .*\(retrieval profile retrieval-high-throughput\): it has no validation \(the retrieval study tuned on all of .*memory_small\.json and has no held-out conversations to validate on \(set retrieval\.split in the plan\)\)/,
    )
    const routed = kt([
      'deploy',
      join(dir, 'no-split', 'profiles', 'retrieval-routed.json'),
      '--target',
      join(dir, 'dep-r'),
    ])
    expect(routed.status).toBe(1)
    expect(routed.stderr).toMatch(/\(routed profile retrieval-routed\): it has no validation/)
  })

  it('fails a run whose leakage audit flags a signal (an imported CSV with surprise = truth)', () => {
    const rows = ['id,time,text,truth,surprise,query']
    for (let i = 0; i < 60; i++) {
      const truth = ((i * 37) % 100) / 100
      rows.push(
        `t${i},2024-01-01T${String(i % 24).padStart(2, '0')}:00:00Z,turn ${i} about topic ${i % 5},${truth},${truth},topic ${i % 5}`,
      )
    }
    const csv = join(dir, 'leak.csv')
    writeFileSync(csv, `${rows.join('\n')}\n`)
    const im = kt(['data', 'import', csv, '--out', join(dir, 'leak-data')])
    const imported = join(dir, 'leak-data', 'dataset.json')
    expect(im.status, im.stderr).toBe(0)
    // and a small one with skewed labels (25 rows, 80% in [0, 0.3], 20% in [0.7, 1]): the case the
    // successive-difference estimate alone missed (92% < 95%)
    const small = ['id,time,text,truth,surprise,query']
    for (let i = 0; i < 25; i++) {
      const truth = i % 5 === 4 ? 0.7 + ((i * 7) % 30) / 100 : ((i * 13) % 30) / 100
      small.push(
        `s${i},2024-01-01T${String(i % 24).padStart(2, '0')}:00:00Z,turn ${i} about topic ${i % 5},${truth},${truth},topic ${i % 5}`,
      )
    }
    writeFileSync(join(dir, 'leak_small.csv'), `${small.join('\n')}\n`)
    const imSmall = kt(['data', 'import', join(dir, 'leak_small.csv'), '--out', join(dir, 'leak-small-data')])
    expect(imSmall.status, imSmall.stderr).toBe(0)
    const p = plan()
    p.datasets.holdout = p.datasets.holdout.map((h: string) => join(__dirname, '../../phases', h))
    p.datasets.imported = [imported, join(dir, 'leak-small-data', 'dataset.json')]
    const r = kt(['phase', '5', '--plan', write('leak-plan.json', p), '--out', join(dir, 'leak'), '--json'])
    expect(r.status, r.stderr).toBe(1)
    const summary = JSON.parse(r.stdout)
    expect(summary.verdict).toBe('fail')
    expect(summary.verdict_reasons.join(' ')).toMatch(/leakage audit flagged surprise on leak, surprise on leak_small/)
    expect(readFileSync(join(dir, 'leak', 'report.md'), 'utf8')).not.toMatch(/all acceptance criteria pass/)
  })

  it('round-trips: the quality the study recorded for each retrieval profile, on the tuning and on the held-out conversations, is what kt eval --profile gives there', async () => {
    const {loadRetrievalProfile} = await import('../../src/eval/profile.js')
    const {runEvaluation} = await import('../../src/eval/harness.js')
    const {loadMemoryDataset} = await import('../../src/data/conversations/index.js')
    const {parseSplit, splitDataset, splitIds} = await import('../../src/data/conversations/split.js')
    const data = join(__dirname, '../../fixtures/memory_small.json')
    const dataset = loadMemoryDataset(data)
    // the default plan's split, seeded with the run's seed
    const split = parseSplit('conversations:0.5', 42)
    const parts = {tuning: splitDataset(dataset, split, 'train'), holdout: splitDataset(dataset, split, 'holdout')}
    const report = JSON.parse(readFileSync(join(dir, 'b', 'report.json'), 'utf8'))
    const files = [
      ...report.phases.deploy.retrieval.domain.map((d: {files: string[]}) => d.files[2]),
      report.phases.deploy.retrieval.routed,
    ]
    expect(files).toHaveLength(4)
    for (const f of files) {
      const p = loadRetrievalProfile(join(dir, 'b', f))
      for (const [part, ds] of Object.entries(parts)) {
        const recorded = p.loaded.profile.metrics[`recall@10_${part}`]
        expect(recorded, `${f} ${part}`).toBeTypeOf('number')
        // what the eval command computes (src/commands/eval.ts)
        expect(
          runEvaluation(ds, p.config, {engine: {overrides: p.overrides}}).engine.overall['recall@10'],
          `${f} ${part}`,
        ).toBe(recorded)
      }
    }
    // and through the CLI for the routed profile (once read as the defaults), on the held-out conversation
    const routed = join(dir, 'b', report.phases.deploy.retrieval.routed)
    const r = kt([
      'eval',
      '--data',
      data,
      '--conversation',
      splitIds(dataset, split).holdout.join(','),
      '--profile',
      routed,
      '--json',
    ])
    expect(r.status, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout).engine.overall['recall@10']).toBe(
      JSON.parse(readFileSync(routed, 'utf8')).metrics['recall@10_holdout'],
    )
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
