import {describe, expect, it} from 'vitest'
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {kt} from '../cli/helpers.js'

/** End to end through the built CLI (npm test builds first), on the committed fixture. */
describe('kt rerank (built CLI)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kt-rank-cli-'))
  const registry = join(dir, 'registry')
  const model = join(dir, 'model.json')
  const data = ['--data', 'fixtures/ltr/train.txt', '--valid', 'fixtures/ltr/valid.txt', '--test', 'fixtures/ltr/test.txt']

  it('trains, prints its tables, and returns the issue\'s JSON shape with --json', () => {
    const human = kt(['rerank', 'train', ...data, '--trees', '5'])
    expect(human.status, human.stderr).toBe(0)
    expect(human.stdout).toMatch(/LambdaMART \(5 trees\)/)
    expect(human.stdout).toMatch(/NDCG@10 against number of trees/)
    expect(human.stdout).toMatch(/Feature importance \(split gain\)/)
    const json = kt(['rerank', 'train', ...data, '--trees', '5', '--save', model, '--json'])
    expect(json.status, json.stderr).toBe(0)
    const report = JSON.parse(json.stdout)
    expect(Object.keys(report.splits)).toEqual(['train', 'valid', 'test'])
    expect(Object.keys(report.baselines)).toEqual(['linear', 'best_feature'])
    expect(report.trees).toBe(5)
    expect(JSON.parse(readFileSync(model, 'utf8')).metrics.valid['ndcg@10']).toBe(report.splits.valid['ndcg@10'])
  })

  // The registry rules themselves (keep 3, rollback order) are covered in registry.test.ts.
  it('deploys, rejects a worse model with exit 1, lists, and refuses to roll back past the oldest', () => {
    expect(kt(['rerank', 'deploy', model, '--registry', registry]).status).toBe(0)
    const worse = join(dir, 'worse.json')
    const saved = JSON.parse(readFileSync(model, 'utf8'))
    saved.metrics.valid['ndcg@10'] -= 0.1
    writeFileSync(worse, JSON.stringify(saved))
    const rejected = kt(['rerank', 'deploy', worse, '--registry', registry])
    expect(rejected.status).toBe(1)
    expect(rejected.stdout).toMatch(/^rejected: validation ndcg@10 .* is worse than current v1's/)
    const list = JSON.parse(kt(['rerank', 'list', '--registry', registry, '--json']).stdout)
    expect(list.current).toBe('v1')
    expect(list.versions.map((v: {id: string}) => v.id)).toEqual(['v1'])
    const again = kt(['rerank', 'rollback', '--registry', registry])
    expect(again.status).toBe(2)
    expect(again.stderr.trim().split('\n')).toHaveLength(1)
    expect(again.stderr).toMatch(/expected an earlier kept version to roll back to, got only v1/)
  })

  it('names file and line of a malformed training line and exits 2', () => {
    const bad = join(dir, 'bad.txt')
    writeFileSync(bad, '1 qid:1 1:0.5\n0 qid:1 1:0.2\n3 qid:2 1:0.1 zz\n')
    const r = kt(['rerank', 'train', '--data', bad])
    expect(r.status).toBe(2)
    expect(r.stderr.trim()).toBe(`kt: ${bad}:3 token 4: expected index:value, got "zz"`)
  })

  it('verifies the committed fixture against its generator', () => {
    const r = kt(['rerank', 'generate', '--check'])
    expect(r.status, r.stdout + r.stderr).toBe(0)
    expect(r.stdout.trim().split('\n').every((line) => line.startsWith('identical'))).toBe(true)
  })
})
