import {describe, expect, it} from 'vitest'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, relative} from 'node:path'
import {generateImportanceDataset, FIXTURE_SPECS} from '../../src/data/importance/synthetic.js'
import {serializeDataset, parseDataset, toImportanceInput, truthOf} from '../../src/data/importance/dataset.js'
import {generateImportanceFixtures} from '../../src/data/importance/fixtures.js'
import {auditLeakage} from '../../src/data/importance/leakage.js'
import {importLabelledTurns, DEFAULT_COLUMNS} from '../../src/data/importance/import.js'
import {computeSignals} from '../../src/engine/importance/signals.js'
import {importanceFromConversation} from '../../src/data/importance/from-conversations.js'
import {loadMemoryDataset} from '../../src/data/conversations/load.js'
import {fixturesDir} from '../../src/util/paths.js'
import {functionalDependence} from '../../src/stats/dependence.js'
import {Rng} from '../../src/util/rng.js'

const dir = mkdtempSync(join(tmpdir(), 'kt-data-'))

describe('synthetic importance data', () => {
  it('regenerates the committed fixtures byte-identically', () => {
    expect(generateImportanceFixtures(fixturesDir, true).map((f) => f.status)).toEqual([
      'identical',
      'identical',
      'identical',
    ])
  })

  it('follows the stated distributions: pareto has exactly 80% in [0, .3) and 20% in [.7, 1]', () => {
    const d = generateImportanceDataset({...FIXTURE_SPECS[0], n: 1000, seed: 1})
    const t = d.turns.map((x) => x.truth)
    expect(t.filter((x) => x < 0.3).length).toBe(800)
    expect(t.filter((x) => x >= 0.7).length).toBe(200)
    const b = generateImportanceDataset({...FIXTURE_SPECS[0], n: 1000, seed: 1, distribution: 'balanced'}).turns.map(
      (x) => x.truth,
    )
    expect(b.filter((x) => x >= 0.7).length).toBe(250)
    expect(b.filter((x) => x < 0.3).length).toBe(250)
  })

  it('pins the reference time and keeps every turn before it', () => {
    const d = generateImportanceDataset(FIXTURE_SPECS[1])
    expect(d.reference_time).toBe('2025-01-01T00:00:00Z')
    expect(d.turns.every((t) => Date.parse(t.time) <= Date.parse(d.reference_time))).toBe(true)
  })

  it('makes recency timestamps younger than uniform ones on average', () => {
    const age = (p: 'recency' | 'uniform') => {
      const d = generateImportanceDataset({...FIXTURE_SPECS[0], n: 500, timestamps: p})
      return d.turns.reduce((s, t) => s + (Date.parse(d.reference_time) - Date.parse(t.time)), 0) / 500
    }
    expect(age('recency')).toBeLessThan(age('uniform') / 2)
  })

  it('differs by seed', () => {
    expect(serializeDataset(generateImportanceDataset({...FIXTURE_SPECS[2], seed: 1}))).not.toBe(
      serializeDataset(generateImportanceDataset({...FIXTURE_SPECS[2], seed: 2})),
    )
  })
})

