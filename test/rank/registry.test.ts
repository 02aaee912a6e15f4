import {describe, expect, it} from 'vitest'
import {existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {numFeatures, type LtrDataset} from '../../src/rank/dataset.js'
import {DEFAULT_LAMBDAMART, trainLambdaMart} from '../../src/rank/lambdamart.js'
import {toSavedModel, writeModel, type SavedModel} from '../../src/rank/model.js'
import {layoutNames} from '../../src/rank/query-features.js'
import {deploy as deployModel, type DeployOptions} from '../../src/rank/deploy.js'
import {loadDeployed, readRegistry, rollback, versionProblem, KEEP_VERSIONS} from '../../src/rank/registry.js'

/** These tests are about the registry's rules; the gate against the engine's own order is tested in registry-gate.test.ts. */
const deploy = (dir: string, path: string, options: DeployOptions = {}) =>
  deployModel(dir, path, {force: 'registry-rule test', ...options})
import {generateSynthetic, splitByQueries} from '../../src/rank/synthetic.js'

const [train, valid] = splitByQueries(generateSynthetic({queries: 60, minDocs: 8, maxDocs: 16, seed: 21}), [40, 20])
const base = toSavedModel(
  trainLambdaMart(train, {...DEFAULT_LAMBDAMART, trees: 5, minDataInLeaf: 5}).model,
  {trees: 5},
  {},
  {},
)
const scratch = mkdtempSync(join(tmpdir(), 'kt-rank-registry-'))
let counter = 0

/**
 * A model file whose stored validation NDCG@10 is `ndcg` (and, optionally, other trees). Each file
 * is another model (its first leaf moved by a distinct tiny amount): the same model again would be
 * a no-op deploy.
 */
function modelFile(ndcg: number | undefined, saved: SavedModel = base): string {
  const path = join(scratch, `candidate-${++counter}.json`)
  const trees = saved.trees.map((tree, t) =>
    t === 0 ? {...tree, leaf_value: tree.leaf_value.map((v, l) => (l === 0 ? v + counter * 1e-9 : v))} : tree,
  )
  writeModel(path, {...saved, trees, metrics: ndcg === undefined ? {} : {valid: {'ndcg@10': ndcg}}})
  return path
}

/** The data with its columns renamed and put in the order `order` (indices of the old columns). */
function renamed(data: LtrDataset, names: string[], order: number[] = names.map((_, i) => i)): LtrDataset {
  const width = numFeatures(data)
  const features = new Float64Array(data.features.length)
  for (let d = 0; d < data.labels.length; d++)
    for (let f = 0; f < width; f++) features[d * width + f] = data.features[d * width + order[f]]
  return {...data, source: `${data.source}-renamed`, featureNames: order.map((i) => names[i]), features}
}

function freshRegistry(): string {
  return mkdtempSync(join(tmpdir(), 'kt-rank-reg-'))
}

describe('reranker registry', () => {
  it('deploys the first model, rejects one not shown non-inferior to the current (current stays), accepts an equal one', () => {
    const dir = freshRegistry()
    const gate = {holdout: valid, engineOrder: {kind: 'file'} as const}
    const first = deployModel(dir, modelFile(0.8), gate)
    expect(first).toMatchObject({deployed: true, current: 'v1', current_ndcg10: null})
    // the same trees with every leaf negated: it ranks each query upside down
    const inverted = {...base, trees: base.trees.map((t) => ({...t, leaf_value: t.leaf_value.map((v) => -v)}))}
    const worse = deployModel(dir, modelFile(0.99, inverted), gate) // a high stored number changes nothing: the gate re-scores on held-out data
    expect(worse).toMatchObject({deployed: false, current: 'v1'})
    expect(worse.candidate_ndcg10!).toBeLessThan(worse.current_ndcg10!)
    expect(worse.reason).toMatch(/^rejected on held-out .*: .*not shown non-inferior to current v1: /)
    expect(readRegistry(dir).current).toBe('v1')
    expect(readRegistry(dir).versions.map((v) => v.id)).toEqual(['v1'])
    const equal = deployModel(dir, modelFile(0.5), gate) // the same ranking up to 1e-9: delta 0, non-inferior
    expect(equal).toMatchObject({deployed: true, current: 'v2'})
    expect(equal.comparisons.find((c) => c.baseline === 'current')).toMatchObject({delta: 0, low: 0, noninferior: true})
  })

  it('keeps the last three versions with their metrics and deletes older files', () => {
    const dir = freshRegistry()
    for (const ndcg of [0.7, 0.72, 0.74, 0.76, 0.78]) deploy(dir, modelFile(ndcg))
    const index = readRegistry(dir)
    expect(index.versions.length).toBe(KEEP_VERSIONS)
    expect(index.versions.map((v) => [v.id, v.metrics.valid['ndcg@10']])).toEqual([
      ['v3', 0.74],
      ['v4', 0.76],
      ['v5', 0.78],
    ])
    expect(index.current).toBe('v5')
    expect(
      readdirSync(dir)
        .filter((f) => f.endsWith('.json'))
        .sort(),
    ).toEqual(['registry.json', 'v3.json', 'v4.json', 'v5.json'])
  })

  it('rolls back to the previous version, drops the rolled-back one, and stops at the oldest', () => {
    const dir = freshRegistry()
    for (const ndcg of [0.7, 0.72, 0.74, 0.76]) deploy(dir, modelFile(ndcg))
    expect(rollback(dir)).toEqual({current: 'v3', removed: 'v4'})
    expect(existsSync(join(dir, 'v4.json'))).toBe(false)
    expect(loadDeployed(dir)!.version.id).toBe('v3')
    // The next deploy is judged against the restored version, not the dropped one.
    const next = deployModel(dir, modelFile(0.75), {holdout: valid, engineOrder: {kind: 'file'}})
    expect(next).toMatchObject({deployed: true, current: 'v5'})
    expect(next.reason).toMatch(/^deployed \(replaces v3\): /)
    expect(rollback(dir).current).toBe('v3')
    expect(rollback(dir).current).toBe('v2')
    expect(() => rollback(dir)).toThrow(/expected an earlier kept version to roll back to, got only v2/)
    expect(readRegistry(dir).current).toBe('v2')
    expect(() => rollback(freshRegistry())).toThrow(/got no deployed model/)
  })

  it('judges only on held-out data: none is refused in one line naming data.test; forced, it deploys with the reason and what the gate said', () => {
    const dir = freshRegistry()
    const path = modelFile(0.99)
    expect(() => deployModel(dir, path)).toThrow(
      `${path} field data.test: expected held-out data to judge the model on: --holdout FILE, data it was neither trained nor selected on (e.g. the test split that kt rerank log writes); or --force --reason, got none (trained without --test), and no --holdout`,
    )
    const gone = join(scratch, 'gone.txt')
    const recorded = join(scratch, `recorded-${++counter}.json`)
    writeModel(recorded, {...base, data: {test: gone}})
    expect(() => deployModel(dir, recorded)).toThrow(/field data\.test: .*, got .*gone\.txt, which no longer exists$/)
    const forced = deploy(dir, path)
    expect(forced).toMatchObject({
      deployed: true,
      forced: 'registry-rule test',
      comparisons: [],
      candidate_ndcg10: null,
      compared_on: null,
      gate: null,
    })
    expect(forced.overrode).toMatch(/^no held-out data to judge it on/)
    expect(readRegistry(dir).versions[0]).toMatchObject({forced: 'registry-rule test', overrode: forced.overrode})
    for (const reason of ['', '  ', 'two\nlines'])
      expect(() => deployModel(dir, path, {force: reason})).toThrow(
        /^--reason: expected why the deploy is forced, one line of text/,
      )
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

  it('refuses a candidate over other feature columns (names or order) in one line naming its file, and changes nothing', () => {
    const dir = freshRegistry()
    deploy(dir, modelFile(0.5))
    const named = ['bm25', 'vector', ...Array.from({length: 10}, (_, i) => `f${i + 3}`)]
    const other = modelFile(0.9, {...base, feature_names: named})
    expect(() => deploy(dir, other)).toThrow(
      new RegExp(
        `^${other} field feature_names: expected the current model v1's features \\(1, 2, 3, .*, 12\\); a model over other features needs its own --registry, got bm25, vector, .* \\(column 1: bm25 instead of 1\\)$`,
      ),
    )
    const swapped = modelFile(0.9, {...base, feature_names: ['1', '2', '4', '3', ...base.feature_names.slice(4)]})
    expect(() => deploy(dir, swapped)).toThrow(/field feature_names: .*\(column 3: 4 instead of 3\)$/)
    expect(readRegistry(dir).versions.map((v) => v.id)).toEqual(['v1'])
  })

  it("aligns --valid columns by name to the model's and refuses a file lacking one of them", () => {
    const names = Array.from({length: 12}, (_, i) => `x${i + 1}`)
    const model = modelFile(undefined, {...base, feature_names: names})
    const inOrder = renamed(valid, names)
    const reversed = renamed(
      valid,
      names,
      names.map((_, i) => 11 - i),
    )
    const a = deploy(freshRegistry(), model, {holdout: inOrder})
    const b = deploy(freshRegistry(), model, {holdout: reversed})
    expect(a.candidate_ndcg10).toBeGreaterThan(0)
    expect(b.candidate_ndcg10).toBe(a.candidate_ndcg10)
    // the same data in LETOR's numbered columns has none of the model's names
    expect(() => deploy(freshRegistry(), model, {holdout: valid})).toThrow(
      `${valid.source}: expected the features of ${model} (x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12), got no feature x1`,
    )
    const lacking = {...renamed(valid, names), featureNames: [...names.slice(0, 11), 'y12']}
    expect(() => deploy(freshRegistry(), model, {holdout: lacking})).toThrow(
      /-renamed: expected the features of .*, got no feature x12$/,
    )
  })

  it('deploying the current model again is a no-op naming its version; rollback then reaches the real predecessor', () => {
    const dir = freshRegistry()
    const first = modelFile(0.7)
    const second = modelFile(0.8)
    deploy(dir, first)
    deploy(dir, second)
    for (let i = 0; i < 3; i++) {
      expect(deploy(dir, second)).toMatchObject({
        deployed: false,
        already: 'v2',
        current: 'v2',
        removed: [],
        reason: 'already deployed as v2 (same feature_names and trees): nothing changed',
      })
    }
    // other stored metrics, same trees: the same model
    const copy = join(scratch, 'copy.json')
    writeFileSync(
      copy,
      JSON.stringify({...JSON.parse(readFileSync(second, 'utf8')), metrics: {valid: {'ndcg@10': 0.99}}}),
    )
    expect(deploy(dir, copy).already).toBe('v2')
    expect(readRegistry(dir).versions.map((v) => v.id)).toEqual(['v1', 'v2'])
    expect(rollback(dir)).toEqual({current: 'v1', removed: 'v2'})
    // deploying the model rolled back from is a real change again
    expect(deploy(dir, second)).toMatchObject({deployed: true, current: 'v3'})
  })

  it('refuses a model without trees, and one whose query-level columns were logged with another pool', () => {
    const empty = modelFile(0.9, {...base, trees: []})
    expect(() => deploy(freshRegistry(), empty)).toThrow(
      `${empty} field trees: expected at least one tree (a model without trees scores every candidate equally), got none`,
    )
    const names = layoutNames({queryFeatures: ['qrank'], engineScore: false})
    const leaf = {
      split_feature: [names.indexOf('bm25@qrank')],
      threshold: [0.5],
      left: [~0],
      right: [~1],
      gain: [1],
      leaf_value: [1, 0],
    }
    const qrank = (pool: number, value: number): string =>
      modelFile(0.5, {...base, feature_names: names, pool, trees: [{...leaf, leaf_value: [value, 0]}]})
    const dir = freshRegistry()
    deploy(dir, qrank(50, 1))
    const at20 = qrank(20, 2)
    expect(() => deploy(dir, at20)).toThrow(
      `${at20} field pool: expected 50, the pool the current model v1's query-level columns were computed over, got 20`,
    )
    expect(deploy(dir, qrank(50, 3))).toMatchObject({deployed: true, current: 'v2'})
  })

  it('finds a broken kept file: truncated, or not the trees the index lists', () => {
    const dir = freshRegistry()
    deploy(dir, modelFile(0.7))
    deploy(dir, modelFile(0.8))
    const [v1, v2] = readRegistry(dir).versions
    expect(versionProblem(dir, v1)).toBeUndefined()
    const text = readFileSync(join(dir, 'v2.json'), 'utf8')
    writeFileSync(join(dir, 'v2.json'), text.slice(0, text.length / 2))
    expect(versionProblem(dir, v2)).toMatch(
      new RegExp(`^${join(dir, 'v2.json')}(:1(:\\d+)?)?: expected valid JSON[^\\n]*, got [^\\n]+$`),
    )
    writeFileSync(join(dir, 'v2.json'), JSON.stringify({...JSON.parse(text), trees: base.trees.slice(0, 2)}))
    expect(versionProblem(dir, v2)).toBe(
      `${join(dir, 'v2.json')} field trees: expected 5 trees (as registry.json lists for v2), got 2`,
    )
  })
})

describe('a file given as the registry', () => {
  it('is refused in one line (expected a folder), not read as an empty registry', async () => {
    const file = join(scratch, 'not-a-registry.json')
    writeFileSync(file, '{}\n')
    expect(() => readRegistry(file)).toThrow(`${file}: expected a reranker registry folder, got a file`)
    const {kt} = await import('../cli/helpers.js')
    const r = kt(['rerank', 'list', '--registry', file])
    expect(r.status).toBe(2)
    expect(r.stderr).toBe(`kt: ${file}: expected a reranker registry folder, got a file\n`)
  })
})
