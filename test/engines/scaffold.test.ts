import {afterAll, describe, expect, it} from 'vitest'
import {mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {spawnSync} from 'node:child_process'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {ENGINE_KINDS, ENGINE_LANGS, initEngine} from '../../src/engines/scaffold.js'
import {loadEngineFile} from '../../src/engines/file.js'
import {loadAnyPlan} from '../../phases/engine-plan.js'
import {packageRoot} from '../../src/util/paths.js'

const root = mkdtempSync(join(tmpdir(), 'kt-init-'))
afterAll(() => rmSync(root, {recursive: true, force: true}))

describe('kt init (initEngine)', () => {
  for (const kind of ENGINE_KINDS)
    for (const lang of ENGINE_LANGS)
      it(`writes a ${kind} skeleton in ${lang} whose engine file loads with two parameters`, () => {
        const dir = join(root, `${kind}-${lang}`)
        mkdirSync(dir)
        const written = initEngine({kind, lang, name: 'my-engine', dir})
        expect(readdirSync(dir).sort()).toEqual([...written].sort())
        const engine = loadEngineFile(join(dir, 'engine.json'))
        expect(engine.evaluate.kind).toBe(kind)
        expect(engine.space.params.map((p) => p.name)).toEqual(['bm25.k1', 'candidates'])
        expect(readFileSync(join(dir, 'KT-README.md'), 'utf8')).toContain('npx kt search --engine engine.json')
        // every kind has a plan; only the retrieval service's names data (the others evaluate on their own)
        const plan = loadAnyPlan(join(dir, 'plan.json'))
        expect(plan.kind === 'engine' && plan.loaded.plan.data !== undefined).toBe(kind === 'retrieval-service')
      })

  it("writes an engine-only plan (kt_plan 2) for the engine, on the conversations in the user's folder", () => {
    const any = loadAnyPlan(join(root, 'retrieval-service-python', 'plan.json'))
    expect(any.kind).toBe('engine')
    if (any.kind !== 'engine') return
    expect(any.loaded.plan.engine).toBe('engine.json')
    const data = any.loaded.plan.data!
    expect('conversations' in data && any.loaded.resolvePath(data.conversations)).toBe(
      join(root, 'retrieval-service-python', 'memory.json'),
    )
    // kt's own files resolve inside the package (kt: paths), through the same loader kt run uses
    expect(any.loaded.resolvePath('kt:fixtures/realistic_100.json')).toBe(
      join(packageRoot, 'fixtures', 'realistic_100.json'),
    )
  })

  it('refuses a folder holding any of its files, naming it, and writes nothing', () => {
    const dir = join(root, 'taken')
    mkdirSync(dir)
    writeFileSync(join(dir, 'service.py'), 'mine')
    expect(() => initEngine({kind: 'retrieval-service', lang: 'python', name: 'x', dir})).toThrow(
      /taken\/service\.py: expected a folder without the files kt init writes \(nothing was written\), got service\.py already there/,
    )
    expect(readdirSync(dir)).toEqual(['service.py'])
    expect(readFileSync(join(dir, 'service.py'), 'utf8')).toBe('mine')
  })

  it('refuses an engine name outside the name alphabet', () => {
    expect(() => initEngine({kind: 'command', lang: 'python', name: '../x', dir: root})).toThrow(
      /--name: expected letters/,
    )
  })
})

describe('the plan kt init writes runs as written (kt run --plan plan.json)', () => {
  const bin = join(packageRoot, 'bin', 'kt.js')
  // the http kind needs its server running: the command kind in both languages is the metrics-only path
  for (const lang of ENGINE_LANGS)
    it(`a command skeleton in ${lang}: a verdict (not validated, exit 1), the phases that do not apply with their reasons`, () => {
      const dir = join(root, `run-command-${lang}`)
      mkdirSync(dir)
      initEngine({kind: 'command', lang, name: 'my-engine', dir})
      const run = spawnSync(process.execPath, [bin, 'run', '--plan', 'plan.json', '--json'], {
        cwd: dir,
        encoding: 'utf8',
      })
      expect(run.status, run.stderr).toBe(1)
      const out = JSON.parse(run.stdout) as {verdict: string; report_json: string; report_md: string}
      expect(out.verdict).toBe('not-validated')
      const report = JSON.parse(readFileSync(out.report_json, 'utf8')) as {engine: {not_applicable: object}}
      expect(Object.keys(report.engine.not_applicable).sort()).toEqual(['ablation', 'synthetic', 'validation'])
      expect(readFileSync(out.report_md, 'utf8')).toMatch(/Phase validation: not applicable: .*no per-question results/)
    })
})