describe('leakage audit', () => {
  const d = generateImportanceDataset(FIXTURE_SPECS[0])
  const signals = computeSignals(toImportanceInput(d), 168)
  const truth = truthOf(d)

  it('passes the fixtures: surprise tracks the label but is not a function of it', () => {
    expect(auditLeakage(signals, truth).map((a) => a.verdict)).toEqual(['ok', 'ok', 'ok', 'ok'])
  })

  it('flags a signal computed from the label, even non-monotonically', () => {
    const leaky = {...signals, relevance: truth.map((t) => (t - 0.5) ** 2)}
    const audit = auditLeakage(leaky, truth)
    expect(audit.find((a) => a.signal === 'relevance')!.verdict).toBe('leak')
  })

  it('flags a constant signal as such, with an undefined correlation', () => {
    const constant = {...signals, habituation: new Float64Array(signals.n).fill(1)}
    const a = auditLeakage(constant, truth).find((x) => x.signal === 'habituation')!
    expect(a.verdict).toBe('constant')
    expect(a.spearman).toBeNull()
  })

  it('estimates functional dependence: 1 for a function, about 0 for noise', () => {
    const x = Float64Array.from({length: 200}, (_, i) => i / 200)
    expect(
      functionalDependence(
        x,
        x.map((v) => Math.sin(6 * v)),
      ),
    ).toBeGreaterThan(0.99)
    const rng = new Rng(4)
    const noise = Float64Array.from({length: 200}, () => rng.next())
    expect(Math.abs(functionalDependence(x, noise)!)).toBeLessThan(0.3)
    expect(functionalDependence(x, new Float64Array(200))).toBeNull()
  })

  it('flags an exact copy of the label on a small dataset with skewed labels (25 Pareto turns)', () => {
    const small = generateImportanceDataset({...FIXTURE_SPECS[0], n: 25, seed: 7})
    const cols = computeSignals(toImportanceInput(small), 168)
    const label = truthOf(small)
    const audit = auditLeakage({...cols, surprise: Float64Array.from(label)}, label)
    const surprise = audit.find((a) => a.signal === 'surprise')!
    expect(surprise.verdict).toBe('leak')
    expect(surprise.dependence).toBeGreaterThanOrEqual(1 - 6 / (25 * 26) - 1e-12) // a copy's rank dependence
  })

  it('says too-few-rows, never constant or ok, when the rows cannot show a copy of the label', () => {
    const truth = Float64Array.from([0.9, 0.1])
    const two = auditLeakage(
      {
        n: 2,
        ageHours: new Float64Array(2),
        tokens: new Float64Array(2),
        decay: Float64Array.from([0.2, 0.8]),
        surprise: Float64Array.from([0.8, 0.2]),
        relevance: Float64Array.from([1, 0]),
        habituation: Float64Array.from([1, 1]),
      },
      truth,
    )
    expect(two.map((a) => a.verdict)).toEqual(['too-few-rows', 'too-few-rows', 'too-few-rows', 'constant'])
    expect(two[0].dependence).toBeNull()
    expect(two[0].reason).toMatch(/2 row\(s\): dependence on the label is undefined below 3 rows/)
    // 10 rows: a copy explains at most 1 - 6/110 = 94.5% on ranks; a shuffled signal is not "ok" either
    const label = Float64Array.from([0.01, 0.02, 0.03, 0.05, 0.08, 0.1, 0.2, 0.25, 0.8, 1])
    const shuffled = Float64Array.from([0.5, 0.1, 0.9, 0.3, 0.7, 0.2, 0.8, 0.4, 0.6, 0.05])
    const ten = auditLeakage(
      {
        n: 10,
        ageHours: new Float64Array(10),
        tokens: new Float64Array(10),
        decay: shuffled,
        surprise: label.map((v) => v * v),
        relevance: shuffled,
        habituation: shuffled,
      },
      label,
    )
    expect(ten.map((a) => a.verdict)).toEqual(['too-few-rows', 'too-few-rows', 'too-few-rows', 'too-few-rows'])
    expect(ten[1].reason).toMatch(/10 rows: even an exact copy of the label may explain only 94\.5% .*needs 11 rows/)
  })
})

describe('dataset files', () => {
  it('names the field of a bad turn', () => {
    const d = JSON.parse(serializeDataset(generateImportanceDataset(FIXTURE_SPECS[2])))
    d.turns[2].time = '2026-01-01T00:00:00Z'
    expect(() => parseDataset(d, 'x.json')).toThrow(
      /x\.json: turns\[2\]\.time: expected a time at or before reference_time/,
    )
    d.turns[2].time = 'yesterday'
    expect(() => parseDataset(d, 'x.json')).toThrow(/x\.json: turns\[2\]\.time: expected an ISO-8601 UTC time/)
    d.turns[2].time = d.turns[1].time
    d.turns[2].id = d.turns[1].id
    expect(() => parseDataset(d, 'x.json')).toThrow(/turns\[2\]\.id: expected a unique id/)
  })
})

