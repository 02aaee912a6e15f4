import {describe, expect, it} from 'vitest'
import {mkdtempSync, readFileSync, writeFileSync, existsSync, readdirSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, resolve} from 'node:path'
import {kt} from '../cli/helpers.js'
import {loadMemoryDataset} from '../../src/data/conversations/index.js'
import {idSplit, splitDataset, describeSplit} from '../../src/data/conversations/split.js'
import {
  DEFAULT_HOLDOUT_SETTINGS,
  holdoutMetrics,
  holdoutProfileValidation,
  MIN_TYPE_QUESTIONS,
  NONINFERIORITY_MARGIN,
  validateOnHoldout,
} from '../../src/eval/holdout-validation.js'
import {makeProfile, profileJson} from '../../src/deploy/profile.js'
import {RETRIEVAL_SPACE} from '../../src/engine/retrieval/space.js'
import {defaultConfig} from '../../src/space/space.js'
import {BAD_CONFIG, GOOD_CONFIG, writeHoldoutFixture} from './holdout-fixture.js'

const ROOT = resolve(__dirname, '../..')
const dir = mkdtempSync(join(tmpdir(), 'kt-holdout-'))
const {file, ids} = writeHoldoutFixture(dir)
const TRAIN = ids.slice(0, 3)
const HOLDOUT = ids.slice(3)
const split = idSplit(TRAIN.join(','), HOLDOUT.join(','))
const loaded = loadMemoryDataset(file)
const heldOut = splitDataset(loaded, split, 'holdout')
const settings = {...DEFAULT_HOLDOUT_SETTINGS, metric: 'recall@10'}
const defaults = defaultConfig(RETRIEVAL_SPACE)

describe('held-out validation of kt retrieval profiles against the defaults', () => {
  const v = validateOnHoldout(
    heldOut,
    [
      {name: 'bad', trial: 3, config: BAD_CONFIG, tuning_quality: 0.9},
      {name: 'good', trial: 4, config: GOOD_CONFIG, tuning_quality: 1},
      {
        name: 'routed-bad-override',
        trial: null,
        config: {...GOOD_CONFIG, 'router.enabled': true},
        overrides: {exploratory: BAD_CONFIG},
        tuning_quality: null,
      },
      {
        name: 'routed-thin',
        trial: null,
        config: {...GOOD_CONFIG, 'router.enabled': true},
        overrides: {temporal: {'bm25.k1': 2}},
        tuning_quality: null,
      },
    ],
    settings,
    describeSplit(loaded, split),
  )
  const check = (name: string) => v.profiles.find((p) => p.name === name)!

  it('fails a deliberately bad profile and passes a good one, with the paired interval behind each verdict', () => {
    expect(v.queries).toBe(24)
    expect(v.defaults_quality).toBe(1)
    const bad = check('bad')
    expect(bad).toMatchObject({quality: 0, defaults_quality: 1, worse: 24, better: 0, verdict: 'fail', passed: false})
    expect(bad.delta.value).toBe(-1)
    expect(bad.delta.high).toBe(-1)
    expect(bad.criteria).toEqual([
      expect.objectContaining({
        id: 'holdout-noninferior',
        metric: 'recall@10_delta_ci_low',
        op: '>=',
        threshold: -NONINFERIORITY_MARGIN,
        value: -1,
        passed: false,
        dataset: 'holdout',
      }),
    ])
    const good = check('good')
    expect(good).toMatchObject({quality: 1, verdict: 'pass', passed: true, worse: 0})
    expect(good.delta).toMatchObject({value: 0, low: 0, high: 0})
  })

  it("validates a routed override on its own type's held-out questions, and says when there are too few", () => {
    const routed = check('routed-bad-override')
    expect(routed.per_type).toEqual([
      expect.objectContaining({type: 'exploratory', queries: 24, criterion: true, passed: false, quality: 0}),
    ])
    expect(routed.criteria.map((c) => [c.id, c.passed])).toEqual([
      ['holdout-noninferior', false],
      ['holdout-noninferior-exploratory', false],
    ])
    expect(routed.verdict).toBe('fail')
    const thin = check('routed-thin')
    expect(thin.verdict).toBe('pass')
    expect(thin.criteria.map((c) => c.id)).toEqual(['holdout-noninferior'])
    expect(thin.note).toMatch(
      new RegExp(
        `overall only \\(fewer than ${MIN_TYPE_QUESTIONS} held-out questions\\): temporal \\(no held-out question\\)`,
      ),
    )
  })

  it("applies the margin as a non-inferiority bound on the interval's lower end", () => {
    // the bad configuration loses the 8 facts of one conversation and keeps the 24 of three others
    const mixed = loadMemoryDataset(writeHoldoutFixture(dir, 1, 3, 'mixed.json').file)
    const at = (margin: number) =>
      validateOnHoldout(
        mixed,
        [{name: 'w', trial: null, config: BAD_CONFIG, tuning_quality: null}],
        {...settings, margin},
        's',
      ).profiles[0]
    const strict = at(NONINFERIORITY_MARGIN)
    expect(strict.delta.value).toBe(-0.25)
    expect(strict.delta.low!).toBeLessThan(-0.25)
    expect(strict.delta.high!).toBeGreaterThan(-0.25)
    expect(strict.delta.high!).toBeLessThan(0)
    expect(strict.verdict).toBe('fail')
    // a margin wider than the interval's lower end lets it through; one just inside it does not
    expect(at(-strict.delta.low!).verdict).toBe('pass')
    expect(at(-strict.delta.low! - 1e-9).verdict).toBe('fail')
  })

  it('writes the verdict into the profile: kt deploy refuses the bad one (exit 1) and deploys the good one', () => {
    const write = (name: string, config: Record<string, number | boolean | string>) => {
      const profile = makeProfile({
        kind: 'retrieval',
        space: RETRIEVAL_SPACE,
        name,
        config: {...defaults, ...config},
        sourceRun: 'holdout-test',
        metrics: holdoutMetrics(v, name),
        validation: holdoutProfileValidation(v, name),
      })
      const path = join(dir, `${name}.json`)
      writeFileSync(path, profileJson(profile))
      return path
    }
    const bad = kt(['deploy', write('bad', BAD_CONFIG), '--target', join(dir, 'target')])
    expect(bad.status).toBe(1)
    expect(bad.stderr.trim().split('\n')).toHaveLength(1)
    expect(bad.stderr).toMatch(
      /deploy refused: .*bad\.json \(retrieval profile bad\): its run failed validation: holdout-noninferior on holdout \(recall@10_delta_ci_low -1, needs >= -0\.01\)/,
    )
    const good = kt(['deploy', write('good', GOOD_CONFIG), '--target', join(dir, 'target'), '--json'])
    expect(good.status, good.stderr).toBe(0)
    expect(readFileSync(join(dir, 'target', 'active.env'), 'utf8')).toContain('KT_FUSION_BM25=0.6')
  })
})

