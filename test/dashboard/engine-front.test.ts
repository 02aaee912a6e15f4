/**
 * The dashboard's page of an engine file's study shows what `kt search` printed for it: the
 * engine file's own profiles (not kt's retrieval domain profiles), the latency kind the study
 * really used, and the same front, reference point and hypervolume. For kt's own retrieval study
 * and an engine file's alike, the CLI, the report (report.json, report.md) and the dashboard
 * print one hypervolume.
 */
import {cpSync, mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {readFileSync} from 'node:fs'
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
      '--out',
      'engine-out',
      '--json',
    ],
    {cwd: dir},
  )
  expect(r.status, r.stderr).toBe(0)
  printed = JSON.parse(r.stdout)
}, 120_000)

/** A study's hypervolume as the report, its Markdown and the dashboard give it. */
async function hypervolumes(study: string, out: string) {
  const report = JSON.parse(readFileSync(join(dir, out, 'report.json'), 'utf8'))
  const md = readFileSync(join(dir, out, 'report.md'), 'utf8')
  const storage = await openStorage(join(dir, 'studies.sqlite'), {mustExist: true})
  const record = (await storage.getStudy(study))!
  const view = studyView(record, await storage.trials(study))
  await storage.close()
  return {report: report.study.front.hypervolume as number, md, dashboard: view.front!.hypervolume}
}

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

  it("prints one hypervolume in the CLI, the report and the dashboard, for an engine file and for kt's retrieval engine", async () => {
    const engine = await hypervolumes('memengine-py-stdio-bohb-s42', 'engine-out')
    expect(engine.report).toBe(printed.front.hypervolume)
    expect(engine.dashboard).toBe(printed.front.hypervolume)
    expect(engine.md).toContain(`hypervolume ${Number(printed.front.hypervolume.toPrecision(4))}`)
    const r = kt(
      [
        'search',
        '--objective',
        'retrieval',
        '--data',
        join(packageRoot, 'fixtures', 'memory_small.json'),
        '--budget',
        '2',
        '--storage',
        'studies.sqlite',
        '--out',
        'retrieval-out',
        '--json',
      ],
      {cwd: dir},
    )
    expect(r.status, r.stderr).toBe(0)
    const cli = JSON.parse(r.stdout).front.hypervolume as number
    expect(cli).toBeGreaterThan(0)
    const own = await hypervolumes('retrieval-bohb-s42', 'retrieval-out')
    expect(own.report).toBe(cli)
    expect(own.dashboard).toBe(cli)
    expect(own.md).toContain(`hypervolume ${Number(cli.toPrecision(4))}`)
  }, 120_000)

  it('draws each objective the way the engine file says it is better', () => {
    const front = {
      quality: 'loss',
      quality_metric: 'loss',
      latency: 'throughput',
      latency_kind: 'reported',
      directions: {quality: 'minimize', latency: 'maximize'},
      points: [1],
      dominated: [2],
    }
    const spec = frontChart({front, trials: {metric: {throughput: [5, 3]}}} as never)!
    const text = JSON.stringify(spec)
    expect(text).toContain('"title":"loss (lower is better)"')
    expect(text).toContain('"interpolate":"step-before"')
    expect(text).toContain('throughput (as the engine reports it)')
  })
})
