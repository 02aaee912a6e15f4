/**
 * Every input gets one clean line: a seeded campaign of mutated inputs of every file kind kt reads
 * (plans, importance datasets, CSV and JSONL imports, LoCoMo files, profiles, routed profiles,
 * LTR files, saved models, report.json) through the real loaders, in-process. Each case must load
 * or fail with an InputError whose message is one line without raw control characters and is not
 * a JavaScript runtime error in disguise. A few cases also go through the built CLI (exit 2).
 */
import {beforeAll, describe, expect, it} from 'vitest'
import {cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {Rng} from '../../src/util/rng.js'
import {InputError} from '../../src/util/errors.js'
import {readJsonFile} from '../../src/util/json.js'
import {packageRoot} from '../../src/util/paths.js'
import {loadPlan} from '../../phases/plan.js'
import {loadDataset} from '../../src/data/importance/dataset.js'
import {DEFAULT_COLUMNS, importLabelledTurns} from '../../src/data/importance/import.js'
import {loadMemoryDataset} from '../../src/data/conversations/load.js'
import {makeProfile} from '../../src/deploy/profile.js'
import {parseProfile} from '../../src/deploy/load.js'
import {IMPORTANCE_SPACE} from '../../src/engine/importance/space.js'
import {RETRIEVAL_SPACE} from '../../src/engine/retrieval/space.js'
import {defaultConfig} from '../../src/space/space.js'
import {loadRetrievalProfile} from '../../src/eval/profile.js'
import {readLtrFile} from '../../src/rank/parse.js'
import {fromSavedModel, readModel} from '../../src/rank/model.js'
import {runTrainReport} from '../../src/rank/report.js'
import {DEFAULT_LAMBDAMART} from '../../src/rank/lambdamart.js'
import {loadReport, rerender} from '../../src/report/load.js'
import {kt} from '../cli/helpers.js'

const SEED = 20261201
const CASES_PER_KIND = 40
/** What a JavaScript runtime error looks like when it is passed off as a clean message. */
const RUNTIME_ERROR =
  /is not a function|Cannot read propert|Cannot convert|is not iterable|is not defined|Maximum call stack|Invalid time value|Invalid array length|of undefined|of null/
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/

interface Kind {
  name: string
  file: string
  load: (path: string) => unknown
}

let dir: string
const kinds: Kind[] = []

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kt-fuzz-'))
  const seeds = join(dir, 'seeds')
  mkdirSync(seeds)
  cpSync(join(packageRoot, 'fixtures'), join(dir, 'fixtures'), {recursive: true})
  const plan = JSON.parse(readFileSync(join(packageRoot, 'phases', 'plan.default.json'), 'utf8'))
  writeFileSync(join(seeds, 'plan.json'), JSON.stringify(plan, null, 2))
  cpSync(join(packageRoot, 'fixtures', 'uniform_50.json'), join(seeds, 'dataset.json'))
  const turns = (
    JSON.parse(readFileSync(join(packageRoot, 'fixtures', 'uniform_50.json'), 'utf8')) as {
      turns: Array<Record<string, unknown>>
    }
  ).turns.slice(0, 6)
  const rows = turns.map((t, i) => ({
    id: t.id,
    time: 1_700_000_000 + i * 3600,
    text: t.text,
    truth: t.truth,
    surprise: t.surprise,
    query: 'what happened',
  }))
  writeFileSync(
    join(seeds, 'turns.csv'),
    `id,time,text,truth,surprise,query\n${rows.map((r) => [r.id, r.time, JSON.stringify(r.text), r.truth, r.surprise, r.query].join(',')).join('\n')}\n`,
  )
  writeFileSync(join(seeds, 'turns.jsonl'), `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`)
  const locomo = JSON.parse(readFileSync(join(packageRoot, 'fixtures', 'memory_small.json'), 'utf8')) as unknown[]
  writeFileSync(join(seeds, 'locomo.json'), JSON.stringify(locomo.slice(0, 1), null, 1))
  writeFileSync(
    join(seeds, 'profile.json'),
    JSON.stringify(
      makeProfile({
        kind: 'importance',
        space: IMPORTANCE_SPACE,
        name: 'optimum',
        config: defaultConfig(IMPORTANCE_SPACE),
        metrics: {spearman: 0.5},
        sourceRun: 'seed42-planx',
      }),
      null,
      2,
    ),
  )
  writeFileSync(
    join(seeds, 'retrieval-profile.json'),
    JSON.stringify(
      makeProfile({
        kind: 'retrieval',
        space: RETRIEVAL_SPACE,
        name: 'fast',
        config: defaultConfig(RETRIEVAL_SPACE),
        metrics: {'recall@10': 0.7},
        sourceRun: 'seed42-planx',
      }),
      null,
      2,
    ),
  )
  writeFileSync(
    join(seeds, 'routed.json'),
    JSON.stringify(
      {config: {'bm25.k1': 1.2}, overrides: {temporal: {'bm25.b': 0.5}, entity_lookup: {'seeds.count': 4}}},
      null,
      2,
    ),
  )
  cpSync(join(packageRoot, 'fixtures', 'ltr', 'test-small.jsonl'), join(seeds, 'log.jsonl'))
  writeFileSync(
    join(seeds, 'letor.txt'),
    readFileSync(join(packageRoot, 'fixtures', 'ltr', 'test.txt'), 'utf8')
      .split('\n')
      .slice(0, 30)
      .join('\n'),
  )
  runTrainReport({
    files: {train: join(seeds, 'log.jsonl')},
    params: {...DEFAULT_LAMBDAMART, trees: 2, minDataInLeaf: 2},
    seed: 1,
    save: join(seeds, 'model.json'),
  })
  const report = kt(['phase', '3', '--out', join(dir, 'report-seed')], {cwd: dir})
  expect(report.status, report.stderr).toBe(0)
  cpSync(join(dir, 'report-seed', 'report.json'), join(seeds, 'report.json'))

  const reportDir = (path: string): string => {
    const d = `${path}.d`
    mkdirSync(d, {recursive: true})
    cpSync(path, join(d, 'report.json'))
    return d
  }
  kinds.push(
    {name: 'plan', file: 'plan.json', load: (p) => loadPlan(p)},
    {name: 'importance dataset', file: 'dataset.json', load: (p) => loadDataset(p)},
    {
      name: 'CSV import',
      file: 'turns.csv',
      load: (p) => importLabelledTurns({file: p, id: 'x', columns: DEFAULT_COLUMNS}),
    },
    {
      name: 'JSONL import',
      file: 'turns.jsonl',
      load: (p) => importLabelledTurns({file: p, id: 'x', columns: DEFAULT_COLUMNS}),
    },
    {name: 'LoCoMo', file: 'locomo.json', load: (p) => loadMemoryDataset(p, {format: 'locomo'})},
    {name: 'profile', file: 'profile.json', load: (p) => parseProfile(readJsonFile(p), p)},
    {name: 'retrieval profile', file: 'retrieval-profile.json', load: (p) => loadRetrievalProfile(p)},
    {name: 'routed profile', file: 'routed.json', load: (p) => loadRetrievalProfile(p)},
    {name: 'LTR feature log', file: 'log.jsonl', load: (p) => readLtrFile(p)},
    {name: 'LETOR', file: 'letor.txt', load: (p) => readLtrFile(p)},
    {name: 'model', file: 'model.json', load: (p) => fromSavedModel(readModel(p))},
    {name: 'report.json', file: 'report.json', load: (p) => rerender(loadReport(reportDir(p)), 'md')},
  )
}, 60_000)

