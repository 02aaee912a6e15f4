import {describe, expect, it} from 'vitest'
import {existsSync, mkdtempSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {DEFAULT_LAMBDAMART, trainLambdaMart} from '../../src/rank/lambdamart.js'
import {toSavedModel, writeModel, type SavedModel} from '../../src/rank/model.js'
import {deploy, loadDeployed, readRegistry, rollback, KEEP_VERSIONS} from '../../src/rank/registry.js'
import {generateSynthetic, splitByQueries} from '../../src/rank/synthetic.js'

const [train, valid] = splitByQueries(generateSynthetic({queries: 60, minDocs: 8, maxDocs: 16, seed: 21}), [40, 20])
const base = toSavedModel(trainLambdaMart(train, {...DEFAULT_LAMBDAMART, trees: 5, minDataInLeaf: 5}).model, {trees: 5}, {}, {})
const scratch = mkdtempSync(join(tmpdir(), 'kt-rank-registry-'))
let counter = 0

/** A model file whose stored validation NDCG@10 is `ndcg` (and, optionally, other trees). */
function modelFile(ndcg: number | undefined, saved: SavedModel = base): string {
  const path = join(scratch, `candidate-${++counter}.json`)
  writeModel(path, {...saved, metrics: ndcg === undefined ? {} : {valid: {'ndcg@10': ndcg}}})
  return path
}

function freshRegistry(): string {
  return mkdtempSync(join(tmpdir(), 'kt-rank-reg-'))
}

describe('reranker registry', () => {
  it('deploys the first model, rejects a worse one (current stays), accepts an equal or better one', () => {
    const dir = freshRegistry()
    const first = deploy(dir, modelFile(0.8))
    expect(first).toMatchObject({deployed: true, current: 'v1', current_ndcg10: null})
    const worse = deploy(dir, modelFile(0.79))
    expect(worse).toMatchObject({deployed: false, current: 'v1', candidate_ndcg10: 0.79, current_ndcg10: 0.8})
    expect(worse.reason).toMatch(/^rejected/)
    expect(readRegistry(dir).current).toBe('v1')
    expect(readRegistry(dir).versions.map((v) => v.id)).toEqual(['v1'])
    expect(deploy(dir, modelFile(0.8))).toMatchObject({deployed: true, current: 'v2'}) // not worse: equal deploys
    expect(deploy(dir, modelFile(0.85))).toMatchObject({deployed: true, current: 'v3'})
  })

  it('keeps the last three versions with their metrics and deletes older files', () => {
    const dir = freshRegistry()
    for (const ndcg of [0.7, 0.72, 0.74, 0.76, 0.78]) deploy(dir, modelFile(ndcg))
    const index = readRegistry(dir)
    expect(index.versions.length).toBe(KEEP_VERSIONS)
    expect(index.versions.map((v) => [v.id, v.metrics.valid['ndcg@10']])).toEqual([['v3', 0.74], ['v4', 0.76], ['v5', 0.78]])
    expect(index.current).toBe('v5')
    expect(readdirSync(dir).filter((f) => f.endsWith('.json')).sort()).toEqual(['registry.json', 'v3.json', 'v4.json', 'v5.json'])
  })

  it('rolls back to the previous version, drops the rolled-back one, and stops at the oldest', () => {
    const dir = freshRegistry()
    for (const ndcg of [0.7, 0.72, 0.74, 0.76]) deploy(dir, modelFile(ndcg))
    expect(rollback(dir)).toEqual({current: 'v3', removed: 'v4'})
    expect(existsSync(join(dir, 'v4.json'))).toBe(false)
    expect(loadDeployed(dir)!.version.id).toBe('v3')
    // The next deploy is judged against the restored version (0.74), not the dropped one (0.76).
    expect(deploy(dir, modelFile(0.75))).toMatchObject({deployed: true, current: 'v5', current_ndcg10: 0.74})
    expect(rollback(dir).current).toBe('v3')
    expect(rollback(dir).current).toBe('v2')
    expect(() => rollback(dir)).toThrow(/expected an earlier kept version to roll back to, got only v2/)
    expect(readRegistry(dir).current).toBe('v2')
    expect(() => rollback(freshRegistry())).toThrow(/got no deployed model/)
  })

  it('compares both models on the same data when given, and needs a validation number otherwise', () => {
    const dir = freshRegistry()
    deploy(dir, modelFile(0.99)) // stored number is high, but re-scoring on `valid` ignores it
    const weak = {...base, trees: base.trees.slice(0, 1)}
    const outcome = deploy(dir, modelFile(undefined, weak), {compareOn: valid})
    expect(outcome.compared_on).toBe(valid.source)
    expect(outcome.current_ndcg10).not.toBe(0.99)
    expect(() => deploy(dir, modelFile(undefined))).toThrow(/field metrics.valid: expected a validation ndcg@10/)
  })

  it('rejects a corrupt model or index with a one-line error and changes nothing', () => {
    const dir = freshRegistry()
    deploy(dir, modelFile(0.7))
    const bad = join(scratch, 'bad.json')
    writeFileSync(bad, JSON.stringify({...base, trees: [{...base.trees[0], left: [5]}]}))
    expect(() => deploy(dir, bad)).toThrow(/bad.json field trees.0/)
    writeFileSync(join(dir, 'registry.json'), '{"format": "kt-reranker-registry"')
    expect(() => readRegistry(dir)).toThrow(/registry.json.*expected valid JSON/)
  })
})
