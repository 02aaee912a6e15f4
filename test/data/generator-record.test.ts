// A synthetic dataset's generator record is checked when the dataset is read (before kt run makes
// --out): window_hours 1e300 crashed phase 2 with a RangeError (exit 3), n 0 left an empty --out.
import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {parseDataset, MAX_WINDOW_HOURS} from '../../src/data/importance/dataset.js'
import {packageRoot} from '../../src/util/paths.js'
import {kt} from '../cli/helpers.js'

const FIXTURE = join(packageRoot, 'fixtures', 'realistic_100.json')
const fixture = (): Record<string, any> => JSON.parse(readFileSync(FIXTURE, 'utf8'))

describe("a dataset's generator record", () => {
  it('refuses window_hours and n that cannot be regenerated, naming the key', () => {
    for (const [key, value, expected] of [
      [
        'window_hours',
        1e300,
        /generator\.window_hours: expected a number of hours > 0 and at most 876600 \(a century\), got 1e\+300$/,
      ],
      ['window_hours', 0, /generator\.window_hours: expected .*, got 0$/],
      ['window_hours', 'x', /generator\.window_hours: expected .*, got "x"$/],
      ['n', 0, /generator\.n: expected an integer >= 2 \(the number of turns generated\), got 0$/],
      ['n', 2.5, /generator\.n: expected an integer >= 2 .*, got 2\.5$/],
    ] as const) {
      const d = fixture()
      d.generator[key] = value
      expect(() => parseDataset(d, 'ds.json'), `${key} ${value}`).toThrow(expected)
    }
    const d = fixture()
    d.generator.window_hours = MAX_WINDOW_HOURS
    expect(parseDataset(d, 'ds.json').generator?.window_hours).toBe(MAX_WINDOW_HOURS)
    // imported data has no generator record to check
    expect(parseDataset({...fixture(), generator: null}, 'ds.json').generator).toBeNull()
  })

  it('kt run refuses such a dataset with exit 2 before it makes --out', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-generator-'))
    const d = fixture()
    d.generator.window_hours = 1e300
    writeFileSync(join(dir, 'huge.json'), JSON.stringify(d))
    const plan = JSON.parse(readFileSync(join(packageRoot, 'phases', 'plan.default.json'), 'utf8'))
    plan.datasets.tune = join(dir, 'huge.json')
    plan.datasets.holdout = plan.datasets.holdout.map((p: string) => join(packageRoot, 'phases', p))
    writeFileSync(join(dir, 'plan.json'), JSON.stringify(plan))
    const r = kt(['run', '--plan', 'plan.json', '--out', 'out'], {cwd: dir})
    expect(r.stderr).toBe(
      `kt: ${join(dir, 'huge.json')}: generator.window_hours: expected a number of hours > 0 and at most 876600 (a century), got 1e+300\n`,
    )
    expect(r.status).toBe(2)
    expect(existsSync(join(dir, 'out'))).toBe(false)
  })
})