describe("kt run with retrieval.split on kt's own engine (the fixture above)", () => {
  const plan = JSON.parse(readFileSync(join(ROOT, 'phases', 'plan.default.json'), 'utf8'))
  plan.datasets = {
    tune: join(ROOT, 'fixtures/realistic_100.json'),
    holdout: [join(ROOT, 'fixtures/recency_bias_75.json')],
    imported: [],
  }
  plan.properties.runs = 20
  plan.search = {
    ...plan.search,
    grid_step: 0.1,
    refine_step: 0.02,
    refine_radius: 0.04,
    random_samples: 50,
    bohb_budget: 6,
    top: 3,
  }
  plan.retrieval = {
    data: file,
    metric: 'recall@10',
    optimizer: 'bohb',
    budget: 3,
    split: {train: TRAIN, holdout: HOLDOUT},
  }
  const planFile = join(dir, 'plan.json')
  writeFileSync(planFile, JSON.stringify(plan))
  const out = join(dir, 'run')
  const run = kt(['run', '--plan', planFile, '--out', out, '--json'])

  it('validates every retrieval profile on the held-out conversations; the numbers round-trip through kt eval and the verdict through kt deploy', () => {
    expect([0, 1], run.stderr).toContain(run.status)
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'))
    const r = report.phases.search.retrieval
    expect(r.validation.split).toMatch(/held out 3 \(hold-4, hold-5, hold-6\); explicit ids/)
    expect(r.holdout.rows.find((h: {trial: number}) => h.trial === -1).roles).toContain('defaults')
    const names = r.validation.profiles.map((p: {name: string}) => p.name)
    expect(names).toContain('retrieval-routed')
    const files = readdirSync(join(out, 'profiles')).filter((f) => f.startsWith('retrieval-') && f.endsWith('.json'))
    expect(files.sort()).toEqual(names.map((n: string) => `${n}.json`).sort())
    for (const f of files) {
      const path = join(out, 'profiles', f)
      const profile = JSON.parse(readFileSync(path, 'utf8'))
      const checked = r.validation.profiles.find((p: {name: string}) => `${p.name}.json` === f)
      expect(profile.validation.verdict).toBe(checked.verdict)
      // the quality the study recorded on the held-out conversations is what kt eval --profile gives there
      const evaluated = kt(['eval', '--data', file, '--conversation', HOLDOUT.join(','), '--profile', path, '--json'])
      expect(evaluated.status, evaluated.stderr).toBe(0)
      expect(JSON.parse(evaluated.stdout).engine.overall['recall@10']).toBe(profile.metrics['recall@10_holdout'])
      const deployed = kt(['deploy', path, '--target', join(dir, `t-${f}`)])
      expect(deployed.status, deployed.stderr).toBe(profile.validation.verdict === 'pass' ? 0 : 1)
    }
    // the interval is kt eval --against's on the same questions (same bootstrap seed and settings)
    const routed = JSON.parse(readFileSync(join(out, 'profiles', 'retrieval-routed.json'), 'utf8'))
    const against = JSON.parse(
      kt([
        'eval',
        '--data',
        file,
        '--conversation',
        HOLDOUT.join(','),
        '--against',
        join(out, 'profiles', 'retrieval-routed.json'),
        '--json',
      ]).stdout,
    ).against
    const d = against.differences.find((x: {metric: string}) => x.metric === 'recall@10')
    expect(d.delta).toBe(routed.metrics['recall@10_holdout_delta'])
    expect([d.low, d.high]).toEqual([
      routed.metrics['recall@10_holdout_delta_ci_low'],
      routed.metrics['recall@10_holdout_delta_ci_high'],
    ])
    const md = readFileSync(join(out, 'report.md'), 'utf8')
    expect(md).toMatch(/Validation against the defaults on the 24 held-out questions/)
    expect(md).toMatch(
      /\| profile \| trial \| recall@10 \(tuning\) \| recall@10 \(held-out\) \| defaults \(held-out\) \| profile - defaults, 95% CI \|/,
    )
    expect(existsSync(join(out, 'retrieval-studies.sqlite'))).toBe(true)
  }, 120_000)

  it('refuses a margin without a split (exit 2, one line)', () => {
    const p = {...plan, retrieval: {...plan.retrieval, split: undefined, margin: 0.02}}
    const f = join(dir, 'margin.json')
    writeFileSync(f, JSON.stringify(p))
    const r = kt(['run', '--plan', f, '--out', join(dir, 'm')])
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/margin\.json: retrieval\.margin: expected a margin only with retrieval\.split/)
  })
})

