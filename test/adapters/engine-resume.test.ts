/**
 * A study of an engine file stores the file's fingerprint (parameters, evaluate, tiers,
 * objectives): `kt search --resume` and `kt worker` refuse the file once it changed, in one line
 * naming it, before any trial runs (review D#5).
 */
import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {SqliteStudyFile} from '../helpers/study-file.js'
import {kt} from '../cli/helpers.js'
import {tinyEngine} from './helpers.js'

function trialCount(storage: string, study: string): number {
  const store = SqliteStudyFile.open(storage, {mustExist: true})
  try {
    return store.trials(study).length
  } finally {
    store.close()
  }
}

function edit(file: string, change: (e: Record<string, any>) => void): void {
  const e = JSON.parse(readFileSync(file, 'utf8')) as Record<string, any>
  change(e)
  writeFileSync(file, JSON.stringify(e))
}

describe('resuming a study of an engine file that changed', () => {
  const expected = (file: string, parts: string) =>
    `kt: ${file}: expected the engine the study was created with (its parameters, evaluate, tiers, objectives; a changed engine needs a new study: kt search --engine FILE --study NEW), got changed ${parts}\n`

  it('kt search --resume and kt worker refuse a changed parameter table or evaluation in one line naming the file; a changed profile rule is fine', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-engine-resume-'))
    const storage = join(dir, 's.sqlite')
    const engine = tinyEngine(dir)
    const first = kt([
      'search',
      '--engine',
      engine,
      '--optimizer',
      'random',
      '--trials',
      '2',
      '--storage',
      storage,
      '--study',
      'r',
      '--out',
      join(dir, 'out'),
    ])
    expect(first.status).toBe(0)
    const before = readFileSync(join(dir, 'out', 'profiles', 'best.env'), 'utf8')

    // the review's repro: x's range moved from [0, 1] to [5, 10]
    edit(engine, (e) => Object.assign(e.parameters[0], {low: 5, high: 10, default: 7}))
    const resumed = kt(['search', '--resume', 'r', '--trials', '4', '--storage', storage, '--out', join(dir, 'out')])
    expect(resumed.stderr).toBe(expected(engine, 'parameters'))
    expect(resumed.status).toBe(2)
    const worker = kt(['worker', '--study', 'r', '--trials', '4', '--storage', storage])
    expect(worker.stderr).toBe(expected(engine, 'parameters'))
    expect(worker.status).toBe(2)
    // the same command again names the change too
    const again = kt([
      'search',
      '--engine',
      engine,
      '--optimizer',
      'random',
      '--trials',
      '2',
      '--storage',
      storage,
      '--study',
      'r',
    ])
    expect(again.status).toBe(2)
    expect(again.stderr).toContain(`engine file ${engine} (changed parameters since the study was created)`)
    // no trial ran, and the outputs of the first run are as they were
    expect(trialCount(storage, 'r')).toBe(2)
    expect(readFileSync(join(dir, 'out', 'profiles', 'best.env'), 'utf8')).toBe(before)

    // back to the table it was created with, but another evaluation and tiers
    edit(engine, (e) => {
      Object.assign(e.parameters[0], {low: 0, high: 1, default: 0.5})
      e.evaluate.timeout_s = 30
      e.tiers = [
        {name: 'low', budget: 1},
        {name: 'high', budget: 3},
      ]
    })
    const r2 = kt(['search', '--resume', 'r', '--trials', '4', '--storage', storage, '--out', join(dir, 'out2')])
    expect(r2.stderr).toBe(expected(engine, 'evaluate, tiers'))
    expect(existsSync(join(dir, 'out2'))).toBe(false)

    // as created, with one more profile rule: the study goes on
    edit(engine, (e) => {
      e.evaluate.timeout_s = 20
      delete e.tiers
      e.profiles.push({name: 'lowest', order_by: 'score', direction: 'minimize'})
    })
    const ok = kt(['search', '--resume', 'r', '--trials', '4', '--storage', storage, '--out', join(dir, 'out')])
    expect(ok.stderr).toBe('')
    expect(ok.status).toBe(0)
    expect(trialCount(storage, 'r')).toBe(4)
    expect(existsSync(join(dir, 'out', 'profiles', 'lowest.env'))).toBe(true)
  })
})
