/**
 * What a `kt search --engine` study leaves behind: no secret from --storage in what it writes or
 * what kt deploy copies from it (review D#2); metric keys no profile can hold handled, outputs
 * written whole or not at all (D#6); nothing at all after bad input (R#12).
 */
import {existsSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {parseEngineFile} from '../../src/adapters/file.js'
import {writeEngineStudyOutputs} from '../../src/study/engine-study.js'
import type {TrialRow} from '../../src/study/model.js'
import {InputError} from '../../src/util/errors.js'
import {kt} from '../cli/helpers.js'
import {TINY, tinyEngine} from './helpers.js'
import {postgresForTests} from '../helpers/postgres.js'

/** Every file under a folder (recursively), with its text. */
function filesUnder(dir: string): Array<[string, string]> {
  const out: Array<[string, string]> = []
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) out.push(...filesUnder(path))
    else out.push([path, readFileSync(path, 'latin1')])
  }
  return out
}

const pg = postgresForTests()

describe.skipIf(pg.skip)(`kt search --engine with a PostgreSQL password in --storage ${pg.label}`, () => {
  it('writes the password into no profile, and kt deploy copies it nowhere', async () => {
    const url = await pg.database('kt_secret')
    const password = decodeURIComponent(new URL(url).password)
    expect(password.length).toBeGreaterThan(3)
    const dir = mkdtempSync(join(tmpdir(), 'kt-secret-'))
    const out = join(dir, 'out')
    const r = kt(
      [
        'search',
        '--engine',
        tinyEngine(dir),
        '--optimizer',
        'random',
        '--trials',
        '2',
        '--storage',
        url,
        '--study',
        'secret',
        '--out',
        out,
        '--json',
      ],
      {cwd: dir},
    )
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout).not.toContain(password)
    const written = filesUnder(out)
    expect(written.map(([f]) => f)).toContain(join(out, 'profiles', 'best.env'))
    for (const [file, text] of written) expect(text.includes(password), `${file} holds the password`).toBe(false)
    expect(JSON.parse(readFileSync(join(out, 'profiles', 'best.json'), 'utf8')).source_run).toBe('secret')
    // a PostgreSQL study keeps its trials' output under ./kt-studies of the working folder
    const artifacts = filesUnder(join(dir, 'kt-studies'))
    expect(artifacts.length).toBeGreaterThan(0)
    for (const [file, text] of artifacts) expect(text.includes(password), `${file} holds the password`).toBe(false)
    const target = join(dir, 'deployed')
    const d = kt(
      [
        'deploy',
        join(out, 'profiles', 'best.json'),
        '--engine',
        join(dir, 'engine.json'),
        '--target',
        target,
        '--force',
        '--reason',
        'test',
      ],
      {cwd: dir},
    )
    expect(d.status).toBe(0)
    const deployed = filesUnder(target)
    expect(deployed.map(([f]) => f)).toContain(join(target, 'active.env'))
    for (const [file, text] of deployed) expect(text.includes(password), `${file} holds the password`).toBe(false)
  })
})

describe('kt search --engine: what the study writes', () => {
  it('a metric key the engine prints that no profile can hold is left out of the profiles, said once on stderr; the study and its outputs finish', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-metric-key-'))
    const out = join(dir, 'out')
    const engine = tinyEngine(dir, {
      evaluate: {
        kind: 'command',
        command: [process.execPath, TINY],
        timeout_s: 20,
        env: {TEST_EXTRA_METRICS: JSON.stringify({'my metric': 1, ok_metric: 2})},
      },
    })
    const r = kt([
      'search',
      '--engine',
      engine,
      '--optimizer',
      'random',
      '--trials',
      '3',
      '--storage',
      join(dir, 's.sqlite'),
      '--study',
      'k',
      '--out',
      out,
      '--json',
    ])
    expect(r.status).toBe(0)
    expect(r.stderr).toBe(
      'kt: warning: metrics "my metric" printed by engine tiny are left out of its profiles (a profile\'s metric keys are letters, digits and _ . @ : -, at most 64)\n',
    )
    const best = JSON.parse(readFileSync(join(out, 'profiles', 'best.json'), 'utf8'))
    expect(Object.keys(best.metrics).sort()).toEqual(['ok_metric', 'score', 'trial'])
    expect(best.notes.at(-1)).toContain('"my metric"')
    const d = kt([
      'deploy',
      join(out, 'profiles', 'best.json'),
      '--engine',
      engine,
      '--target',
      join(dir, 't'),
      '--force',
      '--reason',
      'test',
    ])
    expect(d.status).toBe(0)
  })

  it('a profile refused while the outputs are made leaves --out untouched: nothing is written before everything is checked', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-half-'))
    const spec = parseEngineFile(JSON.parse(readFileSync(tinyEngine(dir), 'utf8')), join(dir, 'engine.json'))
    // a table the loader now refuses (a choice no profile can export), as a study made before it would have had
    const mode = spec.space.params.find((p) => p.name === 'mode') as unknown as {choices: unknown[]}
    mode.choices.push("it's")
    const row = (id: number, x: number, m: string): TrialRow => ({
      study: 's',
      id,
      configId: `c${id}`,
      config: {x, mode: m},
      budget: 1,
      continues: null,
      info: null,
      status: 'ok',
      loss: -x,
      values: null,
      metrics: {score: x},
      checkpoint: null,
      error: null,
      tellSeq: id,
      asksBefore: null,
      startedAt: null,
      finishedAt: null,
      durationMs: null,
      worker: null,
    })
    const out = join(dir, 'out')
    const error = await writeEngineStudyOutputs(spec, [row(0, 0.2, 'a'), row(1, 0.9, "it's")], out, 's').catch(
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(InputError)
    expect((error as Error).message).toContain('profile best: config.mode')
    expect(existsSync(out) ? readdirSync(out) : []).toEqual([])
  })

  it('an invalid engine file leaves no study store and no --out folder', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-bad-engine-'))
    const engine = tinyEngine(dir, {name: '_tiny'})
    const r = kt([
      'search',
      '--engine',
      engine,
      '--storage',
      join(dir, 's.sqlite'),
      '--out',
      join(dir, 'out', 'deeper'),
    ])
    expect(r.status).toBe(2)
    expect(r.stderr).toBe(
      `kt: ${engine}: name: expected a name of letters, digits, dot, dash or underscore starting with a letter or digit (at most 64), got "_tiny"\n`,
    )
    expect(readdirSync(dir)).toEqual(['engine.json'])
  })

  it('bad --data leaves no study store and no --out folder', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-bad-data-'))
    writeFileSync(join(dir, 'notjson.json'), 'notjson\n')
    const r = kt([
      'search',
      '--objective',
      'retrieval',
      '--data',
      join(dir, 'notjson.json'),
      '--trials',
      '2',
      '--storage',
      join(dir, 's.sqlite'),
      '--out',
      join(dir, 'out'),
    ])
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/^kt: .*notjson\.json:1:2: expected valid JSON/)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(readdirSync(dir)).toEqual(['notjson.json'])
  })
})
