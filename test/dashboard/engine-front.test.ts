/**
 * The dashboard's page of an engine file's study shows what `kt search` printed for it: the
 * engine file's own profiles (not kt's retrieval domain profiles), the latency kind the study
 * really used, and the same front, reference point and hypervolume.
 */
import {cpSync, mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {kt} from '../cli/helpers.js'
import {packageRoot} from '../../src/util/paths.js'
import {openStorage} from '../../src/study/storage.js'
import {studyView} from '../../src/dashboard/views.js'
import {frontChart} from '../../src/dashboard/charts.js'

let dir: string
let printed: {front: {hypervolume: number; hypervolume_share: number; reference: number[]}; profiles: unknown[]}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kt-dash-engine-'))
  cpSync(join(packageRoot, 'examples', 'python-engine'), join(dir, 'engine'), {recursive: true})
  const r = kt(
    [
      'search',
      '--engine',
      'engine/engine.stdio.json',
      '--data',
      join(packageRoot, 'fixtures', 'memory_small.json'),
      '--budget',
      '2',
      '--storage',
      'studies.sqlite',
      '--json',
    ],
    {cwd: dir},
  )
  expect(r.status, r.stderr).toBe(0)
  printed = JSON.parse(r.stdout)
}, 120_000)

afterAll(() => rmSync(dir, {recursive: true, force: true}))

describe('the dashboard view of an engine-file study', () => {
  it("shows the engine's profiles, its latency kind and the CLI's hypervolume", async () => {
    const storage = await openStorage(join(dir, 'studies.sqlite'), {mustExist: true})
    const study = (await storage.getStudy('memengine-py-stdio-bohb-s42'))!
    const trials = await storage.trials(study.name)
    await storage.close()
    const view = studyView(study, trials)
    expect(view.profiles.map((p) => p.name)).toEqual(['best-quality', 'high-throughput'])
    expect(view.front).not.toBeNull()
    const front = view.front!
    expect(front.latency_kind).toBe('measured')
    expect(front.quality_metric).toBe('recall@10')
    expect(front.hypervolume).toBe(printed.front.hypervolume)
    expect(front.hypervolume_share).toBe(printed.front.hypervolume_share)
    expect([front.reference.quality, front.reference.p99_ms]).toEqual(printed.front.reference)
    const chart = JSON.stringify(frontChart(view))
    expect(chart).toContain('"field":"recall@10"')
    expect(chart).toContain("kt's measurement (wall time per search)")
    expect(chart).not.toContain('cost model')
  }, 60_000)
})
