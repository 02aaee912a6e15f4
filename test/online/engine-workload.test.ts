import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {loadMemoryDataset, parseMemoryDataset} from '../../src/data/conversations/index.js'
import {RETRIEVAL_SPACE} from '../../src/engine/retrieval/space.js'
import {prepareEvaluation} from '../../src/eval/harness.js'
import {configFromArms, dimensionsOf} from '../../src/online/bins.js'
import {
  EngineHits,
  engineEnvironment,
  simulateEngineWorkload,
  workloadQuestions,
  type EngineWorkloadOptions,
} from '../../src/online/engine-workload.js'
import {mixAt} from '../../src/online/workload.js'
import {defaultConfig, onlineTuned} from '../../src/space/space.js'
import {InputError} from '../../src/util/errors.js'
import {fixturesDir} from '../../src/util/paths.js'
import {kt} from './helpers.js'

// The committed synthetic memory dataset: 2 conversations, 16 single-hop and 16 temporal questions.
const FIXTURE = join(fixturesDir, 'memory_small.json')
const OPTIONS: EngineWorkloadOptions = {steps: 400, runs: 2, seed: 3, sampler: 'logit', window: 100, k: 5}

describe('engine-backed workload', () => {
  const dataset = loadMemoryDataset(FIXTURE)
  const dims = dimensionsOf(RETRIEVAL_SPACE, onlineTuned(RETRIEVAL_SPACE))
  const profile = defaultConfig(RETRIEVAL_SPACE)
  const prepared = prepareEvaluation(dataset)
  const questions = workloadQuestions(prepared.engines, prepared.selection.queries, FIXTURE)
  const report = simulateEngineWorkload(dataset, OPTIONS)

  it('reports every policy, the engine reward model and an in-sample tuned reference', () => {
    expect(Object.keys(report.policies)).toEqual(['profile', 'ts', 'ts-decay', 'ts-adaptive', 'tuned'])
    expect(report.reward_model).toBe('engine')
    expect(report.synthetic_reward_model).toBe(false)
    expect(report.k).toBe(5)
    expect(report.pools).toEqual({
      entity_lookup: {category: 'single-hop', questions: 16},
      temporal: {category: 'temporal', questions: 16},
    })
    expect(report.tuned_reference.in_sample).toBe(true)
    expect(report.tuned_reference.note).toMatch(/in-sample/)
    expect(report.policies.tuned.regret_after_shift_mean).toBe(0)
    expect(report.policies.tuned.final_best).toEqual(report.tuned_reference.after.values)
    // quality is a hit rate
    for (const p of Object.values(report.policies))
      for (const w of [p.before_shift, ...p.after_shift]) {
        expect(w.quality_mean).toBeGreaterThanOrEqual(0)
        expect(w.quality_mean).toBeLessThanOrEqual(1)
      }
  })

  it('is deterministic: the same seed gives the same report (timings aside)', () => {
    const again = simulateEngineWorkload(dataset, OPTIONS)
    const {timing: _a, ...first} = report
    const {timing: _b, ...second} = again
    expect(second).toEqual(first)
    const other = simulateEngineWorkload(dataset, {...OPTIONS, seed: 4})
    expect(other.policies.ts.regret_after_shift_mean).not.toBe(report.policies.ts.regret_after_shift_mean)
  })

  it("tunes a reference at least as good as the profile on each phase's pool", () => {
    expect(report.tuned_reference.before.hit_rate).toBeGreaterThanOrEqual(report.profile_hit_rate.before)
    expect(report.tuned_reference.after.hit_rate).toBeGreaterThanOrEqual(report.profile_hit_rate.after)
    // the mix-weighted value is 0.9 / 0.1 of the per-type rates
    const b = report.tuned_reference.before
    expect(b.hit_rate).toBeCloseTo(0.9 * b.rates.by_type.entity_lookup + 0.1 * b.rates.by_type.temporal, 12)
    expect(b.rates.before).toBe(b.hit_rate)
    expect(report.tuned_reference.after.rates.after).toBe(report.tuned_reference.after.hit_rate)
    const p = report.profile_hit_rate
    expect(p.after).toBeCloseTo(0.1 * p.by_type.entity_lookup + 0.9 * p.by_type.temporal, 12)
  })

  it('computes hits as engine.search does, once per question and configuration', () => {
    const hits = new EngineHits(questions, dims, 5)
    const other = configFromArms(
      profile,
      dims,
      dims.map((d) => d.values.length - 1),
    )
    const byId = new Map(dataset.questions.map((q) => [q.id, q]))
    const picked = [hits.pools[0][0], hits.pools[0][3], hits.pools[1][0], hits.pools[1][5]]
    let expectedHits = 0
    for (const config of [profile, other]) {
      for (const i of picked) {
        const q = byId.get(questions[i].id)!
        const engine = prepared.engines.get(q.conversation)!
        const top = engine.ids(engine.search(q.text, config, 5))
        const direct = top.some((id) => q.evidence.includes(id)) ? 1 : 0
        expectedHits += direct
        expect(hits.hit(i, config)).toBe(direct)
        expect(hits.hit(i, {...config})).toBe(direct) // an equal configuration reuses the memo
      }
    }
    expect(expectedHits).toBeGreaterThan(0)
    expect(hits.searches).toBe(2 * picked.length)
    expect(hits.lookups).toBe(4 * picked.length)
  })

  it('gives every policy of a run the same questions (common random numbers)', () => {
    const hits = new EngineHits(questions, dims, 5)
    const drawn = (config: typeof profile): number[] => {
      const seen: number[] = []
      const spy = Object.assign(Object.create(Object.getPrototypeOf(hits)) as EngineHits, hits, {
        hit: (q: number) => (seen.push(q), 0),
      })
      const episode = engineEnvironment(spy, profile, [profile, profile], 9).episode(1)
      for (let t = 0; t < 200; t++) episode.serve(t, config, mixAt(t, 100), episode.type(t, mixAt(t, 100)), false)
      return seen
    }
    const a = drawn(profile)
    expect(
      drawn(
        configFromArms(
          profile,
          dims,
          dims.map(() => 0),
        ),
      ),
    ).toEqual(a)
    // 90% entity lookups (indices 0..15) before the shift, 90% temporal after
    expect(a.slice(0, 100).filter((q) => q < 16).length).toBeGreaterThan(80)
    expect(a.slice(100).filter((q) => q >= 16).length).toBeGreaterThan(80)
  })

  it('rejects a dataset without temporal questions with a one-line error naming the file', () => {
    const lines = [
      {conversation: 'c', id: 't1', session: 's1', speaker: 'A', text: 'I adopted a cat named Miso.'},
      {conversation: 'c', id: 't2', session: 's1', speaker: 'B', text: 'Lovely, I went hiking.'},
      {question: 'What is the name of the cat?', evidence: ['t1'], category: 'single-hop', conversation: 'c'},
    ]
    const noTemporal = parseMemoryDataset('tiny.jsonl', lines.map((l) => JSON.stringify(l)).join('\n'), {
      format: 'jsonl',
    })
    expect(() => simulateEngineWorkload(noTemporal, OPTIONS)).toThrow(InputError)
    expect(() => simulateEngineWorkload(noTemporal, OPTIONS)).toThrow(
      /^tiny\.jsonl: expected scored questions of both workload types .*temporal.*, got 1 single-hop, 0 temporal$/,
    )
  })
})

describe('kt online workload --data (built CLI)', () => {
  it('runs the engine on a dataset and rejects bad input with one line and exit code 2', () => {
    const ok = kt([
      'online',
      'workload',
      '--data',
      FIXTURE,
      '--steps',
      '200',
      '--runs',
      '1',
      '--window',
      '50',
      '--json',
    ])
    expect(ok.status, ok.stderr).toBe(0)
    const r = JSON.parse(ok.stdout)
    expect(r.reward_model).toBe('engine')
    expect(r.k).toBe(10)
    expect(r.data).toBe(FIXTURE)

    const missing = kt(['online', 'workload', '--data', '/nonexistent/locomo.json'])
    expect(missing.status).toBe(2)
    expect(missing.stderr.trim().split('\n')).toHaveLength(1)
    expect(missing.stderr).toMatch(/\/nonexistent\/locomo\.json/)

    const kWithout = kt(['online', 'workload', '--k', '5'])
    expect(kWithout.status).toBe(2)
    expect(kWithout.stderr.trim()).toMatch(/^kt: --k: expected to be given only with --data/)
  })
})