describe('import', () => {
  it('reads CSV with mapped columns and a data-derived reference time', () => {
    const file = join(dir, 'a.csv')
    writeFileSync(
      file,
      'key,when,content,label,s,q\nk1,2025-03-01T10:00:00Z,"Flight, booked",0.9,0.8,trip\nk2,1740823200,ok,0.1,0.2,trip\n',
    )
    const d = importLabelledTurns({
      file,
      id: 'a',
      columns: {id: 'key', time: 'when', text: 'content', truth: 'label', surprise: 's', query: 'q'},
    })
    expect(d.reference_time).toBe('2025-03-01T10:00:00Z')
    expect(d.turns[0].text).toBe('Flight, booked')
    expect(d.turns[1].time).toBe('2025-03-01T10:00:00Z')
    expect(d.queries).toEqual([{id: 'q1', text: 'trip'}])
  })

  it('reads epoch seconds and epoch milliseconds alike, as the conversation loaders do', () => {
    const file = join(dir, 'epoch.csv')
    writeFileSync(file, 'id,time,text,truth,surprise,query\n1,1740823200,a,0.5,0.1,q\n2,1740823200000,b,0.5,0.1,q\n')
    const d = importLabelledTurns({file, id: 'e', columns: DEFAULT_COLUMNS})
    expect(d.turns.map((t) => t.time)).toEqual(['2025-03-01T10:00:00Z', '2025-03-01T10:00:00Z'])
  })

  it('names file, line and column of bad values', () => {
    const file = join(dir, 'b.jsonl')
    writeFileSync(
      file,
      '{"id":"1","time":"2025-01-01T00:00:00Z","text":"a","truth":0.5,"surprise":0.1,"query":"q"}\n{"id":"2","time":"2025-01-01T00:00:00Z","text":"b","truth":7,"surprise":0.1,"query":"q"}\n',
    )
    expect(() => importLabelledTurns({file, id: 'b', columns: DEFAULT_COLUMNS})).toThrow(
      /b\.jsonl:2: truth: expected a number in \[0, 1\], got 7/,
    )
    writeFileSync(file, '{"id":"1"}\nnot json\n')
    expect(() => importLabelledTurns({file, id: 'b', columns: DEFAULT_COLUMNS})).toThrow(
      /b\.jsonl:2:\d+: expected one JSON object per line/,
    )
    const csv = join(dir, 'c.csv')
    writeFileSync(
      csv,
      'id,time,text,truth,surprise,query\n1,2025-01-01,a,0.5,0.1,q\n2,2025-01-01T00:00:00Z,b,0.5,0.1,q\n',
    )
    expect(() => importLabelledTurns({file: csv, id: 'c', columns: DEFAULT_COLUMNS})).toThrow(
      /c\.csv:2: time: expected an ISO-8601 time with a zone/,
    )
    expect(() => importLabelledTurns({file: join(dir, 'x.txt'), id: 'x', columns: DEFAULT_COLUMNS})).toThrow(
      /expected an existing file/,
    )
  })

  it('refuses a JSONL string where a number is expected, in one line naming file, line and field (review R#15)', () => {
    const file = join(dir, 'strtruth.jsonl')
    const ok = '{"id":"1","time":"2025-01-01T00:00:00Z","text":"a","truth":0.5,"surprise":0.1,"query":"q"}'
    writeFileSync(
      file,
      `${ok}\n{"id":"2","time":"2025-01-01T01:00:00Z","text":"b","truth":"0.2","surprise":0.1,"query":"q"}\n`,
    )
    expect(() => importLabelledTurns({file, id: 's', columns: DEFAULT_COLUMNS})).toThrow(
      /^.*strtruth\.jsonl:2: truth: expected a JSON number in \[0, 1\] \(not a string\), got "0\.2"$/,
    )
    writeFileSync(
      file,
      `${ok}\n{"id":"2","time":"2025-01-01T01:00:00Z","text":"b","truth":0.2,"surprise":0.1,"query":{"q":1}}\n`,
    )
    expect(() => importLabelledTurns({file, id: 's', columns: DEFAULT_COLUMNS})).toThrow(
      /strtruth\.jsonl:2: query: expected a string, got/,
    )
    // CSV cells are text: numbers there are read from it
    const csv = join(dir, 'num.csv')
    writeFileSync(
      csv,
      'id,time,text,truth,surprise,query\n1,2025-01-01T00:00:00Z,a,0.5,0.1,q\n2,2025-01-01T01:00:00Z,b, 0.2 ,0.1,q\n',
    )
    expect(importLabelledTurns({file: csv, id: 'n', columns: DEFAULT_COLUMNS}).turns[1].truth).toBe(0.2)
  })

  it('describes the dataset by the file name, not the path as typed, so its bytes do not depend on the current directory (review R#15)', () => {
    const file = join(dir, 'cwd.jsonl')
    writeFileSync(
      file,
      '{"id":"1","time":"2025-01-01T00:00:00Z","text":"a","truth":0.5,"surprise":0.1,"query":"q"}\n{"id":"2","time":"2025-01-01T01:00:00Z","text":"b","truth":0.2,"surprise":0.1,"query":"q"}\n',
    )
    const absolute = importLabelledTurns({file, id: 'c', columns: DEFAULT_COLUMNS})
    const relativePath = importLabelledTurns({file: relative(process.cwd(), file), id: 'c', columns: DEFAULT_COLUMNS})
    expect(absolute.description).toBe('Imported from cwd.jsonl (2 turns).')
    expect(serializeDataset(relativePath)).toBe(serializeDataset(absolute))
    // the LoCoMo path of kt data import too
    const locomo = (f: string) => importanceFromConversation(loadMemoryDataset(f, {format: 'locomo'}), {})
    const fixture = join(fixturesDir, 'memory_small.json')
    expect(locomo(fixture).description).toMatch(/^Real conversation \S+ from memory_small\.json:/)
    expect(serializeDataset(locomo(relative(process.cwd(), fixture)))).toBe(serializeDataset(locomo(fixture)))
  })
})

