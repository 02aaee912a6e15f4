import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {
  canonicalDiaId,
  formatLocomoDate,
  loadMemoryDataset,
  normaliseEvidence,
  parseIsoDate,
  parseLocomoDate,
  parseMemoryDataset,
} from '../../src/data/conversations/index.js'
import {InputError} from '../../src/util/errors.js'
import {EPOCH_MILLISECONDS_FROM, epochMs} from '../../src/data/conversations/dates.js'

const fixture = (name: string): string => join(import.meta.dirname, 'fixtures', name)

/** The one-line message of the InputError that `fn` throws. */
function errorOf(fn: () => unknown): string {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(InputError)
    const message = (error as Error).message
    expect(message).not.toContain('\n')
    return message
  }
  throw new Error('expected an InputError')
}

describe('LoCoMo dates', () => {
  it('reads "1:56 pm on 8 May, 2023" as UTC', () => {
    expect(parseLocomoDate('1:56 pm on 8 May, 2023')).toBe(Date.UTC(2023, 4, 8, 13, 56))
    expect(parseLocomoDate('12:05 am on 1 June, 2023')).toBe(Date.UTC(2023, 5, 1, 0, 5))
    expect(parseLocomoDate('12:30 pm on 1 Jun 2023')).toBe(Date.UTC(2023, 5, 1, 12, 30))
  })

  it('rejects impossible dates', () => {
    expect(parseLocomoDate('1:56 pm on 31 June, 2023')).toBeUndefined()
    expect(parseLocomoDate('13:56 pm on 8 May, 2023')).toBeUndefined()
    expect(parseLocomoDate('yesterday')).toBeUndefined()
  })

  it('formats back to the same string', () => {
    for (const s of ['1:56 pm on 8 May, 2023', '12:05 am on 1 June, 2023', '12:00 pm on 29 February, 2024'])
      expect(formatLocomoDate(parseLocomoDate(s) as number)).toBe(s)
  })

  it('reads ISO 8601 with and without a zone', () => {
    expect(parseIsoDate('2023-05-08')).toBe(Date.UTC(2023, 4, 8))
    expect(parseIsoDate('2023-05-08T13:56:00+02:00')).toBe(Date.UTC(2023, 4, 8, 11, 56))
    expect(parseIsoDate('2023-02-30')).toBeUndefined()
  })
})

describe('evidence id normalisation', () => {
  it('repairs the malformed forms seen in LoCoMo', () => {
    expect(normaliseEvidence('D8:6; D9:17')).toEqual({ids: ['D8:6', 'D9:17'], repaired: true, unreadable: []})
    expect(canonicalDiaId('D:11:26')).toBe('D11:26')
    expect(canonicalDiaId('D30:05')).toBe('D30:5')
    expect(normaliseEvidence('D3:4')).toEqual({ids: ['D3:4'], repaired: false, unreadable: []})
    expect(normaliseEvidence('session 3')).toEqual({ids: [], repaired: true, unreadable: ['session 3']})
  })
})

describe('LoCoMo loader', () => {
  const d = loadMemoryDataset(fixture('tiny-locomo.json'))

  it('reads sessions, turns, times and captions', () => {
    expect(d.format).toBe('locomo')
    const c = d.conversations[0]
    expect(c.id).toBe('tiny-1')
    expect(c.sessions.map((s) => s.id)).toEqual(['1', '2'])
    expect(c.turns.map((t) => t.id)).toEqual(['D1:1', 'D1:2', 'D1:3', 'D2:1', 'D2:2'])
    expect(c.turns[3].time).toBe(Date.UTC(2023, 5, 1, 0, 5))
    expect(c.turns[2].caption).toBe('a photo of a clay bowl')
  })

  it('normalises evidence and counts what names no turn', () => {
    const q = d.questions
    expect(q.map((x) => x.category)).toEqual([
      'single-hop',
      'multi-hop',
      'temporal',
      'adversarial',
      'open-domain',
      'single-hop',
    ])
    expect(q[1].evidence).toEqual(['D1:1', 'D2:2'])
    expect(q[2].evidence).toEqual(['D1:1'])
    expect(q[4].evidence).toEqual(['D1:1'])
    expect(q[5].evidence).toEqual([])
    expect(q[3].answer).toBe('She loves it')
    expect(d.warnings).toEqual({
      'session dates without a session': 1,
      'evidence ids repaired': 2,
      'evidence ids naming no turn': 1,
    })
    expect(d.warningExamples).toEqual(['tiny-1 q4: evidence D9:9 names no turn'])
  })
})

