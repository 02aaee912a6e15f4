import {describe, expect, it} from 'vitest'
import {mkdtempSync, readFileSync, writeFileSync, existsSync, mkdirSync, readdirSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {execFileSync} from 'node:child_process'
import {IMPORTANCE_SPACE} from '../../src/engine/importance/space.js'
import {RETRIEVAL_SPACE} from '../../src/engine/retrieval/space.js'
import {
  makeProfile,
  profileJson,
  renderShellScript,
  shellQuote,
  parseEnvFile,
  configFromEnvFile,
  renderEnvFile,
  commentText,
} from '../../src/deploy/profile.js'
import {loadProfile} from '../../src/deploy/load.js'
import {deployGate} from '../../src/deploy/gate.js'
import {deployProfile, rollback, activeProfile, deploymentIndex} from '../../src/deploy/target.js'
import {loadRetrievalProfile} from '../../src/eval/profile.js'
import {checkSpace, defaultConfig} from '../../src/space/space.js'
import {AcceptanceError, InputError} from '../../src/util/errors.js'
import {FAILED, PASSED, TEST_ENGINE_SPACE, sampleProfile, writeProfile} from './helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'kt-deploy-'))
const config = (d: number, s: number, r: number, h: number) => ({
  decay: d,
  surprise: s,
  relevance: r,
  habituation: h,
  time_scale_hours: 168,
})
const importance = (name: string, c = config(0.4, 0.3, 0.2, 0.1), validation = PASSED) =>
  sampleProfile('importance', name, validation, c)

describe('profiles', () => {
  it('quotes shell values safely', () => {
    expect(shellQuote("it's")).toBe(`'it'\\''s'`)
    const out = execFileSync('sh', ['-c', `x=${shellQuote("a'b $HOME `id`")}; printf %s "$x"`], {encoding: 'utf8'})
    expect(out).toBe("a'b $HOME `id`")
  })

  it('exports a shell script that sets exactly the profile values', () => {
    const p = importance('p', config(0.1, 0.55, 0.3, 0.05))
    const script = join(dir, 'p.sh')
    writeFileSync(script, renderShellScript(p))
    const env = execFileSync('sh', ['-c', `. ${script}; env`], {encoding: 'utf8'})
    const loaded = configFromEnvFile(
      IMPORTANCE_SPACE,
      env
        .split('\n')
        .filter((l) => l.startsWith('IMPORTANCE_'))
        .join('\n'),
      'env',
    )
    expect(loaded).toEqual(config(0.1, 0.55, 0.3, 0.05))
  })

  it('rejects weights that do not sum to 1 within 1e-9, or leave [0, 1]', () => {
    expect(() => importance('bad', config(0.5, 0.3, 0.2, 0.1))).toThrow(/summing to 1/)
    expect(() => importance('bad', config(1.2, -0.2, 0, 0))).toThrow(/decay: expected a weight in \[0, 1\]/)
    expect(() => importance('ok', config(0.4, 0.3, 0.2, 0.1 + 5e-10))).not.toThrow()
  })

  it('parses .env files and names the line of a bad one', () => {
    expect(parseEnvFile("# c\nA=1\nexport B='x y'\n", 'f.env')).toEqual({A: '1', B: 'x y'})
    expect(() => parseEnvFile('A=1\nnot a line\n', 'f.env')).toThrow(/f\.env:2: expected a line NAME=value/)
    const p = importance('p', config(0.25, 0.25, 0.25, 0.25))
    expect(configFromEnvFile(IMPORTANCE_SPACE, renderEnvFile(p), 'p.env')).toEqual(p.config)
  })

  it('escapes every character outside printable ASCII in comments', () => {
    expect(commentText('a\nb\r\u2028\u0000c')).toBe('a\\u{a}b\\u{d}\\u{2028}\\u{0}c')
  })

  it('has one schema for every kind: a profile of each kind round-trips through the one loader', () => {
    for (const kind of ['importance', 'retrieval', 'routed', 'engine'] as const) {
      const p = sampleProfile(kind)
      const file = writeProfile(dir, `kind-${kind}.json`, p)
      expect(loadProfile(file).profile).toEqual(p)
      expect(p.validation.validation_passed).toBe(true)
      expect(typeof p.validation.validation_passed).toBe('boolean')
    }
    expect(sampleProfile('engine').env).toEqual({alpha: 'TOY_ALPHA', depth: 'TOY_DEPTH', mode: 'TOY_MODE'})
    expect(renderEnvFile(sampleProfile('routed'))).toContain('\nKT_BM25_K1__TEMPORAL=2.5\n')
  })

  it('refuses profiles whose parts contradict each other', () => {
    const p = JSON.parse(profileJson(sampleProfile('retrieval')))
    expect(() =>
      loadProfile(
        writeProfile(dir, 'c1.json', JSON.stringify({...p, validation: {...p.validation, validation_passed: 'false'}})),
      ),
    ).toThrow(/validation\.validation_passed: expected boolean, got "false"/)
    expect(() =>
      loadProfile(writeProfile(dir, 'c2.json', JSON.stringify({...p, validation: {...p.validation, verdict: 'fail'}}))),
    ).toThrow(/validation_passed true exactly when verdict is "pass"/)
    expect(() =>
      loadProfile(writeProfile(dir, 'c3.json', JSON.stringify({...p, env: {...p.env, 'bm25.k1': 'KT_BM25_B'}}))),
    ).toThrow(/env\.bm25\.k1: expected "KT_BM25_K1"/)
    expect(() => loadProfile(writeProfile(dir, 'c4.json', JSON.stringify({...p, overrides: {}})))).toThrow(
      /overrides: expected no overrides in a retrieval profile/,
    )
    const e = JSON.parse(profileJson(sampleProfile('engine')))
    expect(() =>
      loadProfile(
        writeProfile(dir, 'c5.json', JSON.stringify({...e, engine: {...e.engine, space_sha256: '0'.repeat(64)}})),
      ),
    ).toThrow(/engine\.space_sha256: expected the fingerprint of engine toy's current parameter table/)
    expect(() =>
      loadProfile(writeProfile(dir, 'c6.json', JSON.stringify({...e, engine: {...e.engine, name: 'unknown'}}))),
    ).toThrow(/engine: expected an engine kt can find/)
  })

  it('refuses a parameter table that declares a dangerous or malformed env var', () => {
    for (const env of ['PATH', 'path', 'LD_PRELOAD', 'NODE_OPTIONS', 'BASH_ENV', 'IFS', 'x;touch', 'A B', '_', '1A'])
      expect(
        () =>
          checkSpace({
            id: 's',
            params: [{kind: 'float', name: 'x', env, low: 0, high: 1, scale: 'linear', default: 0.5, description: ''}],
          }),
        env,
      ).toThrow(/env var name/)
  })
})

describe('the routed profile kt search writes, read by kt eval', () => {
  it('reads a `base` routed file as its base configuration, never as the defaults', () => {
    const base = {...defaultConfig(RETRIEVAL_SPACE), 'bm25.k1': 2.9, 'router.enabled': true}
    const file = writeProfile(
      dir,
      'old-routed.json',
      JSON.stringify({base, overrides: {temporal: {'bm25.b': 0.9}}, per_type: [], min_gain: 0.01}),
    )
    const p = loadRetrievalProfile(file)
    expect(p.config['bm25.k1']).toBe(2.9)
    expect(p.overrides).toEqual({temporal: {'bm25.b': 0.9}})
    expect(p.loaded.profile.validation.verdict).toBe('not-validated')
  })

  it('refuses unknown keys instead of falling back to defaults', () => {
    expect(() =>
      loadRetrievalProfile(writeProfile(dir, 'typo.json', JSON.stringify({bse: {}, overrides: {}}))),
    ).toThrow(/typo\.json: bse: expected a parameter of space retrieval/)
    expect(() => loadRetrievalProfile(writeProfile(dir, 'imp.json', importance('imp')))).toThrow(
      /kind: expected a retrieval or routed profile here/,
    )
  })
})

describe('the deploy gate', () => {
  it('passes only a validated profile with metrics and no flagged leakage', () => {
    expect(deployGate(sampleProfile('retrieval')).passed).toBe(true)
    expect(deployGate(sampleProfile('retrieval', 'f', FAILED)).reason).toMatch(
      /failed validation: no-loss on heldout \(quality_delta_abs -0\.087, needs >= 0\)/,
    )
    expect(
      deployGate(
        makeProfile({
          kind: 'retrieval',
          space: RETRIEVAL_SPACE,
          name: 'n',
          config: defaultConfig(RETRIEVAL_SPACE),
          sourceRun: 'r',
          metrics: {q: 1},
        }),
      ).reason,
    ).toMatch(/has no validation/)
    expect(
      deployGate(
        makeProfile({
          kind: 'retrieval',
          space: RETRIEVAL_SPACE,
          name: 'm',
          config: defaultConfig(RETRIEVAL_SPACE),
          sourceRun: 'r',
          validation: PASSED,
        }),
      ).reason,
    ).toMatch(/records no metrics/)
    const leaky = makeProfile({
      kind: 'importance',
      space: IMPORTANCE_SPACE,
      name: 'l',
      config: config(0.4, 0.3, 0.2, 0.1),
      sourceRun: 'r',
      metrics: {q: 1},
      validation: PASSED,
      leakage: [{dataset: 'mine', signal: 'surprise', verdict: 'leak', dependence: 0.996, flagged: true}],
    })
    expect(deployGate(leaky).reason).toMatch(/leakage audit flagged surprise on mine \(99\.6% of its variance/)
  })

  it('refuses every kind the same way (exit 1), and deploys it with --force and a reason recorded in the history', () => {
    for (const kind of ['importance', 'retrieval', 'routed', 'engine'] as const) {
      const target = join(dir, `gate-${kind}`)
      const file = writeProfile(dir, `gate-${kind}.json`, sampleProfile(kind, `${kind}-failed`, FAILED))
      const refused = (() => {
        try {
          deployProfile(file, target)
        } catch (error) {
          return error
        }
      })()
      expect(refused).toBeInstanceOf(AcceptanceError)
      expect((refused as AcceptanceError).exitCode).toBe(1)
      expect(existsSync(join(target, 'active.env'))).toBe(false)
      expect(() => deployProfile(file, target, {force: true})).toThrow(InputError)
      const out = deployProfile(file, target, {force: true, reason: 'incident 42'})
      expect(out).toMatchObject({forced: true, reason: 'incident 42', verdict: 'fail'})
      const last = deploymentIndex(target)!.events.at(-1)!
      expect(last).toMatchObject({action: 'deploy', forced: true, reason: 'incident 42', verdict: 'fail'})
      expect(last.gate).toMatch(/failed validation/)
    }
  })

  it('refuses a hand-made profile with "metrics": {} and one of an older kt with validation_passed "false"', () => {
    const v1 = {
      kt_profile: 1,
      name: 'hand',
      space: 'retrieval',
      config: defaultConfig(RETRIEVAL_SPACE),
      metrics: {},
      source_run: 'me',
      rollout: [],
    }
    expect(() => deployProfile(writeProfile(dir, 'v1-empty.json', JSON.stringify(v1)), join(dir, 'v1t'))).toThrow(
      /deploy refused: .*has no validation/,
    )
    const failed = {
      ...v1,
      space: 'importance',
      config: config(0.4, 0.3, 0.2, 0.1),
      metrics: {validation_passed: 'false', q: 0.5},
    }
    expect(() => deployProfile(writeProfile(dir, 'v1-failed.json', JSON.stringify(failed)), join(dir, 'v1t'))).toThrow(
      /deploy refused: .*failed validation/,
    )
  })
})

describe('deploy and rollback', () => {
  it('keeps the replaced profile and restores it on rollback', () => {
    const target = join(dir, 'target')
    const a = writeProfile(dir, 'alpha.json', importance('alpha', config(0.4, 0.3, 0.2, 0.1)))
    const b = writeProfile(dir, 'beta.json', importance('beta', config(0.1, 0.6, 0.25, 0.05)))
    expect(deployProfile(a, target)).toMatchObject({active: 'alpha', previous: null, history: 0, forced: false})
    expect(deployProfile(b, target)).toMatchObject({active: 'beta', previous: 'alpha', history: 1})
    expect(readFileSync(join(target, 'active.env'), 'utf8')).toContain('IMPORTANCE_WEIGHT_SURPRISE=0.6')
    expect(rollback(target)).toMatchObject({active: 'alpha', previous: 'beta', history: 0})
    expect(activeProfile(target)?.profile.name).toBe('alpha')
    expect(readFileSync(join(target, 'active.env'), 'utf8')).toContain('IMPORTANCE_WEIGHT_DECAY=0.4')
    expect(() => rollback(target)).toThrow(/expected a previous profile to roll back to/)
    expect(deploymentIndex(target)!.events.map((e) => `${e.seq} ${e.action} ${e.name}`)).toEqual([
      '1 deploy alpha',
      '2 deploy beta',
      '3 rollback alpha',
    ])
    expect(readdirSync(target).filter((f) => f.includes('.tmp'))).toEqual([])
  })

  it('refuses an invalid profile without touching the active one', () => {
    const target = join(dir, 'target2')
    deployProfile(writeProfile(dir, 'gamma.json', importance('gamma')), target)
    const p = JSON.parse(profileJson(importance('bad')))
    p.config.decay = 0.45
    expect(() => deployProfile(writeProfile(dir, 'bad.json', JSON.stringify(p)), target)).toThrow(
      /bad\.json: config: .*summing to 1/,
    )
    expect(activeProfile(target)?.profile.name).toBe('gamma')
    expect(deploymentIndex(target)!.events).toHaveLength(1)
  })

  it('keeps one space per target', () => {
    const target = join(dir, 'target3')
    deployProfile(writeProfile(dir, 'r.json', sampleProfile('retrieval', 'fast')), target)
    expect(() => deployProfile(writeProfile(dir, 'i.json', importance('imp')), target)).toThrow(
      /space: expected a profile of space "retrieval"/,
    )
    deployProfile(writeProfile(dir, 'rr.json', sampleProfile('routed', 'routed')), target)
    expect(activeProfile(target)?.profile.kind).toBe('routed')
  })

  it('takes over a folder an older kt wrote, and refuses a hostile profile in its history instead of restoring it', () => {
    const target = join(dir, 'legacy')
    mkdirSync(join(target, 'history'), {recursive: true})
    const v1 = (name: string, sourceRun: string) =>
      JSON.stringify({
        kt_profile: 1,
        name,
        space: 'importance',
        config: config(0.4, 0.3, 0.2, 0.1),
        metrics: {validation_passed: 'true'},
        source_run: sourceRun,
        rollout: [],
      })
    writeFileSync(join(target, 'active.json'), v1('current', 'r1'))
    writeFileSync(join(target, 'history', '0001.json'), v1('evil', 'r0\ntouch /tmp/kt-pwned'))
    expect(() => rollback(target)).toThrow(/0001\.json: source_run: expected a run id/)
    const clean = join(dir, 'legacy2')
    mkdirSync(join(clean, 'history'), {recursive: true})
    writeFileSync(join(clean, 'active.json'), v1('current', 'r1'))
    writeFileSync(join(clean, 'history', '0001.json'), v1('older', 'r0'))
    expect(rollback(clean)).toMatchObject({active: 'older', previous: 'current', history: 0})
    expect(deploymentIndex(clean)!.events.map((e) => e.action)).toEqual(['adopt', 'adopt', 'rollback'])
  })

  it("an engine profile needs no code of its own: its space is the engine's table", () => {
    expect(TEST_ENGINE_SPACE.params).toHaveLength(3)
    const target = join(dir, 'engine-target')
    deployProfile(
      writeProfile(dir, 'eng.json', sampleProfile('engine', 'eng', PASSED, {alpha: 0.25, depth: 4, mode: 'exact/v2'})),
      target,
    )
    expect(readFileSync(join(target, 'active.env'), 'utf8').split('\n').slice(1)).toEqual([
      'TOY_ALPHA=0.25',
      'TOY_DEPTH=4',
      'TOY_MODE=exact/v2',
      '',
    ])
    // a second version over it, and back (the index records the space id engine:toy)
    deployProfile(
      writeProfile(dir, 'eng2.json', sampleProfile('engine', 'eng2', PASSED, {alpha: 0.5, depth: 2, mode: 'fast'})),
      target,
    )
    expect(deploymentIndex(target)!.space).toBe(TEST_ENGINE_SPACE.id)
    expect(rollback(target)).toMatchObject({active: 'eng', previous: 'eng2', history: 0})
    expect(readFileSync(join(target, 'active.env'), 'utf8')).toContain('TOY_ALPHA=0.25')
  })
})

describe('kt search --per-type --out writes a routed kt profile', () => {
  it('read by kt eval as its base and overrides, with the quality kt eval gives', async () => {
    const {routedProfile} = await import('../../src/study/sweeps.js')
    const {runEvaluation} = await import('../../src/eval/harness.js')
    const {loadMemoryDataset} = await import('../../src/data/conversations/index.js')
    const data = join(__dirname, '../../fixtures/memory_small.json')
    const base = {...defaultConfig(RETRIEVAL_SPACE), 'bm25.k1': 2.4, 'router.enabled': true}
    const overrides = {temporal: {'bm25.b': 0.8}}
    const p = await routedProfile(
      {base, overrides, per_type: [], min_gain: 0.01},
      'retrieval-bohb-s42',
      data,
      'recall@10',
    )
    const file = writeProfile(dir, 'search-routed.json', p)
    const loaded = loadRetrievalProfile(file)
    expect(loaded.config).toEqual(base)
    expect(loaded.overrides).toEqual(overrides)
    expect(p.metrics['recall@10_on_memory_small']).toBe(
      runEvaluation(loadMemoryDataset(data), base, {engine: {overrides}}).engine.overall['recall@10'],
    )
    expect(deployGate(p).reason).toMatch(/has no validation/)
  })
})