/** Values that have broken loaders: wrong types, huge and special numbers, control characters, deep nesting. */
const HOSTILE_VALUES: unknown[] = [
  null,
  true,
  0,
  -1,
  1e308,
  1e17,
  -1e17,
  0.5,
  '',
  'x',
  '\u001b[2J\u001b[31mred',
  'a\nb\r\nc',
  '\u2028',
  '\u0000',
  [],
  [1, 2],
  {},
  {a: 1},
  '2025-13-45T99:99:99Z',
  'NaN',
  '1e400',
  '__proto__',
]
const HOSTILE_TEXT = [
  '\u001b[2J',
  '\n',
  '\r',
  '\u0000',
  '\u2028',
  '\uFEFF',
  '"',
  ',',
  '{',
  ']',
  '99999999999999999',
  '1e400',
  '-',
  '\\',
  '\u00ff',
  '\t',
]

const DEEP_MARK = '\u0001deep\u0001'

function deep(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth)
}

/** Replaces one value, chosen along a random path, in a JSON document. */
function mutateJsonValue(value: unknown, rng: Rng): unknown {
  // DEEP_MARK is swapped for 100,000 levels of nesting after serialising (JSON.stringify itself would overflow)
  const replacement = rng.next() < 0.1 ? DEEP_MARK : HOSTILE_VALUES[rng.int(HOSTILE_VALUES.length)]
  const root = {v: structuredClone(value)} as Record<string, unknown>
  let parent: Record<string, unknown> | unknown[] = root
  let key: string | number = 'v'
  for (let depth = 0; depth < 12; depth++) {
    const current: unknown = (parent as Record<string | number, unknown>)[key]
    if (current === null || typeof current !== 'object') break
    const keys: Array<string | number> = Array.isArray(current) ? current.map((_, i) => i) : Object.keys(current)
    if (keys.length === 0 || rng.next() < 0.15) break
    parent = current as Record<string, unknown>
    key = keys[rng.int(keys.length)]
  }
  if (Array.isArray(parent) || rng.next() < 0.85) (parent as Record<string | number, unknown>)[key] = replacement
  else delete (parent as Record<string | number, unknown>)[key]
  return root.v
}

