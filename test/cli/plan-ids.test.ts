// Ids that name things in the deployed profiles (acceptance criteria, datasets) are checked when
// the plan is read, naming the key: they were refused only in phase 6, after --out held checkpoints
// and stores, by a message that showed the value.
import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {packageRoot} from '../../src/util/paths.js'
import {kt} from './helpers.js'

function defaultPlan(): Record<string, any> {
  const plan = JSON.parse(readFileSync(join(packageRoot, 'phases', 'plan.default.json'), 'utf8'))
  plan.datasets.tune = join(packageRoot, 'phases', plan.datasets.tune)
  plan.datasets.holdout = plan.datasets.holdout.map((p: string) => join(packageRoot, 'phases', p))
  return plan
}

function run(dir: string, plan: unknown) {
  writeFileSync(join(dir, 'plan.json'), JSON.stringify(plan))
  return kt(['run', '--plan', 'plan.json', '--out', 'out'], {cwd: dir})
}

const NAME_RULE = 'a name of letters, digits, dot, dash or underscore starting with a letter or digit (at most 64)'

describe('kt run: ids the profiles carry are checked when the plan is read', () => {
  it('an acceptance criterion id: exit 2 naming acceptance[i].id, no --out', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-plan-ids-'))
    const plan = defaultPlan()
    plan.acceptance[0].id = 'token budget!'
    const r = run(dir, plan)
    expect(r.stderr).toMatch(
      new RegExp(`^kt: .*plan\\.json: acceptance\\[0\\]\\.id: expected ${NAME_RULE.replace(/[()]/g, '\\$&')}`),
    )
    expect(r.status).toBe(2)
    expect(existsSync(join(dir, 'out'))).toBe(false)
  })

  it("a dataset's id: exit 2 naming the dataset file's id, no --out", () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-plan-ids-'))
    const plan = defaultPlan()
    const data = JSON.parse(readFileSync(plan.datasets.tune, 'utf8'))
    data.id = 'my data/v1'
    writeFileSync(join(dir, 'data.json'), JSON.stringify(data))
    plan.datasets.tune = join(dir, 'data.json')
    const r = run(dir, plan)
    expect(r.stderr).toBe(`kt: ${join(dir, 'data.json')}: id: expected ${NAME_RULE}, got "my data/v1"\n`)
    expect(r.status).toBe(2)
    expect(existsSync(join(dir, 'out'))).toBe(false)
  })
})
