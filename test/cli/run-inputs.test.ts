import {describe, expect, it} from 'vitest'
import {cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {kt} from './helpers.js'
import {runStudy} from '../../phases/runner.js'
import {packageRoot} from '../../src/util/paths.js'

const fixture = (name: string) => join(packageRoot, 'fixtures', name)
const TUNE = fixture('realistic_100.json')

/** Writes a plan into `dir` tuned on realistic_100, with the given held-out and imported files. */
function planWith(
  dir: string,
  holdout: string[],
  imported: string[] = [],
  edit: (p: Record<string, unknown>) => void = () => {},
): string {
  const plan = JSON.parse(readFileSync(join(packageRoot, 'phases', 'plan.default.json'), 'utf8'))
  plan.datasets = {tune: TUNE, holdout, imported}
  delete plan.retrieval
  edit(plan)
  const file = join(dir, `plan-${Math.random().toString(36).slice(2)}.json`)
  writeFileSync(file, JSON.stringify(plan))
  return file
}

const oneLine = (r: {stderr: string}) => r.stderr.trim().split('\n')

describe('held-out data that is the tuning set in disguise is refused in one line naming the plan field', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kt-disguise-'))
  cpSync(TUNE, join(dir, 'copy.json'))
  symlinkSync(TUNE, join(dir, 'link.json'))
  // the same turns, re-exported under another id and description (other bytes, other sha256)
  const renamed = JSON.parse(readFileSync(TUNE, 'utf8'))
  renamed.id = 'fresh_data'
  renamed.description = 'new data, honest'
  renamed.turns.reverse()
  writeFileSync(join(dir, 'renamed.json'), JSON.stringify(renamed))

  const cases: Array<[string, string[], string[], RegExp]> = [
    [
      'a byte copy',
      ['copy.json'],
      [],
      /: datasets\.holdout\[0\]: expected a dataset other than the tuning set \(validating on training data proves nothing\), got "copy\.json", a copy of datasets\.tune \(same sha256 [0-9a-f]{12}\)$/,
    ],
    [
      'a symlink',
      [fixture('uniform_50.json'), 'link.json'],
      [],
      /: datasets\.holdout\[1\]: expected a dataset other than the tuning set .*, got "link\.json", the same file as datasets\.tune \(through a link\)$/,
    ],
    [
      'an imported copy',
      [],
      ['copy.json'],
      /: datasets\.imported\[0\]: expected a dataset other than the tuning set .*a copy of datasets\.tune/,
    ],
    [
      'the same turns under another id',
      ['renamed.json'],
      [],
      /: datasets\.holdout\[0\]: .*got "renamed\.json", whose 100 turns are all turns of datasets\.tune$/,
    ],
  ]
  for (const [what, holdout, imported, message] of cases)
    it(what, async () => {
      const out = join(dir, `out-${what.replace(/\W/g, '')}`)
      await expect(
        runStudy({planFile: planWith(dir, holdout, imported), seed: 42, outDir: out, phases: ['properties']}),
      ).rejects.toThrow(message)
      expect(existsSync(out)).toBe(false)
    })

  it('through the CLI: one line, exit 2, nothing written', () => {
    const out = join(dir, 'out-cli')
    const r = kt(['phase', '1', '--plan', planWith(dir, ['copy.json']), '--out', out, '--json'])
    expect(r.status, r.stderr).toBe(2)
    expect(oneLine(r)).toHaveLength(1)
    expect(r.stderr.trim()).toMatch(cases[0][3])
    expect(existsSync(out)).toBe(false)
  })

  it('held-out turns whose text is also in the tuning set: a warning on stderr, in --json and in the report', async () => {
    const mixed = JSON.parse(readFileSync(fixture('uniform_50.json'), 'utf8'))
    const tune = JSON.parse(readFileSync(TUNE, 'utf8'))
    for (let i = 0; i < 7; i++) mixed.turns[i].text = tune.turns[i].text
    writeFileSync(join(dir, 'mixed.json'), JSON.stringify(mixed))
    const plan = planWith(dir, ['mixed.json'])
    const expected =
      'datasets.holdout[0] (mixed.json) shares 7 of 50 turn texts with the tuning set (datasets.tune): its validation is partly on data tuned on'
    const {report, warnings} = await runStudy({
      planFile: plan,
      seed: 42,
      outDir: join(dir, 'mixed-out'),
      phases: ['synthetic'],
    })
    expect(warnings).toEqual([expected])
    expect(report.run.warnings).toEqual([expected])
    expect(readFileSync(join(dir, 'mixed-out', 'report.md'), 'utf8')).toContain(`- **Warning**: ${expected}.`)
    const r = kt(['phase', '2', '--plan', plan, '--out', join(dir, 'mixed-cli'), '--json'])
    expect(r.status, r.stderr).toBe(0)
    expect(r.stderr).toContain(`kt: warning: ${expected}\n`)
    expect(JSON.parse(r.stdout).warnings).toEqual([expected])
    // the default plan's held-out fixtures share no turn with the tuning set: no warning there
    expect((await runStudy({seed: 42, outDir: join(dir, 'default-out'), phases: ['synthetic']})).warnings).toEqual([])
  })
})