/** One mutated copy of a file's text: byte-level or (for JSON) value-level. */
function mutate(text: string, isJson: boolean, rng: Rng): string {
  const at = rng.int(text.length + 1)
  const choice = rng.int(isJson ? 9 : 7)
  switch (choice) {
    case 0:
      return text.slice(0, at) // cut short
    case 1:
      return text.slice(0, at) + HOSTILE_TEXT[rng.int(HOSTILE_TEXT.length)] + text.slice(at)
    case 2: {
      const end = Math.min(text.length, at + 1 + rng.int(40))
      return text.slice(0, at) + text.slice(end) // a span removed
    }
    case 3:
      return text.slice(0, at) + String.fromCharCode(rng.int(0x100)) + text.slice(at + 1) // a byte replaced
    case 4:
      // 100,000 levels: around the whole document (still valid JSON) or anywhere in it
      return rng.next() < 0.5
        ? `${'['.repeat(100_000)}${text}${']'.repeat(100_000)}`
        : text.slice(0, at) + deep(100_000) + text.slice(at)
    case 5:
      return `\uFEFF${text}` // a byte-order mark: must load like the original
    case 6:
      return text.replace(/\d{2,}/, '99999999999999999') // an absurd number (an epoch in CSV)
    default:
      try {
        return (JSON.stringify(mutateJsonValue(JSON.parse(text), rng), null, 1) ?? '').replace(
          JSON.stringify(DEEP_MARK),
          deep(100_000),
        )
      } catch {
        return text
      }
  }
}

function check(kind: Kind, path: string, label: string): 'loaded' | 'refused' {
  let error: unknown
  try {
    kind.load(path)
    return 'loaded'
  } catch (e) {
    error = e
  }
  const message = (error as Error)?.message ?? String(error)
  expect(
    error,
    `${label}: not an InputError: ${String((error as Error)?.stack ?? error).slice(0, 400)}`,
  ).toBeInstanceOf(InputError)
  expect(message, `${label}: control characters`).not.toMatch(CONTROL)
  expect(message, `${label}: a runtime error passed off as bad input`).not.toMatch(RUNTIME_ERROR)
  return 'refused'
}

