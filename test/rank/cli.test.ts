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
  const data = [
    '--data',
    'fixtures/ltr/train.txt',
    '--valid',
    'fixtures/ltr/valid.txt',
    '--test',
    'fixtures/ltr/test.txt',
  ]

  it("trains, prints its tables, and returns the issue's JSON shape with --json", () => {
    const human = kt(['rerank', 'train', ...data, '--trees', '5'])
    expect(human.status, human.stderr).toBe(0)
    expect(human.stdout).toMatch(/LambdaMART \(5 trees\)/)
    expect(human.stdout).toMatch(/NDCG@10 against number of trees/)
    expect(human.stdout).toMatch(/Feature importance \(split gain\)/)
    // human tables round (NDCG to 4 places, gains and shares to 1): no float noise like 0.5950000000000001
    expect(human.stdout).not.toMatch(/\d\.\d{5,}/)
    const json = kt(['rerank', 'train', ...data, '--trees', '5', '--save', model, '--json'])
    expect(json.status, json.stderr).toBe(0)
    const report = JSON.parse(json.stdout)
    expect(Object.keys(report.splits)).toEqual(['train', 'valid', 'test'])
    expect(Object.keys(report.baselines)).toEqual(['linear', 'best_feature'])
    expect(report.trees).toBe(5)
    expect(JSON.parse(readFileSync(model, 'utf8')).metrics.valid['ndcg@10']).toBe(report.splits.valid['ndcg@10'])
  })

  // The registry rules themselves (keep 3, rollback order, refusals) are covered in registry.test.ts.
  it('deploys, redeploys as a no-op (exit 0), rejects a worse model with exit 1, lists (a broken file with exit 1), and refuses to roll back past the oldest', () => {
    expect(kt(['rerank', 'deploy', model, '--registry', registry, '--engine-order', 'file']).status).toBe(0)
    const again = kt(['rerank', 'deploy', model, '--registry', registry, '--engine-order', 'file'])
    expect(again.status, again.stderr).toBe(0)
    expect(again.stdout).toMatch(/^already deployed as v1 \(same feature_names and trees\): nothing changed$/m)
    const worse = join(dir, 'worse.json')
    const saved = JSON.parse(readFileSync(model, 'utf8'))
    saved.metrics.valid['ndcg@10'] += 0.1 // the stored figure is not what the gate reads
    saved.trees = saved.trees.map((t: {leaf_value: number[]}) => ({...t, leaf_value: t.leaf_value.map((v) => -v)})) // ranks upside down
    writeFileSync(worse, JSON.stringify(saved))
    const rejected = kt(['rerank', 'deploy', worse, '--registry', registry, '--engine-order', 'file'])
    expect(rejected.status).toBe(1)
    expect(rejected.stdout).toMatch(
      /^held-out data: fixtures\/ltr\/test\.txt \(the test file the model records \(data\.test\)\)/m,
    )
    expect(rejected.stdout).toMatch(
      /^rejected on held-out fixtures\/ltr\/test\.txt: .*; not shown non-inferior to current v1: ndcg@10 /m,
    )
    // list checks every kept file: a truncated one is marked, named in one line on stderr, exit 1
    const file = join(registry, 'v1.json')
    const text = readFileSync(file, 'utf8')
    writeFileSync(file, text.slice(0, 200))
    const listed = kt(['rerank', 'list', '--registry', registry, '--json'])
    writeFileSync(file, text)
    expect(listed.status).toBe(1)
    expect(listed.stderr.trim().split('\n')).toHaveLength(1)
    expect(listed.stderr).toMatch(new RegExp(`^kt: ${file}(:\\d+)*: expected valid JSON`))
    const list = JSON.parse(listed.stdout)
    expect(list.current).toBe('v1')
    expect(list.versions.map((v: {id: string; file_ok: boolean}) => [v.id, v.file_ok])).toEqual([['v1', false]])
    const back = kt(['rerank', 'rollback', '--registry', registry])
    expect(back.status).toBe(2)
    expect(back.stderr.trim().split('\n')).toHaveLength(1)
    expect(back.stderr).toMatch(/expected an earlier kept version to roll back to, got only v1/)
  })

  it('tune --save records the files and their sha256, so the gate refuses the validation split it tuned on and judges on its test split', () => {
    const tuned = join(dir, 'tuned.json')
    const r = kt([
      'rerank',
      'tune',
      ...data,
      '--trials',
      '3',
      '--trees',
      '5',
      '--optimizer',
      'random',
      '--save',
      tuned,
      '--json',
    ])
    expect(r.status, r.stderr).toBe(0)
    const saved = JSON.parse(readFileSync(tuned, 'utf8'))
    expect(saved.data).toEqual({
      train: 'fixtures/ltr/train.txt',
      valid: 'fixtures/ltr/valid.txt',
      test: 'fixtures/ltr/test.txt',
    })
    expect(Object.keys(saved.data_sha256)).toEqual(['train', 'valid', 'test'])
    const own = kt([
      'rerank',
      'deploy',
      tuned,
      '--registry',
      join(dir, 'tuned-registry'),
      '--holdout',
      'fixtures/ltr/valid.txt',
      '--engine-order',
      'file',
    ])
    expect(own.status).toBe(2)
    expect(own.stderr).toMatch(
      /^kt: fixtures\/ltr\/valid\.txt: expected held-out data the model was neither trained nor selected on, .*got its validation file/,
    )
    const held = kt([
      'rerank',
      'deploy',
      tuned,
      '--registry',
      join(dir, 'tuned-registry'),
      '--engine-order',
      'file',
      '--json',
    ])
    expect(JSON.parse(held.stdout).gate.file).toBe('fixtures/ltr/test.txt')
  })

  it('names file and line of a malformed training line and exits 2', () => {
    const bad = join(dir, 'bad.txt')
    writeFileSync(bad, '1 qid:1 1:0.5\n0 qid:1 1:0.2\n3 qid:2 1:0.1 zz\n')
    const r = kt(['rerank', 'train', '--data', bad])
    expect(r.status).toBe(2)
    expect(r.stderr.trim()).toBe(`kt: ${bad}:3 token 4: expected index:value, got "zz"`)
  })

  it('warns on stderr when no tree could be grown, keeping trees: 0 in the JSON', () => {
    const two = join(dir, 'two.txt')
    writeFileSync(two, '1 qid:1 1:0.5\n0 qid:1 1:0.2\n')
    const r = kt(['rerank', 'train', '--data', two, '--json'])
    expect(r.status, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout).trees).toBe(0)
    expect(r.stderr).toBe(
      'kt: warning: LambdaMART grew 0 trees: 2 training documents cannot fill two leaves of min-data 20 (lower --min-data, or add data); the model scores every document equally\n',
    )
  })

  it('verifies the committed fixture against its generator', () => {
    const r = kt(['rerank', 'generate', '--check'])
    expect(r.status, r.stdout + r.stderr).toBe(0)
    expect(
      r.stdout
        .trim()
        .split('\n')
        .every((line) => line.startsWith('identical')),
    ).toBe(true)
  })
})
