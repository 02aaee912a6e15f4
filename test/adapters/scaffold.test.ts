import {afterAll, describe, expect, it} from 'vitest'
import {mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {spawn, spawnSync} from 'node:child_process'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {ENGINE_KINDS, ENGINE_LANGS, initEngine} from '../../src/adapters/scaffold.js'
import {loadEngineFile} from '../../src/adapters/file.js'
import {loadAnyPlan} from '../../phases/engine-plan.js'
import {packageRoot} from '../../src/util/paths.js'
import {freePort} from '../../src/util/net.js'

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
  /** The phases a command or http engine has no per-question results for. */
  const perQuestion = ['ablation', 'synthetic', 'validation']
  for (const kind of ENGINE_KINDS)
    for (const lang of ENGINE_LANGS)
      it(`a ${kind} skeleton in ${lang}: a verdict, and the phases that do not apply with their reasons`, async () => {
        const dir = join(root, `run-${kind}-${lang}`)
        mkdirSync(dir)
        const port = kind === 'http' ? await freePort() : undefined
        initEngine({kind, lang, name: 'my-engine', dir, ...(port ? {port} : {})})
        // the http kind's server is the user's to start (KT-README.md step 1): kt POSTs to it
        const server = port
          ? spawn(
              lang === 'python' ? 'python3' : 'node',
              [lang === 'python' ? 'server.py' : 'server.mjs', '--port', String(port)],
              {
                cwd: dir,
                stdio: ['ignore', 'ignore', 'pipe'],
              },
            )
          : undefined
        try {
          if (server) await new Promise<void>((resolve) => server.stderr!.once('data', () => resolve()))
          const run = spawnSync(process.execPath, [bin, 'run', '--plan', 'plan.json', '--json'], {
            cwd: dir,
            encoding: 'utf8',
          })
          expect([0, 1], run.stderr).toContain(run.status)
          const out = JSON.parse(run.stdout) as {verdict: string; report_json: string; report_md: string}
          const report = JSON.parse(readFileSync(out.report_json, 'utf8')) as {engine: {not_applicable?: object}}
          if (kind === 'retrieval-service') {
            expect(['pass', 'fail']).toContain(out.verdict)
            expect(report.engine.not_applicable).toBeUndefined()
            return
          }
          expect([run.status, out.verdict]).toEqual([1, 'not-validated'])
          expect(Object.keys(report.engine.not_applicable!).sort()).toEqual(perQuestion)
          expect(readFileSync(out.report_md, 'utf8')).toMatch(
            /Phase validation: not applicable: .*no per-question results/,
          )
        } finally {
          server?.kill()
        }
      })
})