describe('fuzz: every mutated input loads or fails with one clean line', () => {
  it(`${CASES_PER_KIND} seeded mutations of each of 12 input kinds (480 cases)`, () => {
    const rng = new Rng(SEED)
    const tally: Record<string, {loaded: number; refused: number}> = {}
    for (const kind of kinds) {
      const seedPath = join(dir, 'seeds', kind.file)
      expect(check(kind, seedPath, `${kind.name} seed`), `${kind.name}: the unmutated seed must load`).toBe('loaded')
      const original = readFileSync(seedPath, 'utf8')
      const isJson = /\.json$/.test(kind.file)
      tally[kind.name] = {loaded: 0, refused: 0}
      for (let i = 0; i < CASES_PER_KIND; i++) {
        const text = mutate(original, isJson, rng)
        const ext = kind.file.slice(kind.file.lastIndexOf('.'))
        const path = join(dir, `${kind.name.replace(/\W+/g, '-')}-${i}${ext}`)
        writeFileSync(path, text)
        tally[kind.name][check(kind, path, `${kind.name} case ${i}`)]++
      }
    }
    // the campaign must actually exercise the error paths of every kind
    for (const [name, t] of Object.entries(tally))
      expect(t.refused, `${name}: ${JSON.stringify(t)}`).toBeGreaterThan(CASES_PER_KIND / 6)
  }, 60_000)

  it('a UTF-8 byte-order mark is accepted in JSON as in CSV', () => {
    for (const kind of kinds) {
      const path = join(dir, `bom-${kind.file}`)
      writeFileSync(path, `\uFEFF${readFileSync(join(dir, 'seeds', kind.file), 'utf8')}`)
      expect(check(kind, path, `${kind.name} with a BOM`)).toBe('loaded')
    }
  })

  it('JSON nested 100,000 deep, an epoch beyond the Date range, control bytes in a JSONL line: one line each, exit 2 (built CLI)', () => {
    writeFileSync(join(dir, 'deep.json'), deep(100_000))
    writeFileSync(
      join(dir, 'epoch.csv'),
      'id,time,text,truth,surprise,query\na,99999999999999999,hi,0.5,0.5,q\nb,1700000000,ho,0.5,0.5,q\n',
    )
    writeFileSync(
      join(dir, 'esc.jsonl'),
      '{"id":"a","time":1700000000,"text":"x","truth":0.5,"surprise":0.5,"query":"q"}\n{"id": \u001b[2J\u0007 oops\r}\n',
    )
    const cases: Array<[string[], RegExp]> = [
      [
        ['run', '--plan', 'deep.json'],
        /^kt: deep\.json:1:257: expected JSON nested at most 256 levels deep, got level 257 here$/,
      ],
      [['eval', '--data', 'deep.json'], /^kt: deep\.json:1:257: expected JSON nested at most 256 levels deep/],
      [['deploy', 'deep.json', '--target', 't'], /^kt: deep\.json:1:257: expected JSON nested at most 256 levels deep/],
      [['data', 'import', 'epoch.csv', '--out', 'o'], /^kt: epoch\.csv:2: time: expected a time a date can hold/],
      [
        ['data', 'import', 'esc.jsonl', '--out', 'o'],
        /^kt: esc\.jsonl:2:\d+: expected one JSON object per line .*got "\\u001b"$/,
      ],
    ]
    for (const [args, pattern] of cases) {
      const r = kt(args, {cwd: dir})
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(2)
      expect(
        r.stderr.endsWith('\n') && r.stderr.split('\n').length === 2,
        `${args.join(' ')}: one line: ${JSON.stringify(r.stderr)}`,
      ).toBe(true)
      expect(r.stderr.slice(0, -1)).not.toMatch(CONTROL)
      expect(r.stderr.trim()).toMatch(pattern)
    }
  }, 60_000)
})
