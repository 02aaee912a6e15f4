import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {parseMemoryDataset} from '../../src/data/conversations/index.js'
import {
  MEMORY_FIXTURES,
  generateMemoryDataset,
  generateMemoryFixtures,
  memoryDatasetJson,
} from '../../src/data/memory-synth/index.js'
import {fixturesDir} from '../../src/util/paths.js'

describe('synthetic memory conversations', () => {
  const options = {seed: 3, conversations: 2, sessions: 8, turnsPerSession: 10}

  it('are a function of the options (same seed, same bytes; another seed, other bytes)', () => {
    expect(memoryDatasetJson(generateMemoryDataset(options))).toBe(memoryDatasetJson(generateMemoryDataset(options)))
    expect(memoryDatasetJson(generateMemoryDataset({...options, seed: 4}))).not.toBe(
      memoryDatasetJson(generateMemoryDataset(options)),
    )
  })

  it('load as LoCoMo with every evidence id resolved and every category present', () => {
    const text = memoryDatasetJson(generateMemoryDataset(options))
    const d = parseMemoryDataset('synth.json', text, {format: 'locomo'})
    expect(d.warnings).toEqual({})
    expect(d.conversations).toHaveLength(2)
    expect(d.conversations[0].sessions).toHaveLength(8)
    const categories = new Set(d.questions.map((q) => q.category))
    expect([...categories].sort()).toEqual(['adversarial', 'multi-hop', 'open-domain', 'single-hop', 'temporal'])
    for (const q of d.questions) expect(q.evidence.length).toBeGreaterThan(0)
    // Multi-hop chains span two sessions.
    const chain = d.questions.find((q) => q.text.includes('chew up')) as {evidence: readonly string[]}
    expect(new Set(chain.evidence.map((e) => e.split(':')[0])).size).toBe(2)
  })

  it('move a speaker to a new city after mentioning the first one (a changing attribute)', () => {
    const [sample] = generateMemoryDataset({...options, conversations: 1})
    const q = sample.qa.find((x) => x.question.startsWith('Where does')) as {answer: string; evidence: string[]}
    const turns = Object.values(sample.conversation).filter(Array.isArray).flat() as Array<{
      dia_id: string
      text: string
    }>
    const evidence = turns.find((t) => t.dia_id === q.evidence[0]) as {text: string}
    expect(evidence.text).toContain(`moved to ${q.answer}`)
    expect(turns.some((t) => t.text.includes('I have been living in'))).toBe(true)
  })

  it('temporal answers are the evidence session dates', () => {
    const [sample] = generateMemoryDataset({...options, conversations: 1})
    const q = sample.qa.find((x) => x.category === 2) as {answer: string; evidence: string[]}
    const session = q.evidence[0].slice(1, q.evidence[0].indexOf(':'))
    const date = sample.conversation[`session_${session}_date_time`] as string
    expect(date.replace(',', '').endsWith(q.answer)).toBe(true)
  })

  it('the committed fixture regenerates byte-identically', () => {
    expect(MEMORY_FIXTURES.map((f) => f.id)).toContain('memory_small')
    const statuses = generateMemoryFixtures(fixturesDir, true)
    expect(statuses.map((s) => s.status)).toEqual(statuses.map(() => 'identical'))
    const dir = mkdtempSync(join(tmpdir(), 'kt-memory-'))
    expect(generateMemoryFixtures(dir, true)[0].status).toBe('missing')
    expect(generateMemoryFixtures(dir, false)[0].status).toBe('written')
    expect(generateMemoryFixtures(dir, false)[0].status).toBe('unchanged')
  })
})
