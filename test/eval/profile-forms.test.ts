/**
 * What `kt eval --profile/--against` reads: a profile's `{config}` on its own or an entry of kt
 * search's profiles.json (an unknown parameter is named), and the word `defaults`; and the
 * profiles/<name>.json that kt search writes for kt's own retrieval objective without a split.
 */
import {mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {loadRetrievalProfile} from '../../src/eval/profile.js'
import {loadEngineProfile} from '../../src/eval/service-eval.js'
import {defaultConfig} from '../../src/space/index.js'
import {RETRIEVAL_SPACE} from '../../src/engine/retrieval/space.js'
import {loadEngineFile} from '../../src/adapters/file.js'
import {packageRoot} from '../../src/util/paths.js'
import {kt} from '../cli/helpers.js'

let dir: string
const data = join(packageRoot, 'fixtures', 'memory_small.json')

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kt-profile-forms-'))
})
afterAll(() => rmSync(dir, {recursive: true, force: true}))

describe('profile files kt eval reads', () => {
  it('takes {config} alone or as a profiles.json entry, and names an unknown parameter inside it', () => {
    const config = {...defaultConfig(RETRIEVAL_SPACE), 'bm25.k1': 1.7}
    writeFileSync(join(dir, 'c.json'), JSON.stringify({config}))
    expect(loadRetrievalProfile(join(dir, 'c.json')).config['bm25.k1']).toBe(1.7)
    const entry = {
      profile: 'balanced',
      description: 'x',
      trial_id: 3,
      config,
      metrics: {},
      on_front: true,
      rationale: [],
    }
    writeFileSync(join(dir, 'entry.json'), JSON.stringify({...entry, tuning_quality: 0.5, constraints: [], cost: null}))
    expect(loadRetrievalProfile(join(dir, 'entry.json')).config['bm25.k1']).toBe(1.7)
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({config: {...config, 'bm25.kk': 1}}))
    expect(() => loadRetrievalProfile(join(dir, 'bad.json'))).toThrow(
      `${join(dir, 'bad.json')}: config: bm25.kk: expected a parameter of space retrieval, got an unknown name`,
    )
    writeFileSync(join(dir, 'extra.json'), JSON.stringify({config, weights: 1}))
    expect(() => loadRetrievalProfile(join(dir, 'extra.json'))).toThrow(`${join(dir, 'extra.json')}: weights:`)
  })

  it('reads defaults as the space defaults, for kt and for an engine file', () => {
    expect(loadRetrievalProfile('defaults').config).toEqual(defaultConfig(RETRIEVAL_SPACE))
    const engine = loadEngineFile(join(packageRoot, 'examples', 'python-engine', 'engine.stdio.json'))
    expect(loadEngineProfile('defaults', engine.space)).toEqual(defaultConfig(engine.space))
  })

  it('kt eval --against defaults compares with the defaults instead of looking for a file', () => {
    writeFileSync(join(dir, 'k1.json'), JSON.stringify({config: {'bm25.k1': 0.4}}))
    const r = kt(['eval', '--data', data, '--profile', join(dir, 'k1.json'), '--against', 'defaults', '--json'], {
      cwd: dir,
    })
    expect(r.status, r.stderr).toBe(0)
    const against = JSON.parse(r.stdout).against
    expect(against.b).toBe('defaults')
    expect(against.differences.length).toBeGreaterThan(0)
  }, 60_000)
})

describe('kt search --objective retrieval --out without a split', () => {
  it('writes profiles/<name>.json, not validated, that kt eval --profile reads', () => {
    const out = join(dir, 'out')
    const r = kt(
      ['search', '--objective', 'retrieval', '--data', data, '--budget', '1', '--storage', 's.sqlite', '--out', out],
      {cwd: dir},
    )
    expect(r.status, r.stderr).toBe(0)
    const listed = JSON.parse(readFileSync(join(out, 'profiles.json'), 'utf8')) as Array<{
      profile: string
      config: unknown
    }>
    const chosen = listed.filter((p) => p.config !== null).map((p) => `${p.profile}.json`)
    expect(chosen.length).toBeGreaterThan(0)
    const written = readdirSync(join(out, 'profiles'))
    for (const name of chosen) {
      expect(written).toContain(name)
      const profile = JSON.parse(readFileSync(join(out, 'profiles', name), 'utf8'))
      expect(profile.validation.verdict).toBe('not-validated')
      expect(profile.metrics['recall@10_on_memory_small']).toBeTypeOf('number')
    }
    const e = kt(['eval', '--data', data, '--profile', join(out, 'profiles', chosen[0]), '--json'], {cwd: dir})
    expect(e.status, e.stderr).toBe(0)
  }, 120_000)
})
