import {describe, expect, it} from 'vitest'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import type {LtrDataset} from '../../src/rank/dataset.js'
import {engineOrderScores, parseEngineOrder} from '../../src/rank/engine-order.js'
import {DEFAULT_LAMBDAMART, trainLambdaMart} from '../../src/rank/lambdamart.js'
import {toSavedModel, writeModel} from '../../src/rank/model.js'
import {reportEvaluator} from '../../src/rank/ndcg.js'
import {deploy, readRegistry} from '../../src/rank/registry.js'
import {generateSynthetic, splitByQueries} from '../../src/rank/synthetic.js'
import {InputError} from '../../src/util/errors.js'
import {kt} from '../cli/helpers.js'

const [train, valid] = splitByQueries(generateSynthetic({queries: 80, minDocs: 8, maxDocs: 14, seed: 31}), [50, 30])
const scratch = mkdtempSync(join(tmpdir(), 'kt-rank-gate-'))
/** A weak model: 2 trees, large leaves. */
const weak = toSavedModel(trainLambdaMart(train, {...DEFAULT_LAMBDAMART, trees: 2, maxLeaves: 2, minDataInLeaf: 40}).model, {trees: 2}, {}, {})
let counter = 0

function modelFile(data: Record<string, string> = {}, ndcg = 0.6): string {
  const path = join(scratch, `m${++counter}.json`)
  writeModel(path, {...weak, trees: weak.trees.map((t, i) => (i === 0 ? {...t, leaf_value: t.leaf_value.map((v) => v + counter * 1e-9)} : t)), data, metrics: {valid: {'ndcg@10': ndcg}}})
  return path
}

/** The validation data with a logged engine score: a perfect engine (the labels) or the worst (their negation). */
function withEngine(data: LtrDataset, sign: 1 | -1): LtrDataset {
  return {...data, source: `${data.source}-engine${sign}`, engineScores: data.labels.map((l) => sign * l)}
}

/** The validation data as a kt feature log (JSONL with engine_score) written to a file. */
function writeLog(data: LtrDataset, engine: (label: number, d: number) => number): string {
  const path = join(scratch, `valid-${++counter}.jsonl`)
  const width = data.featureNames.length
  const lines: string[] = []
  for (let q = 0; q < data.queryIds.length; q++) {
    for (let d = data.queryOffsets[q]; d < data.queryOffsets[q + 1]; d++) {
      const features = Object.fromEntries(data.featureNames.map((name, f) => [`f${name}`, data.features[d * width + f]]))
      lines.push(JSON.stringify({qid: data.queryIds[q], label: data.labels[d], features, engine_score: engine(data.labels[d], d)}))
    }
  }
  writeFileSync(path, `${lines.join('\n')}\n`)
  return path
}

