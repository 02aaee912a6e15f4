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
