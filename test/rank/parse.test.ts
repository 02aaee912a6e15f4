import {describe, expect, it} from 'vitest'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fixturesDir} from '../../src/util/paths.js'
import {numDocs, numQueries, selectQueries} from '../../src/rank/dataset.js'
import {parseFeatureLog, parseLetor, parseLibsvmWithGroups, readLtrFile} from '../../src/rank/parse.js'
import {alignColumns, alignSplits, loggedPool} from '../../src/rank/splits.js'

const dir = mkdtempSync(join(tmpdir(), 'kt-rank-parse-'))
function file(name: string, text: string): string {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

describe('LETOR text', () => {
  it('reads labels, query groups, sparse 1-based features and comments', () => {
    const data = parseLetor(
      '2 qid:7 1:0.5 3:2 # doc a\n0 qid:7 2:1\n\n# a comment line\n1 qid:8 1:-1e-3 3:4\n',
      'f.txt',
    )
    expect(data.queryIds).toEqual(['7', '8'])
    expect(Array.from(data.queryOffsets)).toEqual([0, 2, 3])
    expect(Array.from(data.labels)).toEqual([2, 0, 1])
    expect(data.featureNames).toEqual(['1', '2', '3'])
    expect(Array.from(data.features)).toEqual([0.5, 0, 2, 0, 1, 0, -0.001, 0, 4])
  })

  it.each([
    ['x qid:1 1:0.5', 'f.txt:1 label: expected an integer relevance grade in 0..30, got "x"'],
    ['1 qid:1 1:0.5\n31 qid:1 1:1', 'f.txt:2 label: expected an integer relevance grade in 0..30, got "31"'],
    ['1 qid:1 1:0.5\n1 qid:1 1:0.5\n1 1:0.5', 'f.txt:3: expected a "qid:" token after the label'],
    ['1 qid:1 1:0.5\n\n1 qid:1 0:0.5', 'f.txt:3 token 3: expected a feature index in 1..10000, got "0"'],
    ['1 qid:1 1:abc', 'f.txt:1 feature 1: expected a finite number, got "abc"'],
    ['1 qid:1 1:0.5 2', 'f.txt:1 token 4: expected index:value, got "2"'],
    ['1 qid:1 2:1 2:3', 'f.txt:1 feature 2: expected each feature index once per line, got a repeat'],
    [
      '1 qid:1 1:1\n1 qid:2 1:1\n0 qid:1 1:0',
      'f.txt:3: expected the lines of query 1 to be contiguous (it started at line 1)',
    ],
  ])('names file and line of a malformed line: %j', (text, message) => {
    expect(() => parseLetor(text, 'f.txt')).toThrow(message)
  })

  it('reports the path through readLtrFile', () => {
    const path = file('bad.txt', '1 qid:1 1:1\n1 qid:1 1:nan\n')
    expect(() => readLtrFile(path)).toThrow(`${path}:2 feature 1: expected a finite number`)
  })
})

describe('libsvm text with a .query group file', () => {
  it('splits documents into the groups the sidecar gives', () => {
    const path = file('g.libsvm', '1 1:1\n0 1:2\n2 1:3 2:1\n0 1:4\n')
    file('g.libsvm.query', '3\n1\n')
    const data = readLtrFile(path)
    expect(Array.from(data.queryOffsets)).toEqual([0, 3, 4])
    expect(numDocs(data)).toBe(4)
  })

  it('rejects group sizes that do not add up to the lines, naming the files', () => {
    expect(() => parseLibsvmWithGroups('1 1:1\n0 1:2\n', 'g.txt', '3\n', 'g.txt.query')).toThrow(
      'g.txt.query: expected group sizes summing to the 2 data lines of g.txt, got a sum of 3',
    )
    expect(() => parseLibsvmWithGroups('1 1:1\n0 1:2\n1 1:1\n', 'g.txt', '2\n', 'g.txt.query')).toThrow(
      'g.txt:3: expected at most 2 data lines',
    )
    expect(() => parseLibsvmWithGroups('1 1:1\n', 'g.txt', '1\n-2\n', 'g.txt.query')).toThrow(
      'g.txt.query:2: expected a positive integer group size, got "-2"',
    )
  })
})

describe('kt feature logs (JSONL)', () => {
  const line = (qid: string, label: number, features: Record<string, unknown>) => JSON.stringify({qid, label, features})

  it("reads named features in the first line's order", () => {
    const text = [
      line('a', 2, {bm25: 1.5, vector: 0.2}),
      line('a', 0, {vector: 0.9, bm25: 0.1}),
      line('b', 1, {bm25: 3, vector: 0}),
    ].join('\n')
    const data = parseFeatureLog(text, 'log.jsonl')
    expect(data.featureNames).toEqual(['bm25', 'vector'])
    expect(Array.from(data.features)).toEqual([1.5, 0.2, 0.1, 0.9, 3, 0])
    expect(numQueries(data)).toBe(2)
    expect(data.engineScores).toBeUndefined()
    const scored = parseFeatureLog(
      '{"qid":1,"label":1,"features":{"x":1},"engine_score":0.5,"pool":7}\n{"qid":1,"label":0,"features":{"x":2},"engine_score":-2,"pool":7}',
      'e.jsonl',
    )
    expect(Array.from(scored.engineScores!)).toEqual([0.5, -2])
    expect(scored.pool).toBe(7)
    expect(data.pool).toBeUndefined()
  })

  it.each([
    [
      '{"qid": "a", "label": 1, "features": {"x": 1}}\n{"qid": "a", "label": 1',
      'log.jsonl:2:24: expected one JSON object per line',
    ],
    [
      `${line('a', 1, {x: 1})}\n${line('a', 7.5, {x: 1})}`,
      'log.jsonl:2 field label: expected an integer relevance grade in 0..30, got 7.5',
    ],
    [
      `${line('a', 1, {x: 1, y: 2})}\n${line('a', 0, {x: 1})}`,
      'log.jsonl:2 field features.y: expected a finite number',
    ],
    [
      `${line('a', 1, {x: 1})}\n${line('a', 0, {x: 1, z: 3})}`,
      'log.jsonl:2 field features.z: expected only the features of the first line (x), got an extra feature',
    ],
    [`${line('a', 1, {x: 'big'})}`, 'log.jsonl:1 field features.x: expected a finite number'],
    ['{"label": 1, "features": {"x": 1}}', 'log.jsonl:1 field qid: expected a string or number, got nothing'],
    [
      '{"qid":1,"label":1,"features":{"x":1},"engine_score":0.5}\n{"qid":1,"label":0,"features":{"x":2}}',
      'log.jsonl:2 field engine_score: expected a finite number (the first line has one), got nothing',
    ],
    [
      '{"qid":1,"label":1,"features":{"x":1}}\n{"qid":1,"label":0,"features":{"x":2},"engine_score":1}',
      'log.jsonl:2 field engine_score: expected no engine_score (the first line has none), got 1',
    ],
    [
      '{"qid":1,"label":1,"features":{"x":1},"pool":50}\n{"qid":1,"label":0,"features":{"x":2},"pool":20}',
      "log.jsonl:2 field pool: expected the first line's pool 50 (one pool per log), got 20",
    ],
    [
      '{"qid":1,"label":1,"features":{"x":1},"pool":50}\n{"qid":1,"label":0,"features":{"x":2}}',
      "log.jsonl:2 field pool: expected the first line's pool 50 (one pool per log), got nothing",
    ],
    [
      '{"qid":1,"label":1,"features":{"x":1}}\n{"qid":1,"label":0,"features":{"x":2},"pool":5}',
      'log.jsonl:2 field pool: expected no pool (the first line has none), got 5',
    ],
    [
      '{"qid":1,"label":1,"features":{"x":1},"pool":0}',
      "log.jsonl:1 field pool: expected a positive integer (the engine's candidates per query, kt rerank log --pool), got 0",
    ],
  ])('names file, line and field of a bad record: %j', (text, message) => {
    expect(() => parseFeatureLog(text, 'log.jsonl')).toThrow(message)
  })
})

describe('the committed fixture', () => {
  it('reads in all three forms with the same documents', () => {
    const ltr = join(fixturesDir, 'ltr')
    const test = readLtrFile(join(ltr, 'test.txt'))
    const libsvm = readLtrFile(join(ltr, 'test-small.libsvm'))
    const jsonl = readLtrFile(join(ltr, 'test-small.jsonl'))
    const small = selectQueries(test, [0, 1, 2, 3, 4])
    for (const other of [libsvm, jsonl]) {
      expect(Array.from(other.labels)).toEqual(Array.from(small.labels))
      expect(Array.from(other.features)).toEqual(Array.from(small.features))
      expect(Array.from(other.queryOffsets)).toEqual(Array.from(small.queryOffsets))
    }
  })

  it('aligns splits: widens sparse numbered files, reorders named ones, rejects missing names', () => {
    const a = parseLetor('1 qid:1 1:1 2:2\n0 qid:1 1:0', 'a')
    const b = parseLetor('1 qid:1 1:1 3:5\n', 'b')
    const aligned = alignSplits({train: a, test: b})
    expect(aligned.train.featureNames).toEqual(['1', '2', '3'])
    expect(Array.from(aligned.train.features)).toEqual([1, 2, 0, 0, 0, 0])
    const x = parseFeatureLog('{"qid":1,"label":1,"features":{"p":1,"q":2}}', 'x')
    const y = parseFeatureLog('{"qid":1,"label":1,"features":{"q":5,"p":4}}', 'y')
    expect(Array.from(alignSplits({train: x, valid: y}).valid!.features)).toEqual([4, 5])
    const z = parseFeatureLog('{"qid":1,"label":1,"features":{"p":1,"r":2}}', 'z')
    expect(() => alignSplits({train: x, test: z})).toThrow('z: expected the training features (p, q), got no feature q')
    const wide = parseFeatureLog('{"qid":1,"label":1,"features":{"q":1,"p":2,"r":3}}', 'w')
    expect(() => alignSplits({train: x, test: wide})).toThrow('w: expected the training features (p, q), got also r')
  })

  it('aligns one file to given columns: widens a narrower numbered file, refuses a wider one', () => {
    const narrow = parseLetor('1 qid:1 1:1 2:2\n', 'n')
    expect(Array.from(alignColumns(narrow, ['1', '2', '3'], "the model's features").features)).toEqual([1, 2, 0])
    expect(() => alignColumns(narrow, ['1'], "the model's features")).toThrow(
      "n: expected the model's features (1), got also 2",
    )
  })

  it('splits logged with different pools are refused, naming the file', () => {
    const at = (pool: number | undefined, path: string) =>
      parseFeatureLog(`{"qid":1,"label":1,"features":{"x":1}${pool === undefined ? '' : `,"pool":${pool}`}}`, path)
    expect(loggedPool({train: at(50, 't'), valid: at(50, 'v')})).toBe(50)
    expect(loggedPool({train: at(undefined, 't')})).toBeUndefined()
    expect(() => loggedPool({train: at(50, 't'), test: at(20, 'x')})).toThrow(
      'x field pool: expected 50, the pool of t, got 20',
    )
    expect(() => loggedPool({train: at(undefined, 't'), test: at(20, 'x')})).toThrow(
      'x field pool: expected no pool, like t, got 20',
    )
  })
})
