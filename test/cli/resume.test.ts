import {describe, expect, it} from 'vitest'
import {cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {runStudy} from '../../phases/runner.js'
import {Checkpoints, codeIdentityOf, CHECKPOINT_DIR, type RunInputs} from '../../phases/lib/checkpoints.js'
import {packageRoot} from '../../src/util/paths.js'

const fixture = (name: string) => join(packageRoot, 'fixtures', name)

/** A plan in `dir` tuned on realistic_100, held out on a copy of recency_bias_75 in `dir` (hold.json). */
function setup(extra: (plan: Record<string, unknown>, dir: string) => void = () => {}) {
  const dir = mkdtempSync(join(tmpdir(), 'kt-resume-'))
  cpSync(fixture('recency_bias_75.json'), join(dir, 'hold.json'))
  const plan = JSON.parse(readFileSync(join(packageRoot, 'phases', 'plan.default.json'), 'utf8'))
  plan.datasets = {tune: fixture('realistic_100.json'), holdout: ['hold.json'], imported: []}
  delete plan.retrieval
  extra(plan, dir)
  writeFileSync(join(dir, 'plan.json'), JSON.stringify(plan))
  return {dir, planFile: join(dir, 'plan.json'), out: join(dir, 'out')}
}

describe('kt run --resume reuses a checkpoint only when everything it was computed from is unchanged', () => {
  it('a held-out dataset changed in content (same id, turn count and reference time) is recomputed: the leak it now has is found', async () => {
    const {dir, planFile, out} = setup()
    const first = await runStudy({planFile, seed: 42, outDir: out, phases: ['synthetic']})
    expect(first.report.phases.synthetic!.leaks_found).toBe(0)
    expect((await runStudy({planFile, seed: 42, outDir: out, phases: ['synthetic'], resume: true})).reused).toEqual([
      'synthetic',
    ])
    // the reviewers' attack: surprise = truth on every turn, keeping id, n and reference_time
    const hold = JSON.parse(readFileSync(join(dir, 'hold.json'), 'utf8'))
    for (const t of hold.turns) t.surprise = t.truth
    writeFileSync(join(dir, 'hold.json'), JSON.stringify(hold, null, 2))
    const again = await runStudy({planFile, seed: 42, outDir: out, phases: ['synthetic'], resume: true})
    expect(again.reused).toEqual([])
    expect(again.notReused[0].reason).toMatch(
      /^the inputs changed since its checkpoint: datasets\.holdout\[0\] hold\.json changed \(sha256 [0-9a-f]{12} -> [0-9a-f]{12}\)$/,
    )
    expect(
      again.report.phases
        .synthetic!.datasets.find((d) => d.role === 'holdout')!
        .leakage.find((a) => a.signal === 'surprise')!.verdict,
    ).toBe('leak')
  })

  it('a changed plan, retrieval data or engine script (beside the engine file) invalidates the checkpoints too', async () => {
    const {dir, planFile, out} = setup((plan, d) => {
      mkdirSync(join(d, 'engine'))
      for (const f of ['engine.service.json', 'service.py', 'memengine.py'])
        cpSync(join(packageRoot, 'examples', 'python-engine', f), join(d, 'engine', f))
      cpSync(fixture('memory_small.json'), join(d, 'memory.json'))
      plan.retrieval = {
        data: 'memory.json',
        engine: 'engine/engine.service.json',
        metric: 'recall@10',
        optimizer: 'random',
        budget: 1,
      }
    })
    // Phase 1 alone: the retrieval study does not run, but its inputs are part of every checkpoint's key
    const run = () => runStudy({planFile, seed: 42, outDir: out, phases: ['properties'], resume: true})
    await run()
    expect((await run()).reused).toEqual(['properties'])
    const edits: Array<[string, RegExp]> = [
      ['engine/service.py', /retrieval\.engine \(folder\) engine\/service\.py changed/],
      ['engine/engine.service.json', /retrieval\.engine engine\/engine\.service\.json changed/],
      ['memory.json', /retrieval\.data memory\.json changed/],
      ['plan.json', /plan plan\.json changed/],
    ]
    for (const [file, reason] of edits) {
      const path = join(dir, file)
      writeFileSync(
        path,
        file.endsWith('.py') ? `${readFileSync(path, 'utf8')}\n# edited\n` : `${readFileSync(path, 'utf8')}\n`,
      )
      const r = await run()
      expect(r.reused, file).toEqual([])
      expect(r.notReused[0].reason, file).toMatch(reason)
      expect((await run()).reused, file).toEqual(['properties'])
    }
  })

  it('a phase whose output files are missing or changed is recomputed (and rewrites them); so is every phase that reads a recomputed one', async () => {
    const {planFile, out} = setup()
    await runStudy({planFile, seed: 42, outDir: out, phases: ['deploy']})
    const env = join(out, 'profiles', 'optimum.env')
    const original = readFileSync(env, 'utf8')
    const resume = () => runStudy({planFile, seed: 42, outDir: out, phases: ['deploy'], resume: true})
    expect((await resume()).reused).toEqual(['synthetic', 'search', 'validation', 'deploy'])
    rmSync(join(out, 'profiles'), {recursive: true})
    let r = await resume()
    expect(r.reused).toEqual(['synthetic', 'search', 'validation'])
    expect(r.notReused).toEqual([{phase: 'deploy', reason: 'its output profiles/baseline.env is missing'}])
    expect(readFileSync(env, 'utf8')).toBe(original)
    writeFileSync(env, 'IMPORTANCE_WEIGHT_DECAY=1\n')
    expect((await resume()).notReused).toEqual([
      {phase: 'deploy', reason: 'its output profiles/optimum.env was changed'},
    ])
    expect(readFileSync(env, 'utf8')).toBe(original)
    // the search's study store gone: the search is recomputed, and validation and deploy with it
    rmSync(join(out, 'studies.sqlite'))
    r = await resume()
    expect(r.reused).toEqual(['synthetic'])
    expect(r.notReused.map((n) => `${n.phase}: ${n.reason}`)).toEqual([
      'search: its output studies.sqlite is missing',
      'validation: it reads phase 4 (search), which is recomputed',
      'deploy: it reads phase 4 (search), which is recomputed',
    ])
  })

  it('a checkpoint of another format (the one JSON reader and its schema) or torn is not reused', async () => {
    const {planFile, out} = setup()
    await runStudy({planFile, seed: 42, outDir: out, phases: ['synthetic']})
    const file = join(out, CHECKPOINT_DIR, 'synthetic.json')
    const saved = JSON.parse(readFileSync(file, 'utf8'))
    // the format before this one: {key, result}
    writeFileSync(file, JSON.stringify({key: saved.key, result: saved.result}))
    let r = await runStudy({planFile, seed: 42, outDir: out, phases: ['synthetic'], resume: true})
    expect(r.notReused).toEqual([{phase: 'synthetic', reason: 'its checkpoint is from another kt version'}])
    writeFileSync(file, readFileSync(file, 'utf8').slice(0, 100))
    r = await runStudy({planFile, seed: 42, outDir: out, phases: ['synthetic'], resume: true})
    expect(r.notReused).toEqual([{phase: 'synthetic', reason: 'its checkpoint is torn'}])
  })

  it('the retrieval study store is continued only when it was started from the same inputs', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-resume-store-'))
    const inputs: RunInputs = {files: [], code: 'x'}
    new Checkpoints(dir, 'a'.repeat(64), inputs, String).markRetrievalStore()
    expect(new Checkpoints(dir, 'a'.repeat(64), inputs, String).retrievalStoreMatches()).toBe(true)
    expect(new Checkpoints(dir, 'b'.repeat(64), inputs, String).retrievalStoreMatches()).toBe(false)
  })

  it('the code identity is the content of the code: the same in a fresh copy elsewhere (other times, other place), different after any edit', () => {
    const make = () => {
      const root = mkdtempSync(join(tmpdir(), 'kt-code-'))
      for (const [f, text] of [
        ['src/a.js', 'export const a = 1\n'],
        ['phases/lib/b.js', 'export const b = 2\n'],
        ['src/types.d.ts', 'x'],
        ['package.json', '{"name":"kt"}'],
        ['package-lock.json', '{}'],
      ]) {
        mkdirSync(join(root, f, '..'), {recursive: true})
        writeFileSync(join(root, f), text)
      }
      return root
    }
    const [a, b] = [make(), make()]
    utimesSync(join(b, 'src', 'a.js'), new Date(0), new Date(0))
    const id = codeIdentityOf(a, a)
    expect(codeIdentityOf(b, b)).toBe(id)
    // declaration files do not run
    writeFileSync(join(b, 'src', 'types.d.ts'), 'y')
    expect(codeIdentityOf(b, b)).toBe(id)
    for (const f of ['phases/lib/b.js', 'package-lock.json']) {
      const c = make()
      writeFileSync(join(c, f), `${readFileSync(join(c, f), 'utf8')} `)
      expect(codeIdentityOf(c, c), f).not.toBe(id)
    }
    const moved = make()
    cpSync(join(moved, 'src', 'a.js'), join(moved, 'src', 'c.js'))
    rmSync(join(moved, 'src', 'a.js'))
    expect(codeIdentityOf(moved, moved)).not.toBe(id)
    expect(existsSync(join(a, 'src', 'a.js'))).toBe(true)
  })
})
