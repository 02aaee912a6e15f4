/**
 * Same seed and inputs => byte-identical report, wherever the plan and its data live: a small
 * study (importance phases and the retrieval study, whose profiles carry metric keys named after
 * the dataset) run from two different folders writes the same report.json (outside the timing
 * section and the hash that covers it), the same report.md above its timing section and the
 * same profiles, and no absolute path of either folder appears in any of them.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {kt} from './helpers.js'
import {packageRoot} from '../../src/util/paths.js'

let base: string
const folders = ['first/clone', 'elsewhere/deeper/second']

/** A plan beside its data (data/), with small budgets so that the whole study takes seconds. */
function writeProject(dir: string): void {
  mkdirSync(join(dir, 'data'), {recursive: true})
  for (const f of ['realistic_100', 'recency_bias_75', 'uniform_50', 'memory_small'])
    cpSync(join(packageRoot, 'fixtures', `${f}.json`), join(dir, 'data', `${f}.json`))
  const plan = JSON.parse(readFileSync(join(packageRoot, 'phases', 'plan.default.json'), 'utf8'))
  plan.datasets = {
    tune: 'data/realistic_100.json',
    holdout: ['data/recency_bias_75.json', 'data/uniform_50.json'],
    imported: [],
  }
  plan.properties.runs = 20
  plan.bootstrap.resamples = 100
  plan.search = {...plan.search, random_samples: 100, bohb_budget: 10}
  plan.retrieval = {...plan.retrieval, data: 'data/memory_small.json', budget: 3}
  writeFileSync(join(dir, 'plan.json'), `${JSON.stringify(plan, null, 2)}\n`)
}

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'kt-relocation-'))
  for (const f of folders) {
    const dir = join(base, f)
    writeProject(dir)
    const r = kt(['run', '--plan', 'plan.json', '--out', 'out', '--json'], {cwd: dir})
    // the default plan's verdict is a FAIL (exit 1, README "Exit codes"); anything else is a problem
    expect([0, 1], r.stderr).toContain(r.status)
  }
}, 120_000)

afterAll(() => rmSync(base, {recursive: true, force: true}))

const read = (f: string, rel: string): string => readFileSync(join(base, f, 'out', rel), 'utf8')

describe('a study run from two different folders', () => {
  it('writes the same report.json outside its timing section', () => {
    const strip = (text: string): string => {
      const r = JSON.parse(text) as Record<string, unknown>
      delete r.timing
      delete r.content_sha256 // a hash of the whole report, timing included
      return JSON.stringify(r, null, 2)
    }
    const [a, b] = folders.map((f) => read(f, 'report.json'))
    expect(strip(a)).toBe(strip(b))
    expect(JSON.parse(a).phases.search.retrieval.data).toBe('data/memory_small.json')
  })

  it('writes the same report.md above its timing section and the same profiles, byte for byte', () => {
    const [a, b] = folders.map((f) => read(f, 'report.md').split('\n## Timing')[0])
    expect(a.length).toBeGreaterThan(1000)
    expect(a).toBe(b)
    const profiles = readdirSync(join(base, folders[0], 'out', 'profiles')).sort()
    expect(profiles).toContain('retrieval-routed.json')
    expect(readdirSync(join(base, folders[1], 'out', 'profiles')).sort()).toEqual(profiles)
    for (const p of profiles) expect(read(folders[1], `profiles/${p}`), p).toBe(read(folders[0], `profiles/${p}`))
    // the default plan holds out half of the conversations: tuning and held-out figures, no folder in any key
    expect(Object.keys(JSON.parse(read(folders[0], 'profiles/retrieval-routed.json')).metrics)).toEqual([
      'recall@10_tuning',
      'recall@10_holdout',
      'recall@10_holdout_defaults',
      'recall@10_holdout_delta',
      'recall@10_holdout_delta_ci_low',
      'recall@10_holdout_delta_ci_high',
      'holdout_queries',
    ])
  })

  it('names no absolute path of its folder in any report or profile', () => {
    for (const f of folders) {
      const files = [
        'report.json',
        'report.md',
        ...readdirSync(join(base, f, 'out', 'profiles')).map((p) => `profiles/${p}`),
      ]
      for (const file of files) expect(read(f, file), `${f}/out/${file}`).not.toContain(base)
    }
  })
})

describe('an engine-file study run from two different folders', () => {
  let root: string
  const places = ['one/clone', 'other/deeper/clone']

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'kt-relocation-engine-'))
    for (const place of places) {
      const dir = join(root, place)
      cpSync(join(packageRoot, 'examples', 'python-engine'), join(dir, 'engine'), {recursive: true})
      mkdirSync(join(dir, 'data'), {recursive: true})
      cpSync(join(packageRoot, 'fixtures', 'memory_small.json'), join(dir, 'data', 'memory_small.json'))
      // the service engine's P99 is its cost model: the study repeats exactly, so its files can be compared byte for byte
      const args = ['search', '--engine', 'engine/engine.service.json', '--data', 'data/memory_small.json']
      const r = kt(
        [...args, '--split', 'conversations:0.5', '--budget', '2', '--storage', 's.sqlite', '--out', 'out'],
        {
          cwd: dir,
        },
      )
      expect(r.status, r.stderr).toBe(0)
    }
  }, 180_000)

  afterAll(() => rmSync(root, {recursive: true, force: true}))

  it('writes the same profiles and report, naming no absolute path, and each profile finds its engine file', () => {
    const at = (place: string, rel: string): string => readFileSync(join(root, place, 'out', rel), 'utf8')
    const profiles = readdirSync(join(root, places[0], 'out', 'profiles')).sort()
    expect(profiles).toContain('defaults.json')
    expect(readdirSync(join(root, places[1], 'out', 'profiles')).sort()).toEqual(profiles)
    // report.md above its timing section (the trials' durations differ)
    const same = (place: string, p: string): string => at(place, p).split('\n## Timing')[0]
    for (const p of [...profiles.map((f) => `profiles/${f}`), 'profiles.json', 'report.md']) {
      expect(same(places[1], p), p).toBe(same(places[0], p))
      for (const place of places) expect(at(place, p), `${place}/out/${p}`).not.toContain(root)
    }
    for (const place of places) {
      const report = at(place, 'report.json')
      expect(report).not.toContain(root)
      expect(JSON.parse(report).study.engine.file).toBe('../engine/engine.service.json')
    }
  })
})