describe('functional dependence with ties', () => {
  it('does not let the order of tied labels fake smoothness', () => {
    // label: 0 for most rows, y trends with row order: the label explains none of y's variance
    const n = 300
    const x = Float64Array.from({length: n}, (_, i) => (i % 10 === 0 ? 1 : 0))
    const y = Float64Array.from({length: n}, (_, i) => i / n)
    expect(functionalDependence(x, y)!).toBeLessThan(0.1)
  })

  it('equals the plain successive-difference formula without ties', () => {
    const x = [3, 1, 2, 5, 4],
      y = [0.3, 0.9, 0.1, 0.7, 0.5]
    // sorted by x: y = 0.9, 0.1, 0.3, 0.5, 0.7; diffs^2 = .64 + .04 + .04 + .04 = .76
    const mean = 0.5,
      ss = [0.3, 0.9, 0.1, 0.7, 0.5].reduce((s, v) => s + (v - mean) ** 2, 0)
    expect(functionalDependence(x, y)).toBeCloseTo(1 - 0.76 / (2 * ss), 12)
  })

  it('is near 1 for a function of a discrete label', () => {
    const x = Float64Array.from({length: 100}, (_, i) => i % 4)
    // 1 - 35 / 2450: the three jumps between label groups are the only differences
    expect(
      functionalDependence(
        x,
        x.map((v) => v * v),
      ),
    ).toBeCloseTo(1 - 35 / 2450, 12)
  })
})