describe('rerank deploy gate: not worse than the engine\'s own order (no reranker)', () => {
  it('refuses a first version that is worse than the engine\'s order (the issue: 0.58 vs 0.75 deployed as "first version")', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-gate-'))
    const data = withEngine(valid, 1)
    const out = deploy(dir, modelFile(), {compareOn: data})
    const evaluator = reportEvaluator(valid)
    expect(out.deployed).toBe(false)
    expect(out.engine_ndcg10).toBe(1) // the labels themselves
    expect(out.candidate_ndcg10).toBeLessThan(1)
    expect(out.reason).toMatch(/^rejected: validation ndcg@10 0\.\d{4} is worse than the engine's own order with no reranker \(1\.0000, the logged engine_score of .*-engine1\)$/)
    const [engine] = out.comparisons
    expect(engine).toMatchObject({baseline: 'engine', baseline_ndcg10: 1, queries: evaluator.judgedQueries})
    expect(engine.delta).toBeCloseTo(engine.candidate_ndcg10 - 1, 12)
    expect(engine.high!).toBeLessThan(0)
    expect(readRegistry(dir).current).toBeNull()
  })

  it('deploys a candidate better than the engine\'s order, recording the engine\'s NDCG with the version, and compares with the current model too', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-gate-'))
    const data = withEngine(valid, -1)
    const first = deploy(dir, modelFile(), {compareOn: data})
    expect(first).toMatchObject({deployed: true, version: 'v1'})
    expect(first.engine_ndcg10!).toBeLessThan(first.candidate_ndcg10!)
    expect(first.reason).toMatch(/^deployed: first version, validation ndcg@10 0\.\d{4}, >= the engine's own order 0\.\d{4}$/)
    expect(readRegistry(dir).versions[0].engine_ndcg10).toBe(first.engine_ndcg10)
    const second = deploy(dir, modelFile(), {compareOn: data})
    expect(second.comparisons.map((c) => c.baseline)).toEqual(['engine', 'current'])
    expect(second.comparisons[1].delta).toBeCloseTo(0, 6) // same trees up to 1e-9
  })

  it('reads the engine order from the file order or a feature column when asked, and refuses without one unless forced', () => {
    // file order: sort each query's rows by label, best first, so the engine is perfect
    const sorted = {...valid, source: 'sorted'}
    const width = valid.featureNames.length
    const labels = Float64Array.from(valid.labels)
    const features = Float64Array.from(valid.features)
    for (let q = 0; q < valid.queryIds.length; q++) {
      const [a, b] = [valid.queryOffsets[q], valid.queryOffsets[q + 1]]
      const rows = Array.from({length: b - a}, (_, i) => a + i).sort((x, y) => valid.labels[y] - valid.labels[x] || x - y)
      rows.forEach((row, i) => {
        labels[a + i] = valid.labels[row]
        features.set(valid.features.subarray(row * width, (row + 1) * width), (a + i) * width)
      })
    }
    Object.assign(sorted, {labels, features})
    expect(reportEvaluator(sorted).mean(engineOrderScores(sorted, parseEngineOrder('file')))).toBe(1)
    const dir = mkdtempSync(join(tmpdir(), 'kt-gate-'))
    expect(deploy(dir, modelFile(), {compareOn: sorted, engineOrder: {kind: 'file'}}).deployed).toBe(false)
    // a feature column as the engine's score
    const byFeature = deploy(dir, modelFile(), {compareOn: valid, engineOrder: parseEngineOrder(`feature:${valid.featureNames[0]}`)})
    expect(byFeature.engine_order).toBe(`feature ${valid.featureNames[0]} (larger first) of ${valid.source}`)
    expect(() => parseEngineOrder('rank')).toThrow('--engine-order: expected score, file or feature:NAME, got "rank"')
    expect(() => deploy(dir, modelFile(), {compareOn: valid, engineOrder: {kind: 'feature', name: 'nope'}})).toThrow(/^--engine-order feature:nope: expected a feature column of/)
    // unknown: a LETOR-like file without engine_score, or no validation data at all
    let error: unknown
    try {
      deploy(dir, modelFile(), {compareOn: valid})
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(InputError)
    expect((error as Error).message).toMatch(new RegExp(`^${valid.source}: expected validation data whose engine order is known.*got a file without engine_score, and no --engine-order$`))
    expect(() => deploy(dir, modelFile())).toThrow(/field data\.valid: expected validation data whose engine order is known.*got no --valid and no existing validation file recorded in the model$/)
    const forced = deploy(mkdtempSync(join(tmpdir(), 'kt-gate-')), modelFile(), {force: 'no engine in this study'})
    expect(forced).toMatchObject({deployed: true, forced: 'no engine in this study', engine_ndcg10: null, comparisons: []})
    expect(forced.reason).toMatch(/FORCED without the comparison with the engine's own order: no engine in this study\)$/)
  })

  it('through the CLI: the recorded validation log is used, the refusal is exit 1 with both numbers, --json has the comparisons', () => {
    const registry = mkdtempSync(join(tmpdir(), 'kt-gate-cli-'))
    const perfect = writeLog(valid, (label) => label)
    const renamed = {...weak, feature_names: weak.feature_names.map((n) => `f${n}`)}
    const path = join(scratch, 'cli-model.json')
    writeModel(path, {...renamed, data: {valid: perfect}, metrics: {valid: {'ndcg@10': 0.6}}})
    const refused = kt(['rerank', 'deploy', path, '--registry', registry])
    expect(refused.status, refused.stderr).toBe(1)
    expect(refused.stdout).toMatch(/^vs the engine's own order \(no reranker\) on .*valid-\d+\.jsonl: 0\.\d{4} vs 1\.0000, -0\.\d{4} \(paired bootstrap 95% \[-0\.\d{4}, -0\.\d{4}\], \d+ judged queries\)$/m)
    expect(refused.stdout).toMatch(/^rejected: .* worse than the engine's own order/m)
    const worst = writeLog(valid, (label) => -label)
    const json = kt(['rerank', 'deploy', path, '--registry', registry, '--valid', worst, '--json'])
    expect(json.status, json.stderr).toBe(0)
    const out = JSON.parse(json.stdout)
    expect(out.deployed).toBe(true)
    expect(out.comparisons[0]).toMatchObject({baseline: 'engine', metric: 'ndcg@10', kind: 'absolute'})
    expect(out.comparisons[0].low).toBeGreaterThan(0)
    const letor = kt(['rerank', 'deploy', path, '--registry', registry, '--valid', 'fixtures/ltr/valid.txt'])
    expect(letor.status).toBe(2)
    expect(letor.stderr.trim().split('\n')).toHaveLength(1)
  })
})
