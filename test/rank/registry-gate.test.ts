import {describe, expect, it} from 'vitest'
import {copyFileSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import type {LtrDataset} from '../../src/rank/dataset.js'
import {RERANKER_NONINFERIORITY_MARGIN} from '../../src/rank/defaults.js'
import {engineOrderScores, parseEngineOrder} from '../../src/rank/engine-order.js'
import {DEFAULT_LAMBDAMART, scoreDataset, trainLambdaMart} from '../../src/rank/lambdamart.js'
import {fromSavedModel, readModel, toSavedModel, writeModel} from '../../src/rank/model.js'
import {reportEvaluator} from '../../src/rank/ndcg.js'
import {readLtrFile} from '../../src/rank/parse.js'
import {fileSha256} from '../../src/rank/provenance.js'
import {deploy} from '../../src/rank/deploy.js'
import {readRegistry} from '../../src/rank/registry.js'
import {runTrainReport} from '../../src/rank/report.js'
import {generateSynthetic, splitByQueries} from '../../src/rank/synthetic.js'
import {NONINFERIORITY_MARGIN} from '../../src/eval/holdout-validation.js'
import {InputError} from '../../src/util/errors.js'
import {Rng} from '../../src/util/rng.js'
import {kt} from '../cli/helpers.js'

const [train, valid] = splitByQueries(generateSynthetic({queries: 80, minDocs: 8, maxDocs: 14, seed: 31}), [50, 30])
const scratch = mkdtempSync(join(tmpdir(), 'kt-rank-gate-'))
/** A weak model: 2 trees, large leaves. */
const weak = toSavedModel(
  trainLambdaMart(train, {...DEFAULT_LAMBDAMART, trees: 2, maxLeaves: 2, minDataInLeaf: 40}).model,
  {trees: 2},
  {},
  {},
)
let counter = 0

function modelFile(data: Record<string, string> = {}, ndcg = 0.6): string {
  const path = join(scratch, `m${++counter}.json`)
  writeModel(path, {
    ...weak,
    trees: weak.trees.map((t, i) => (i === 0 ? {...t, leaf_value: t.leaf_value.map((v) => v + counter * 1e-9)} : t)),
    data,
    metrics: {valid: {'ndcg@10': ndcg}},
  })
  return path
}

/** The held-out data with a logged engine score: a perfect engine (the labels) or the worst (their negation). */
function withEngine(data: LtrDataset, sign: 1 | -1): LtrDataset {
  return {...data, source: `${data.source}-engine${sign}`, engineScores: data.labels.map((l) => sign * l)}
}

/** The data as a kt feature log (JSONL with engine_score) written to a file. */
function writeLog(data: LtrDataset, engine: (label: number, d: number) => number): string {
  const path = join(scratch, `log-${++counter}.jsonl`)
  const width = data.featureNames.length
  const lines: string[] = []
  for (let q = 0; q < data.queryIds.length; q++) {
    for (let d = data.queryOffsets[q]; d < data.queryOffsets[q + 1]; d++) {
      const features = Object.fromEntries(
        data.featureNames.map((name, f) => [`f${name}`, data.features[d * width + f]]),
      )
      lines.push(
        JSON.stringify({
          qid: data.queryIds[q],
          label: data.labels[d],
          features,
          engine_score: engine(data.labels[d], d),
        }),
      )
    }
  }
  writeFileSync(path, `${lines.join('\n')}\n`)
  return path
}

/** LETOR lines of pure noise: grades 0,0,0,1,2 drawn at random, five uniform features unrelated to them (the reviewer's generator). */
function noiseLetor(path: string, queries: number, firstQid: number, rng: Rng): string {
  const lines: string[] = []
  for (let q = firstQid; q < firstQid + queries; q++) {
    for (let d = 0; d < 10; d++) {
      const label = [0, 0, 0, 1, 2][rng.int(5)]
      lines.push(
        `${label} qid:${q} ${Array.from({length: 5}, (_, f) => `${f + 1}:${rng.next().toFixed(4)}`).join(' ')}`,
      )
    }
  }
  writeFileSync(path, `${lines.join('\n')}\n`)
  return path
}

function thrown(fn: () => unknown): Error {
  try {
    fn()
  } catch (error) {
    return error as Error
  }
  throw new Error('expected a throw')
}

describe("rerank deploy gate: on held-out data, non-inferior to the engine's own order (no reranker) and the current model", () => {
  it("uses the profile gate's margin (src/eval/holdout-validation.ts)", () => {
    expect(RERANKER_NONINFERIORITY_MARGIN).toBe(NONINFERIORITY_MARGIN)
  })

  it('refuses a first version not shown non-inferior to the engine\'s order (the issue: 0.58 vs 0.75 deployed as "first version")', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-gate-'))
    const data = withEngine(valid, 1)
    const out = deploy(dir, modelFile(), {holdout: data})
    const evaluator = reportEvaluator(valid)
    expect(out.deployed).toBe(false)
    expect(out.engine_ndcg10).toBe(1) // the labels themselves
    expect(out.candidate_ndcg10).toBeLessThan(1)
    expect(out.reason).toMatch(
      /^rejected on held-out .*-engine1: not shown non-inferior to the engine's own order with no reranker \(the logged engine_score of .*-engine1\): ndcg@10 0\.\d{4} vs 1\.0000, -0\.\d{4}, lower bound -0\.\d{4} < -0\.01$/,
    )
    const [engine] = out.comparisons
    expect(engine).toMatchObject({
      baseline: 'engine',
      baseline_ndcg10: 1,
      queries: evaluator.judgedQueries,
      noninferior: false,
      margin: 0.01,
    })
    expect(engine.delta).toBeCloseTo(engine.candidate_ndcg10 - 1, 12)
    expect(engine.high!).toBeLessThan(0)
    expect(out.gate).toMatchObject({file: data.source, sha256: null, chosen_by: '--holdout', margin: 0.01})
    expect(readRegistry(dir).current).toBeNull()
  })

  it("deploys a candidate non-inferior to the engine's order, recording the held-out data, margin and lower bound with the version, and compares with the current model too", () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-gate-'))
    const data = withEngine(valid, -1)
    const first = deploy(dir, modelFile(), {holdout: data})
    expect(first).toMatchObject({deployed: true, version: 'v1'})
    expect(first.engine_ndcg10!).toBeLessThan(first.candidate_ndcg10!)
    expect(first.reason).toMatch(
      /^deployed \(first version\): non-inferior on held-out .*-engine-1 \(vs the engine's order \+0\.\d{4}, lower bound \+0\.\d{4}; margin 0\.01\)$/,
    )
    expect(readRegistry(dir).versions[0]).toMatchObject({
      engine_ndcg10: first.engine_ndcg10,
      holdout: data.source,
      margin: 0.01,
      engine_delta_low: first.comparisons[0].low,
    })
    const second = deploy(dir, modelFile(), {holdout: data})
    expect(second.comparisons.map((c) => c.baseline)).toEqual(['engine', 'current'])
    expect(second.comparisons[1].delta).toBeCloseTo(0, 6) // same trees up to 1e-9
    expect(second.deployed).toBe(true)
  })

  it("judges by the interval's lower bound, not the point estimate: a gain the data cannot tell from a loss is rejected; the margin is the rule's", () => {
    const candidate = modelFile()
    const own = scoreDataset(fromSavedModel(readModel(candidate)), valid)
    // the engine ranks like the candidate, except perfectly on 3 queries (the candidate loses there) and worst-first on 4 (it wins)
    const engineScores = Float64Array.from(own)
    for (let q = 0; q < 7; q++) {
      for (let d = valid.queryOffsets[q]; d < valid.queryOffsets[q + 1]; d++)
        engineScores[d] = (q < 3 ? 1 : -1) * valid.labels[d]
    }
    const data = {...valid, source: 'mixed-engine', engineScores}
    const out = deploy(mkdtempSync(join(tmpdir(), 'kt-gate-')), candidate, {holdout: data})
    const [engine] = out.comparisons
    expect(engine.delta).toBeGreaterThan(0) // the point estimate says better: the old gate deployed this
    expect(engine.low!).toBeLessThan(-RERANKER_NONINFERIORITY_MARGIN)
    expect(out.deployed).toBe(false)
    const lenient = deploy(mkdtempSync(join(tmpdir(), 'kt-gate-')), candidate, {
      holdout: data,
      margin: -engine.low! + 1e-9,
    })
    expect(lenient.deployed).toBe(true)
    expect(() => deploy(mkdtempSync(join(tmpdir(), 'kt-gate-')), candidate, {holdout: data, margin: -1})).toThrow(
      /^--margin: expected a non-negative/,
    )
  })

  it('a pure-noise model selected on its validation file is refused there (a copy too); on held-out data it is judged by the interval and rejected', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-gate-noise-'))
    const rng = new Rng(2) // a seed whose noise model even gains a little on the held-out queries (the point estimate; 12 of 12 seeds tried are rejected)
    const files = {
      train: noiseLetor(join(dir, 'train.txt'), 40, 1, rng),
      valid: noiseLetor(join(dir, 'valid.txt'), 15, 100, rng),
      test: noiseLetor(join(dir, 'test.txt'), 300, 1000, rng),
    }
    const path = join(dir, 'm.json')
    runTrainReport({files, params: {...DEFAULT_LAMBDAMART, earlyStoppingRounds: 20}, seed: 42, save: path})
    const saved = readModel(path)
    expect(saved.data).toEqual(files)
    expect(saved.data_sha256).toEqual({
      train: fileSha256(files.train),
      valid: fileSha256(files.valid),
      test: fileSha256(files.test),
    })
    // selection bias: early stopping kept the prefix that looks best on valid, so on valid the noise beats the engine's (random) file order
    const validData = readLtrFile(files.valid)
    const evaluator = reportEvaluator(validData)
    const onValid =
      evaluator.mean(scoreDataset(fromSavedModel(saved), validData)) -
      evaluator.mean(engineOrderScores(validData, {kind: 'file'}))
    expect(onValid).toBeGreaterThan(0.02)
    const registry = join(dir, 'registry')
    const order = {kind: 'file'} as const
    const onOwn = thrown(() => deploy(registry, path, {holdout: validData, engineOrder: order}))
    expect(onOwn).toBeInstanceOf(InputError)
    expect(onOwn.message).toBe(
      `${files.valid}: expected held-out data the model was neither trained nor selected on, to judge ${path} (pass --holdout with a held-out file, e.g. the test split that kt rerank log writes; or --force --reason), got its validation file (early stopping or kt rerank tune selected it on that data) (the same content: sha256 ${fileSha256(files.valid).slice(0, 12)}...)`,
    )
    const copy = join(dir, 'renamed.txt')
    copyFileSync(files.valid, copy)
    expect(() => deploy(registry, path, {holdout: readLtrFile(copy), engineOrder: order})).toThrow(
      /^.*renamed\.txt: expected held-out data .*, got its validation file/,
    )
    expect(() => deploy(registry, path, {holdout: readLtrFile(files.train), engineOrder: order})).toThrow(
      /train\.txt: expected held-out data .*, got its training file \(the same content/,
    )
    // not the same file but the same queries: a subset of valid, or test joined with a few valid queries (other ids, lines shuffled)
    const lines = (file: string): string[] => readFileSync(file, 'utf8').trim().split('\n')
    const subset = join(dir, 'subset.txt')
    writeFileSync(subset, `${lines(files.valid).slice(0, 50).join('\n')}\n`)
    expect(() => deploy(registry, path, {holdout: readLtrFile(subset), engineOrder: order})).toThrow(
      /subset\.txt: expected held-out data sharing no query with the data the model was trained or selected on, .*, got \d+ of its \d+ judged queries \(e\.g\. qid 100\) also in its validation file .*valid\.txt$/,
    )
    const joined = join(dir, 'joined.txt')
    const borrowed = lines(files.valid)
      .slice(0, 10)
      .map((l) => l.replace('qid:100 ', 'qid:5000 '))
      .reverse()
    writeFileSync(joined, `${[...lines(files.test), ...borrowed].join('\n')}\n`)
    const joinedError = thrown(() => deploy(registry, path, {holdout: readLtrFile(joined), engineOrder: order}))
    expect(joinedError.message).toMatch(
      /joined\.txt: .*, got 1 of its \d+ judged queries \(e\.g\. qid 5000\) also in its validation file/,
    )
    // forced on its own data: deployed, with the reason and what the gate said
    const forced = deploy(join(dir, 'forced'), path, {
      holdout: validData,
      engineOrder: order,
      force: 'test: the noise model forced',
    })
    expect(forced).toMatchObject({deployed: true, forced: 'test: the noise model forced'})
    expect(forced.overrode).toMatch(/valid\.txt is its validation file/)
    // by default the gate reads the recorded test file: 300 held-out queries, where the noise gains nothing it can show
    const heldOut = deploy(registry, path, {engineOrder: order})
    expect(heldOut.gate).toMatchObject({
      file: files.test,
      chosen_by: 'the test file the model records (data.test)',
      sha256: fileSha256(files.test),
    })
    const [engine] = heldOut.comparisons
    expect(engine.queries).toBeGreaterThan(250)
    expect(engine.delta).toBeGreaterThan(0) // a point-estimate gate would deploy it
    expect(engine.low!).toBeLessThan(-RERANKER_NONINFERIORITY_MARGIN)
    expect(engine.high!).toBeGreaterThan(0)
    expect(heldOut.deployed).toBe(false)
    expect(readRegistry(registry).current).toBeNull()
  })

  it('reads the engine order from the file order or a feature column when asked, and refuses without one unless forced', () => {
    // file order: sort each query's rows by label, best first, so the engine is perfect
    const sorted = {...valid, source: 'sorted'}
    const width = valid.featureNames.length
    const labels = Float64Array.from(valid.labels)
    const features = Float64Array.from(valid.features)
    for (let q = 0; q < valid.queryIds.length; q++) {
      const [a, b] = [valid.queryOffsets[q], valid.queryOffsets[q + 1]]
      const rows = Array.from({length: b - a}, (_, i) => a + i).sort(
        (x, y) => valid.labels[y] - valid.labels[x] || x - y,
      )
      rows.forEach((row, i) => {
        labels[a + i] = valid.labels[row]
        features.set(valid.features.subarray(row * width, (row + 1) * width), (a + i) * width)
      })
    }
    Object.assign(sorted, {labels, features})
    expect(reportEvaluator(sorted).mean(engineOrderScores(sorted, parseEngineOrder('file')))).toBe(1)
    const dir = mkdtempSync(join(tmpdir(), 'kt-gate-'))
    expect(deploy(dir, modelFile(), {holdout: sorted, engineOrder: {kind: 'file'}}).deployed).toBe(false)
    // a feature column as the engine's score
    const byFeature = deploy(dir, modelFile(), {
      holdout: valid,
      engineOrder: parseEngineOrder(`feature:${valid.featureNames[0]}`),
    })
    expect(byFeature.engine_order).toBe(`feature ${valid.featureNames[0]} (larger first) of ${valid.source}`)
    expect(() => parseEngineOrder('rank')).toThrow('--engine-order: expected score, file or feature:NAME, got "rank"')
    expect(() => deploy(dir, modelFile(), {holdout: valid, engineOrder: {kind: 'feature', name: 'nope'}})).toThrow(
      /^--engine-order feature:nope: expected a feature column of/,
    )
    // unknown: a LETOR-like file without engine_score
    const error = thrown(() => deploy(dir, modelFile(), {holdout: valid}))
    expect(error).toBeInstanceOf(InputError)
    expect(error.message).toMatch(
      new RegExp(
        `^${valid.source}: expected held-out data whose engine order is known.*got a file without engine_score, and no --engine-order$`,
      ),
    )
    const forced = deploy(mkdtempSync(join(tmpdir(), 'kt-gate-')), modelFile(), {
      holdout: valid,
      force: 'no engine in this study',
    })
    expect(forced).toMatchObject({
      deployed: true,
      forced: 'no engine in this study',
      engine_ndcg10: null,
      comparisons: [],
    })
    expect(forced.reason).toMatch(
      /FORCED: no engine in this study; the gate said: the engine's own order in .* is unknown/,
    )
  })

  it('through the CLI: the recorded test log is the default, a refusal is exit 1 with both intervals, --json has the comparisons and the gate; --force needs --reason', () => {
    const registry = mkdtempSync(join(tmpdir(), 'kt-gate-cli-'))
    const perfect = writeLog(valid, (label) => label)
    const ownValid = writeLog(train, (label) => label)
    const renamed = {...weak, feature_names: weak.feature_names.map((n) => `f${n}`)}
    const path = join(scratch, 'cli-model.json')
    writeModel(path, {
      ...renamed,
      data: {valid: ownValid, test: perfect},
      data_sha256: {valid: fileSha256(ownValid), test: fileSha256(perfect)},
      metrics: {valid: {'ndcg@10': 0.6}},
    })
    const refused = kt(['rerank', 'deploy', path, '--registry', registry])
    expect(refused.status, refused.stderr).toBe(1)
    expect(refused.stdout).toMatch(
      /^held-out data: .*log-\d+\.jsonl \(the test file the model records \(data\.test\)\); deploy when the lower bound of the 95% paired bootstrap interval of ndcg@10 \(candidate - baseline\) on held-out queries is >= -0\.01, against the engine's own order and against the current model$/m,
    )
    expect(refused.stdout).toMatch(
      /^vs the engine's own order \(no reranker\) on .*log-\d+\.jsonl: 0\.\d{4} vs 1\.0000, -0\.\d{4} \(paired bootstrap 95% \[-0\.\d{4}, -0\.\d{4}\], \d+ judged queries\): NOT shown non-inferior \(lower bound -0\.\d{4} < -0\.01\)$/m,
    )
    expect(refused.stdout).toMatch(/^rejected on held-out .*: not shown non-inferior to the engine's own order/m)
    const own = kt(['rerank', 'deploy', path, '--registry', registry, '--holdout', ownValid])
    expect(own.status).toBe(2)
    expect(own.stderr).toBe(
      `kt: ${ownValid}: expected held-out data the model was neither trained nor selected on, to judge ${path} (pass --holdout with a held-out file, e.g. the test split that kt rerank log writes; or --force --reason), got its validation file (early stopping or kt rerank tune selected it on that data) (the same content: sha256 ${fileSha256(ownValid).slice(0, 12)}...)\n`,
    )
    const noReason = kt(['rerank', 'deploy', path, '--registry', registry, '--holdout', ownValid, '--force'])
    expect(noReason.status).toBe(2)
    expect(noReason.stderr).toBe(
      'kt: --reason: expected why the deploy is forced (recorded with the version), with --force, got nothing\n',
    )
    expect(readRegistry(registry).current).toBeNull()
    const worst = writeLog(valid, (label) => -label)
    const json = kt(['rerank', 'deploy', path, '--registry', registry, '--valid', worst, '--json']) // --valid: the old name of --holdout
    expect(json.status, json.stderr).toBe(0)
    const out = JSON.parse(json.stdout)
    expect(out.deployed).toBe(true)
    expect(out.gate).toMatchObject({file: worst, chosen_by: '--holdout', sha256: fileSha256(worst), margin: 0.01})
    expect(out.comparisons[0]).toMatchObject({
      baseline: 'engine',
      metric: 'ndcg@10',
      kind: 'absolute',
      noninferior: true,
      margin: 0.01,
    })
    expect(out.comparisons[0].low).toBeGreaterThan(0)
    const letor = kt(['rerank', 'deploy', path, '--registry', registry, '--holdout', 'fixtures/ltr/valid.txt'])
    expect(letor.status).toBe(2)
    expect(letor.stderr.trim().split('\n')).toHaveLength(1)
    const other = join(scratch, 'cli-model-2.json')
    writeModel(other, {...readModel(path), trees: renamed.trees.slice(0, 1)})
    const forced = kt([
      'rerank',
      'deploy',
      other,
      '--registry',
      registry,
      '--holdout',
      ownValid,
      '--force',
      '--reason',
      'cli test',
      '--json',
    ])
    expect(forced.status, forced.stderr).toBe(0)
    expect(JSON.parse(forced.stdout)).toMatchObject({deployed: true, forced: 'cli test'})
    expect(JSON.parse(readFileSync(join(registry, 'registry.json'), 'utf8')).versions[1]).toMatchObject({
      forced: 'cli test',
      holdout: ownValid,
    })
  })
})