describe('LoCoMo loader errors name file, line and field', () => {
  const base = (): Record<string, unknown> => ({
    sample_id: 's',
    conversation: {
      session_1_date_time: '1:56 pm on 8 May, 2023',
      session_1: [{speaker: 'A', dia_id: 'D1:1', text: 'hi'}],
    },
    qa: [],
  })
  const parse = (sample: unknown): unknown => {
    const text = JSON.stringify([sample], null, 2)
    return parseMemoryDataset('bad.json', text, {format: 'locomo'})
  }

  it('text that is not a string', () => {
    const s = base()
    ;((s.conversation as Record<string, unknown[]>).session_1[0] as Record<string, unknown>).text = 42
    expect(errorOf(() => parse(s))).toBe('bad.json:10: [0].conversation.session_1[0].text: expected a string, got 42')
  })

  it('an unparseable session date', () => {
    const s = base()
    ;(s.conversation as Record<string, unknown>).session_1_date_time = 'the day after'
    expect(errorOf(() => parse(s))).toMatch(
      /^bad\.json:5: \[0\]\.conversation\.session_1_date_time: expected a date like "1:56 pm on 8 May, 2023", got "the day after"$/,
    )
  })

  it('an empty or duplicate turn id', () => {
    const s = base()
    const turns = (s.conversation as Record<string, unknown[]>).session_1
    turns.push({speaker: 'B', dia_id: 'D1:1', text: 'again'})
    expect(errorOf(() => parse(s))).toMatch(
      /^bad\.json:\d+: \[0\]\.conversation\.session_1\[1\]\.dia_id: expected an id not used before/,
    )
    ;(turns[1] as Record<string, unknown>).dia_id = ' '
    expect(errorOf(() => parse(s))).toMatch(/session_1\[1\]\.dia_id: expected a non-empty string, got " "$/)
  })

  it('a bad category, a duplicate sample id, an unknown top level', () => {
    const s = base()
    s.qa = [{question: 'q?', evidence: [], category: 9}]
    expect(errorOf(() => parse(s))).toMatch(/qa\[0\]\.category: expected a LoCoMo category 1\.\.5, got 9$/)
    expect(errorOf(() => parseMemoryDataset('two.json', JSON.stringify([base(), base()]), {format: 'locomo'}))).toMatch(
      /^two\.json:1: \[1\]\.sample_id: expected a sample_id not used before/,
    )
    expect(errorOf(() => parseMemoryDataset('x.json', '"hello"', {format: 'locomo'}))).toBe(
      'x.json:1: (top level): expected a LoCoMo list of samples, got "hello"',
    )
    expect(errorOf(() => parseMemoryDataset('x.json', '[1,', {format: 'locomo'}))).toMatch(
      /^x\.json(:\d+)*: expected valid JSON/,
    )
  })

  it('an unknown format', () => {
    expect(errorOf(() => loadMemoryDataset(fixture('tiny-turns.txt')))).toMatch(
      /tiny-turns\.txt: expected a \.json \(LoCoMo\), \.jsonl or \.csv file/,
    )
  })
})

