import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, resolve} from 'node:path'
import {describe, expect, it} from 'vitest'
import {loadMemoryDataset} from '../../src/data/conversations/index.js'
import {loadEngineFile} from '../../src/adapters/file.js'
import {parseJsonOrOffset} from '../../src/adapters/json-offset.js'
import {retrievalServiceObjective, serviceSpecOf} from '../../src/adapters/retrieval-service.js'
import {runSearch} from '../../src/study/search.js'
import {defaultConfig} from '../../src/space/index.js'

const TOY = resolve(__dirname, 'fixtures/toy_service.py')
const DATA = resolve(__dirname, '../../fixtures/memory_small.json')
const dataset = loadMemoryDataset(DATA)

/** An engine file for the toy service: one ingest-time parameter, one search-time parameter. */
function engineFile(evaluate: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'kt-svc-'))
  const file = join(dir, 'engine.json')
  writeFileSync(
    file,
    JSON.stringify({
      kt_engine: 1,
      name: 'toy',
      parameters: [
        {name: 'chunk', type: 'int', low: 1, high: 4, default: 1, env: 'TOY_CHUNK', ingest: true},
        {name: 'boost', type: 'float', low: 0, high: 1, default: 0.5, env: 'TOY_BOOST'},
      ],
      evaluate: {kind: 'retrieval-service', ...evaluate},
      tiers: [
        {name: 'smoke', budget: 1},
        {name: 'full', budget: 3},
      ],
      objectives: [
        {metric: 'recall@10', direction: 'maximize'},
        {metric: 'p99_ms', direction: 'minimize'},
      ],
    }),
  )
  return file
}

function objectiveFor(evaluate: Record<string, unknown>) {
  const engine = loadEngineFile(engineFile(evaluate))
  return {
    engine,
    objective: retrievalServiceObjective(serviceSpecOf(engine), dataset, {
      objectives: engine.objectives,
      minTimings: 1,
    }),
  }
}

const ctx = {trialId: 0, configId: 'c', seed: 0}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe('reply offsets', () => {
  it('names the byte where a reply stops being JSON', () => {
    expect(parseJsonOrOffset('{"ids": ["a"]}')).toEqual({ok: true, value: {ids: ['a']}})
    expect(parseJsonOrOffset('GARBAGE')).toMatchObject({ok: false, offset: 0})
    expect(parseJsonOrOffset('{"ids": hello}')).toMatchObject({ok: false, offset: 8})
    expect(parseJsonOrOffset('{"ids": ["a"]} x')).toMatchObject({ok: false, offset: 15})
    expect(parseJsonOrOffset('{"ids": ["é", ')).toMatchObject({ok: false, offset: 15})
  })
})

describe('retrieval-service over stdio (python3)', () => {
  it('scores the rankings with the harness, re-ingests only when an ingest parameter changes', async () => {
    const {engine, objective} = objectiveFor({transport: 'stdio', command: ['python3', TOY, 'good'], timeout_s: 20})
    try {
      const base = defaultConfig(engine.space)
      const r1 = await objective.evaluate(base, 3, ctx)
      const m = r1.metrics!
      expect(m['recall@10']).toBeGreaterThan(0)
      expect(m['recall@10']).toBeLessThanOrEqual(1)
      expect(r1.loss).toBe(-m['recall@10'])
      expect(r1.values).toEqual([-m['recall@10'], m.p99_ms])
      expect(m.p99_ms).toBeGreaterThan(0)
      expect(m.queries).toBe(objective.selection.queries.length)
      expect(m['measured_ingest_ms']).toBeGreaterThan(0)
      const session = objective.firstSession()!
      expect(session.ingestions).toBe(1)
      // a search-time parameter: the ingested state is reused
      const r2 = await objective.evaluate({...base, boost: 0.9}, 1, ctx)
      expect(r2.metrics!.queries).toBeLessThan(m.queries)
      expect(r2.metrics!['measured_ingest_ms']).toBeUndefined()
      expect(session.ingestions).toBe(1)
      // an ingest-time parameter: reset and ingest again
      await objective.evaluate({...base, chunk: 2}, 1, ctx)
      expect(session.ingestions).toBe(2)
    } finally {
      await objective.close()
    }
  })

  it('fails a trial whose reply names an id not in the conversation, or is not JSON, and goes on', async () => {
    const bad = objectiveFor({transport: 'stdio', command: ['python3', TOY, 'bad-id'], timeout_s: 20}).objective
    const garbage = objectiveFor({transport: 'stdio', command: ['python3', TOY, 'garbage'], timeout_s: 20}).objective
    try {
      const config = defaultConfig(bad.space)
      await expect(bad.evaluate(config, 1, ctx)).rejects.toThrow(
        /returned id "no-such-turn", not a turn of conversation/,
      )
      // the same service answers the next trial
      expect((await bad.evaluate(config, 1, ctx)).metrics!['recall@10']).toBeGreaterThanOrEqual(0)
      await expect(garbage.evaluate(config, 1, ctx)).rejects.toThrow(
        /search reply for question .* is not JSON at byte 0 \("GARBAGE"\)/,
      )
      expect((await garbage.evaluate(config, 1, ctx)).metrics!['recall@10']).toBeGreaterThanOrEqual(0)
    } finally {
      await bad.close()
      await garbage.close()
    }
  })

  it('a service that hangs fails at its timeout and its process is gone', async () => {
    const {objective} = objectiveFor({transport: 'stdio', command: ['python3', TOY, 'hang'], timeout_s: 0.5})
    const config = defaultConfig(objective.space)
    await expect(objective.evaluate(config, 1, ctx)).rejects.toThrow(/no answer within 500 ms/)
    const pid = objective.firstSession()!.pid!
    await objective.close()
    expect(alive(pid)).toBe(false)
  })

  it('a study goes on past a failed trial (the study store keeps the reason)', async () => {
    const file = engineFile({transport: 'stdio', command: ['python3', TOY, 'bad-id'], timeout_s: 20})
    const module = resolve(__dirname, '../../src/adapters/retrieval-service.ts')
    const outcome = await runSearch({
      storage: ':memory:',
      objective: {name: 'module', module, options: {engine: file, data: DATA}},
      optimizer: 'random',
      seed: 1,
      maxTrials: 3,
    })
    const statuses = outcome.trials.map((t) => t.status)
    expect(statuses).toContain('failed')
    expect(statuses.filter((s) => s === 'ok').length).toBeGreaterThanOrEqual(2)
    expect(outcome.trials.find((t) => t.status === 'failed')!.error).toContain('no-such-turn')
  })
})

describe('retrieval-service over keep-alive HTTP (python3 ThreadingHTTPServer started by kt)', () => {
  it('starts the server on a free port, scores it, and stops it', async () => {
    const {objective} = objectiveFor({
      transport: 'http',
      url: 'http://127.0.0.1:{port}',
      command: ['python3', TOY, 'good', '--http', '{port}'],
      timeout_s: 20,
    })
    const r = await objective.evaluate(defaultConfig(objective.space), 3, ctx)
    expect(r.metrics!['recall@10']).toBeGreaterThan(0)
    const pid = objective.firstSession()!.pid!
    expect(alive(pid)).toBe(true)
    await objective.close()
    expect(alive(pid)).toBe(false)
  })
})