describe('kt search --objective retrieval with held-out conversations', () => {
  it('scores the defaults on the held-out part and writes each domain profile with its verdict, which kt deploy obeys', () => {
    const out = join(dir, 'search')
    const r = kt([
      'search',
      '--objective',
      'retrieval',
      '--data',
      file,
      '--train',
      TRAIN.join(','),
      '--holdout',
      HOLDOUT.join(','),
      '--budget',
      '2',
      '--storage',
      join(out, 'studies.sqlite'),
      '--out',
      out,
      '--json',
    ])
    expect(r.status, r.stderr).toBe(0)
    const result = JSON.parse(r.stdout)
    const defaultsRow = result.holdout.rows.find((h: {trial: number}) => h.trial === -1)
    expect(defaultsRow.roles).toEqual(['defaults'])
    expect(defaultsRow.holdout.quality).toBe(result.validation.defaults_quality)
    // every rule that chose a trial (a rule with no qualifying trial writes no profile)
    const chosen = result.profiles
      .filter((p: {config: unknown}) => p.config !== null)
      .map((p: {profile: string}) => p.profile)
    expect(chosen.length).toBeGreaterThan(0)
    expect(result.validation.profiles.map((p: {name: string}) => p.name)).toEqual(chosen)
    for (const p of result.validation.profiles) {
      const path = join(out, 'profiles', `${p.name}.json`)
      expect(result.files).toContain(path)
      const profile = JSON.parse(readFileSync(path, 'utf8'))
      expect(profile.validation.verdict).toBe(p.verdict)
      expect(profile.metrics['recall@10_holdout']).toBe(p.quality)
      expect(kt(['deploy', path, '--target', join(out, `t-${p.name}`)]).status).toBe(p.verdict === 'pass' ? 0 : 1)
    }
  }, 60_000)
})
