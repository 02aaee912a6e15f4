/**
 * The one post-study pipeline (src/study/pipeline.ts): `kt search --engine` with a split leaves a
 * short study name that --resume takes as printed, engine profiles that name no absolute path,
 * and finishStudy exposes the held-out verdicts with each profile's per-question rows (what an
 * ablation or a per-category check pairs its own configurations with).
 */
import {cpSync, mkdtempSync, readFileSync, readdirSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, resolve} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {kt} from '../cli/helpers.js'
import {packageRoot} from '../../src/util/paths.js'
import {finishStudy} from '../../src/study/pipeline.js'
import {openStorage} from '../../src/study/storage.js'

let dir: string
let first: {status: number | null; stdout: string; stderr: string}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kt-pipeline-'))
  cpSync(join(packageRoot, 'examples', 'python-engine'), join(dir, 'engine'), {recursive: true})
  cpSync(join(packageRoot, 'fixtures', 'memory_small.json'), join(dir, 'memory_small.json'))
  first = kt(
    [
      'search',
      '--engine',
      'engine/engine.stdio.json',
      '--data',
      'memory_small.json',
      '--split',
      'conversations:0.5',
      '--budget',
      '2',
      '--storage',
      'studies.sqlite',
      '--out',
      'out',
      '--json',
    ],
    {cwd: dir},
  )
}, 120_000)

afterAll(() => rmSync(dir, {recursive: true, force: true}))

describe('kt search --per-type --out', () => {
  it('leaves the all-queries study report beside routed.json, and domain profiles', () => {
    const data = join(dir, 'memory_small.json')
    const args = ['search', '--objective', 'retrieval', '--per-type', '--data', data, '--budget', '1']
    const r = kt([...args, '--storage', 'pt.sqlite', '--out', 'pt'], {cwd: dir})
    expect(r.status, r.stderr).toBe(0)
    expect(JSON.parse(readFileSync(join(dir, 'pt', 'report.json'), 'utf8')).study.name).toBe('retrieval-bohb-s42-all')
    expect(readdirSync(join(dir, 'pt'))).toContain('routed.json')
    expect(readdirSync(join(dir, 'pt', 'profiles')).length).toBeGreaterThan(0)
    expect(kt(['report', 'pt', '--format', 'html'], {cwd: dir}).status).toBe(0)
  }, 120_000)
})

describe('kt search --out of a benchmark function', () => {
  it('leaves a report.json too, with the best trial', () => {
    const r = kt(['search', '--objective', 'branin', '--trials', '6', '--storage', 'b.sqlite', '--out', 'branin'], {
      cwd: dir,
    })
    expect(r.status, r.stderr).toBe(0)
    const md = kt(['report', 'branin', '--format', 'md', '--stdout'], {cwd: dir})
    expect(md.status, md.stderr).toBe(0)
    expect(md.stdout).toContain('## Study branin-bohb-s42')
    expect(md.stdout).toContain('Best trial')
  }, 60_000)
})

describe('kt search --engine with a split', () => {
  it('names the study <engine>-<optimizer>-s<seed>, and --resume takes that name', () => {
    expect(first.status, first.stderr).toBe(0)
    const json = JSON.parse(first.stdout)
    expect(json.name).toBe('memengine-py-stdio-bohb-s42')
    // the data is recorded in the study, not in its name
    expect(JSON.stringify(json.objective)).toContain('memory_small.json')
    const again = kt(['search', '--resume', 'memengine-py-stdio-bohb-s42', '--storage', 'studies.sqlite', '--json'], {
      cwd: dir,
    })
    expect(again.status, again.stderr).toBe(0)
    expect(JSON.parse(again.stdout).name).toBe('memengine-py-stdio-bohb-s42')
  }, 120_000)

  it('writes engine profiles that name their engine file relative to their folder, never absolute', () => {
    const profiles = readdirSync(join(dir, 'out', 'profiles')).filter((f) => f.endsWith('.json'))
    expect(profiles).toContain('defaults.json')
    for (const p of profiles) {
      const text = readFileSync(join(dir, 'out', 'profiles', p), 'utf8')
      expect(text, p).not.toContain(dir)
      const file = JSON.parse(text).engine.file as string
      expect(resolve(join(dir, 'out', 'profiles'), file)).toBe(join(dir, 'engine', 'engine.stdio.json'))
    }
    const listing = JSON.parse(readFileSync(join(dir, 'out', 'profiles.json'), 'utf8'))
    expect(resolve(join(dir, 'out'), listing.engine_file)).toBe(join(dir, 'engine', 'engine.stdio.json'))
  })

  it('leaves a report.json that kt report renders as md and html, naming no absolute path', () => {
    const report = readFileSync(join(dir, 'out', 'report.json'), 'utf8')
    expect(report).not.toContain(dir)
    const parsed = JSON.parse(report)
    expect(parsed.study.name).toBe('memengine-py-stdio-bohb-s42')
    expect(parsed.study.engine).toEqual({
      name: 'memengine-py-stdio',
      file: '../engine/engine.stdio.json',
      latency: 'measured',
    })
    expect(parsed.study.data).toBe('memory_small.json')
    expect(parsed.study.validation.profiles.map((p: {name: string}) => p.name)).toEqual([
      'best-quality',
      'high-throughput',
    ])
    for (const format of ['md', 'html']) {
      const r = kt(['report', 'out', '--format', format], {cwd: dir})
      expect(r.status, r.stderr).toBe(0)
      const text = readFileSync(join(dir, 'out', `report.${format}`), 'utf8')
      expect(text).toContain('Study memengine-py-stdio-bohb-s42')
      expect(text).toContain('best-quality')
    }
  }, 60_000)

  it('finishStudy gives the held-out verdicts and each profile per question, in the defaults order', async () => {
    const storage = await openStorage(join(dir, 'studies.sqlite'), {mustExist: true})
    const study = (await storage.getStudy('memengine-py-stdio-bohb-s42'))!
    const trials = await storage.trials(study.name)
    await storage.close()
    const done = await finishStudy({study, trials})
    expect(done.engine?.name).toBe('memengine-py-stdio')
    expect(done.files).toEqual([])
    const q = done.questions!
    expect(q.ids.length).toBe(done.validation!.queries)
    expect(q.categories.length).toBe(q.ids.length)
    expect(q.defaults.length).toBe(q.ids.length)
    expect(Object.keys(q.profiles).sort()).toEqual(done.validation!.profiles.map((p) => p.name).sort())
    for (const p of done.validation!.profiles) {
      const rows = q.profiles[p.name]
      expect(rows.length).toBe(q.ids.length)
      // the verdict's mean is the mean of the rows it exposes
      const mean = rows.reduce((s, r) => s + r['recall@10'], 0) / rows.length
      expect(mean).toBeCloseTo(p.quality, 12)
    }
    expect(new Set(q.ids).size).toBe(q.ids.length)
  }, 120_000)
})