describe('bad input leaves no output folder behind (every input is checked before --out is made)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kt-run-bad-'))
  const ds = JSON.parse(readFileSync(fixture('uniform_50.json'), 'utf8'))
  ds.turns[3].truth = 'NaN'
  writeFileSync(join(dir, 'nan.json'), JSON.stringify(ds))
  writeFileSync(join(dir, 'notjson.json'), '{"conversations": [')
  const engine = JSON.parse(readFileSync(join(packageRoot, 'examples', 'python-engine', 'engine.service.json'), 'utf8'))
  engine.parameters[0].low = 5 // above its high
  mkdirSync(join(dir, 'eng'))
  writeFileSync(join(dir, 'eng', 'engine.json'), JSON.stringify(engine))

  const cases: Array<[string, string, RegExp]> = [
    ['a bad held-out dataset', planWith(dir, ['nan.json']), /nan\.json: turns\[3\]\.truth: expected number, got "NaN"/],
    [
      'retrieval data that is not JSON',
      planWith(dir, [fixture('uniform_50.json')], [], (p) => {
        p.retrieval = {data: 'notjson.json', metric: 'recall@10', optimizer: 'random', budget: 1}
      }),
      /notjson\.json:1:\d+: expected valid JSON/,
    ],
    [
      'a retrieval split naming no conversation of the data',
      planWith(dir, [fixture('uniform_50.json')], [], (p) => {
        p.retrieval = {
          data: fixture('memory_small.json'),
          metric: 'recall@10',
          optimizer: 'random',
          budget: 1,
          split: {train: ['nope'], holdout: ['none']},
        }
      }),
      /retrieval\.split\.train\[0\]: expected a conversation id of .*memory_small\.json, got "nope"/,
    ],
    [
      'an invalid engine file',
      planWith(dir, [fixture('uniform_50.json')], [], (p) => {
        p.retrieval = {
          data: fixture('memory_small.json'),
          engine: 'eng/engine.json',
          metric: 'recall@10',
          optimizer: 'random',
          budget: 1,
        }
      }),
      /eng\/engine\.json: parameters\[0\]/,
    ],
  ]
  for (const [what, plan, message] of cases)
    it(what, async () => {
      await expect(
        runStudy({planFile: plan, seed: 42, outDir: join(dir, 'out', what.replace(/\W/g, ''))}),
      ).rejects.toThrow(message)
      expect(existsSync(join(dir, 'out'))).toBe(false)
    })

  it('through the CLI: one line, exit 2, no folder', () => {
    const r = kt(['run', '--plan', cases[0][1], '--out', join(dir, 'out', 'cli')])
    expect(r.status, r.stderr).toBe(2)
    expect(oneLine(r)).toHaveLength(1)
    expect(r.stderr).toMatch(cases[0][2])
    expect(existsSync(join(dir, 'out'))).toBe(false)
  })
})
