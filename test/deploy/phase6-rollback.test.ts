import {existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {packageRoot} from '../../src/util/paths.js'
import {kt} from '../cli/helpers.js'

/** Phase 6 leaves going back to `kt rollback` (gate, lock, history): no rollback script beside the profiles. */
describe('phase 6 writes no second, ungated rollback path', () => {
  it('writes no rollback.sh, removes one an older kt left, and the report names kt deploy / kt rollback; the way back goes through the target', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-phase6-'))
    // the default importance plan at fast settings, without its retrieval study
    const plan = JSON.parse(readFileSync(join(packageRoot, 'phases', 'plan.default.json'), 'utf8'))
    delete plan.retrieval
    const fixtures = join(packageRoot, 'fixtures')
    plan.datasets = {
      tune: join(fixtures, 'realistic_100.json'),
      holdout: [join(fixtures, 'recency_bias_75.json')],
      imported: [],
    }
    plan.properties = {runs: 50}
    plan.bootstrap = {resamples: 200, confidence: 0.95}
    plan.search = {grid_step: 0.1, refine_step: 0.02, refine_radius: 0.04, random_samples: 100, bohb_budget: 6, top: 5}
    plan.acceptance = plan.acceptance.filter((c: {id: string}) => c.id === 'token-budget')
    writeFileSync(join(dir, 'plan.json'), JSON.stringify(plan))
    const out = join(dir, 'run')
    mkdirSync(join(out, 'profiles'), {recursive: true})
    // what an older kt wrote: sourcing it exported the baseline past the gate, the lock and the history
    writeFileSync(join(out, 'profiles', 'rollback.sh'), "export IMPORTANCE_WEIGHT_DECAY='0.4'\n")
    const r = kt(['run', '--plan', join(dir, 'plan.json'), '--out', out, '--json'])
    expect(r.status, r.stderr).toBe(0)
    expect(existsSync(join(out, 'profiles', 'rollback.sh'))).toBe(false)
    expect(existsSync(join(out, 'profiles', 'optimum.sh'))).toBe(true)
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'))
    expect(report.phases.deploy).not.toHaveProperty('rollback_script')
    const md = readFileSync(join(out, 'report.md'), 'utf8')
    expect(md).not.toContain('rollback.sh')
    expect(md).toContain(
      "`kt rollback --target T` restores the profile the last deploy replaced, from T's locked history",
    )

    // the way back: deploy the optimum over the baseline, then kt rollback (recorded in the history)
    const target = join(dir, 'deployed')
    expect(
      kt(['deploy', join(out, 'profiles', 'baseline.json'), '--target', target, '--force', '--reason', 'the reference'])
        .status,
    ).toBe(0)
    expect(kt(['deploy', join(out, 'profiles', 'optimum.json'), '--target', target]).status).toBe(0)
    expect(kt(['rollback', '--target', target]).status).toBe(0)
    const index = JSON.parse(readFileSync(join(target, 'index.json'), 'utf8'))
    expect(index.active.name).toBe('baseline')
    expect(index.events.map((e: {action: string}) => e.action)).toEqual(['deploy', 'deploy', 'rollback'])
  }, 60_000)
})
