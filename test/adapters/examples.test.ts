import {spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {packageRoot} from '../../src/util/paths.js'
import {SqliteStudyFile} from '../helpers/study-file.js'
import {kt} from '../cli/helpers.js'

const PY = join(packageRoot, 'examples', 'python-engine')
const NODE = join(packageRoot, 'examples', 'node-engine')

describe('examples/python-engine', () => {
  it('eval.py speaks the command protocol: tiers are question subsets, metrics on the last line', () => {
    const run = (tier: string, env: Record<string, string> = {}) => {
      const r = spawnSync('python3', ['eval.py'], {
        cwd: PY,
        encoding: 'utf8',
        env: {...process.env, KT_TIER: tier, ...env},
      })
      expect(r.status).toBe(0)
      return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Record<string, number>
    }
    expect(run('smoke').questions).toBe(4)
    expect(run('unit').questions).toBe(12)
    const full = run('full')
    expect(full.questions).toBe(24)
    // the fusion weight matters: recency first loses the questions about first facts
    const recencyHeavy = run('full', {MEMENGINE_W_BM25: '0.05', MEMENGINE_W_RECENCY: '0.95'})
    expect(recencyHeavy.mrr).toBeLessThan(full.mrr)
  })

  it("BOHB over its three tiers writes the front and profiles; a profile deploys in the engine's own env names and the engine reads it back", () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-py-example-'))
    const r = kt([
      'search',
      '--engine',
      join(PY, 'engine.json'),
      '--budget',
      '4',
      '--workers',
      '4',
      '--storage',
      join(dir, 'studies.sqlite'),
      '--study',
      'py',
      '--out',
      dir,
      '--json',
    ])
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    const out = JSON.parse(r.stdout) as {
      engine: string
      front: {front: unknown[]; hypervolume: number}
      profiles: Array<{profile: string; trial_id: number | null}>
    }
    expect(out.engine).toBe('memengine-py')
    expect(out.front.front.length).toBeGreaterThan(0)
    expect(out.front.hypervolume).toBeGreaterThan(0)
    expect(out.profiles.map((p) => p.profile)).toEqual(['best-quality', 'high-throughput'])
    const store = SqliteStudyFile.open(join(dir, 'studies.sqlite'), {mustExist: true})
    const trials = store.trials('py')
    store.close()
    expect(new Set(trials.map((t) => t.budget))).toEqual(new Set([1, 3, 9]))
    expect(trials.every((t) => t.status === 'ok')).toBe(true)
    // every trial's stdout/stderr beside the study; the tier reached the engine
    expect(readFileSync(join(dir, 'py', 'trials', '0.err'), 'utf8')).toMatch(/^tier smoke: 4 questions/)
    // kt study show reads the engine file the study names: the same front and profiles
    const show = kt(['study', 'show', 'py', '--storage', join(dir, 'studies.sqlite'), '--json'])
    expect(show.status).toBe(0)
    expect(JSON.parse(show.stdout)).toMatchObject({engine: 'memengine-py', front: out.front, profiles: out.profiles})
    const env = readFileSync(join(dir, 'profiles', 'best-quality.env'), 'utf8')
    expect(env).toMatch(/^MEMENGINE_W_BM25=/m)
    expect(env).not.toMatch(/^KT_/m)
    // conditional parameters: the inactive one is deployed at its default
    const profile = JSON.parse(readFileSync(join(dir, 'profiles', 'best-quality.json'), 'utf8')) as {
      config: Record<string, unknown>
    }
    if (profile.config['recency.kind'] === 'exponential') expect(profile.config['recency.window_days']).toBe(14)
    else expect(profile.config['recency.half_life_days']).toBe(7)

    const target = join(dir, 'deployed')
    // the study's own measurements are not a validation: the deploy gate refuses the profile (exit 1) until forced with a reason
    const refused = kt([
      'deploy',
      join(dir, 'profiles', 'best-quality.json'),
      '--engine',
      join(PY, 'engine.json'),
      '--target',
      target,
      '--json',
    ])
    expect(refused.status).toBe(1)
    expect(refused.stderr).toMatch(/deploy refused: .*\(engine profile best-quality\): it has no validation/)
    const d = kt([
      'deploy',
      join(dir, 'profiles', 'best-quality.json'),
      '--engine',
      join(PY, 'engine.json'),
      '--target',
      target,
      '--force',
      '--reason',
      'examples test',
      '--json',
    ])
    expect(d.stderr).toMatch(/forced past the deploy gate/)
    expect(d.status).toBe(0)
    expect(readFileSync(join(target, 'active.env'), 'utf8')).toMatch(/^MEMENGINE_RECENCY_KIND=/m)
    // the engine itself runs with the deployed shell profile
    const sh = spawnSync('sh', ['-c', `. ${join(target, 'active.sh')} && python3 eval.py`], {
      cwd: PY,
      encoding: 'utf8',
      env: {...process.env, KT_TIER: 'full'},
    })
    expect(sh.status).toBe(0)
    const best = trials.find((t) => t.id === out.profiles[0].trial_id)!
    expect(JSON.parse(sh.stdout.trim().split('\n').at(-1)!).mrr).toBeCloseTo(best.metrics!.mrr, 12)

    // online bandits over the engine's space, its profile as the prior; a later command finds the space without the engine file
    const online = join(dir, 'online')
    // the profile is a prior on live traffic: the same gate as kt deploy refuses it until forced with a reason
    const initArgs = [
      'online',
      'init',
      '--tenant',
      'py',
      '--engine',
      join(PY, 'engine.json'),
      '--profile',
      join(dir, 'profiles', 'best-quality.json'),
      '--dir',
      online,
      '--json',
    ]
    const initRefused = kt(initArgs)
    expect([initRefused.status, initRefused.stderr]).toEqual([1, refused.stderr])
    const init = kt([...initArgs, '--force', '--reason', 'examples test'])
    expect(init.stderr).toMatch(
      /^kt: warning: forced past the deploy gate \(it has no validation.*reason recorded in the tenant's init record: examples test\n$/,
    )
    expect(init.status).toBe(0)
    expect(JSON.parse(init.stdout).space).toBe('engine:memengine-py')
    const choose = kt(['online', 'choose', '--tenant', 'py', '--dir', online, '--json'])
    expect(choose.status).toBe(0)
    const played = JSON.parse(choose.stdout).config as Record<string, unknown>
    expect(Object.keys(played)).toContain('w.recency')
    // the parameter whose condition does not hold plays its default
    if (played['recency.kind'] === 'step') expect(played['recency.half_life_days']).toBe(7)
    else expect(played['recency.window_days']).toBe(14)
  })
})

describe('examples/node-engine', () => {
  it('a study of the Node engine runs its trials as processes, 2 in flight', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-node-example-'))
    const r = kt([
      'search',
      '--engine',
      join(NODE, 'engine.json'),
      '--optimizer',
      'random',
      '--trials',
      '4',
      '--workers',
      '2',
      '--storage',
      join(dir, 's.sqlite'),
      '--study',
      'n',
      '--out',
      dir,
      '--json',
    ])
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    const store = SqliteStudyFile.open(join(dir, 's.sqlite'), {mustExist: true})
    const trials = store.trials('n')
    store.close()
    expect(trials).toHaveLength(4)
    expect(trials.every((t) => t.status === 'ok' && t.budget === 9 && t.metrics!.questions === 24)).toBe(true)
    expect(existsSync(join(dir, 'profiles', 'high-throughput.env'))).toBe(true)
  })
})