describe('JSONL turns', () => {
  it('reads turns, sessions and inline questions', () => {
    const d = loadMemoryDataset(fixture('tiny-turns.jsonl'))
    expect(d.conversations).toHaveLength(1)
    const c = d.conversations[0]
    expect(c.sessions).toEqual([
      {id: 's1', time: Date.UTC(2023, 4, 8, 13, 56)},
      {id: '2', time: Date.UTC(2023, 5, 1, 13)},
    ])
    expect(c.turns.map((t) => t.id)).toEqual(['t1', 't2', 't3'])
    expect(d.questions).toEqual([
      {id: 'default/q0', conversation: 'default', text: 'What did Ann make?', evidence: ['t3'], category: 'single-hop'},
    ])
  })

  const jsonl = (...lines: unknown[]): string => lines.map((l) => JSON.stringify(l)).join('\n')
  const turn = {id: 't1', session: 's1', speaker: 'A', time: '2023-05-08', text: 'hello'}

  it('names line and field of bad records', () => {
    const parse = (text: string): unknown => parseMemoryDataset('t.jsonl', text, {format: 'jsonl'})
    expect(errorOf(() => parse(jsonl(turn, {...turn, id: 't2', text: ['x']})))).toBe(
      't.jsonl:2: text: expected a string, got ["x"]',
    )
    expect(errorOf(() => parse(jsonl(turn, turn)))).toBe(
      't.jsonl:2: id: expected an id not used before in this conversation, got "t1"',
    )
    expect(errorOf(() => parse(jsonl({...turn, id: ''})))).toBe('t.jsonl:1: id: expected a non-empty id, got ""')
    expect(errorOf(() => parse(jsonl({...turn, time: 'soon'})))).toMatch(/^t\.jsonl:1: time: expected a date/)
    expect(errorOf(() => parse(`${JSON.stringify(turn)}\n{oops`))).toMatch(
      /^t\.jsonl:2:\d+: expected one JSON object per line/,
    )
    expect(errorOf(() => parse(''))).toBe('t.jsonl: expected at least one turn, got none')
    expect(errorOf(() => parse(jsonl(turn, {question: 'q', evidence: [], category: 'bogus'})))).toMatch(
      /^t\.jsonl:2: category: expected a LoCoMo code 1\.\.5 or one of/,
    )
  })

  it('reads epoch seconds and milliseconds alike (numbers or digit strings), split at EPOCH_MILLISECONDS_FROM', () => {
    const at = Date.UTC(2025, 2, 1, 10)
    const times = [at / 1000, at, String(at / 1000), String(at)]
    const d = parseMemoryDataset('t.jsonl', jsonl(...times.map((time, i) => ({...turn, id: `t${i}`, time}))), {
      format: 'jsonl',
    })
    expect(d.conversations[0].turns.map((t) => t.time)).toEqual([at, at, at, at])
    expect(epochMs(EPOCH_MILLISECONDS_FROM - 1)).toBe((EPOCH_MILLISECONDS_FROM - 1) * 1000)
    expect(epochMs(EPOCH_MILLISECONDS_FROM)).toBe(EPOCH_MILLISECONDS_FROM)
    // the split: 1e11 s is after the year 5000, 1e11 ms before 1974
    expect(new Date(EPOCH_MILLISECONDS_FROM * 1000).getUTCFullYear()).toBeGreaterThan(5000)
    expect(new Date(EPOCH_MILLISECONDS_FROM).getUTCFullYear()).toBeLessThan(1974)
  })

  it('counts evidence that names no turn', () => {
    const d = parseMemoryDataset('t.jsonl', jsonl(turn, {question: 'q?', evidence: ['t1', 'nope'], category: 4}), {
      format: 'jsonl',
    })
    expect(d.questions[0].evidence).toEqual(['t1'])
    expect(d.warnings).toEqual({'evidence ids naming no turn': 1})
  })
})

describe('CSV turns', () => {
  const columns = {id: 'turn', session: 'sess', speaker: 'who', time: 'when', text: 'utterance'}

  it('maps columns, skips and counts empty rows, reads a questions file', () => {
    const d = loadMemoryDataset(fixture('tiny-turns.csv'), {columns, questions: fixture('tiny-questions.jsonl')})
    expect(d.format).toBe('csv')
    const c = d.conversations[0]
    expect(c.turns.map((t) => [t.id, t.session, t.speaker, t.text])).toEqual([
      ['t1', 's1', 'Ann', 'I started pottery classes.'],
      ['t2', 's1', 'Bo', 'Where are they, exactly?'],
      ['t3', 's2', 'Ann', 'I made a vase.'],
    ])
    expect(d.warnings).toEqual({'empty CSV rows skipped': 1})
    expect(d.questions.map((q) => [q.id, q.evidence])).toEqual([['q1', ['t3']]])
  })

  it('names a missing mapped column and a bad row by line', () => {
    expect(errorOf(() => loadMemoryDataset(fixture('tiny-turns.csv')))).toMatch(
      /tiny-turns\.csv:1: expected a column "id" for the turn id, got columns turn, sess, who, when, utterance$/,
    )
    const text = 'id,session,text,time\na,s,hello,2023-01-01\nb,s,bye,not a date\n'
    expect(errorOf(() => parseMemoryDataset('c.csv', text, {format: 'csv'}))).toBe(
      'c.csv:3: time: expected a date (ISO 8601, "1:56 pm on 8 May, 2023", or epoch seconds or milliseconds), got "not a date"',
    )
    expect(errorOf(() => parseMemoryDataset('c.csv', 'id,session,text\na,s,"unclosed\n', {format: 'csv'}))).toMatch(
      /^c\.csv(:\d+)?: expected well-formed CSV/,
    )
  })
})
