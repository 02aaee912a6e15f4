import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {analyzeStudy, isBiObjective} from '../../src/eval/retrieval-analysis.js'
import {bundleRoutedProfile, runTypeSweeps} from '../../src/search/routed.js'
import {createObjective, retrievalObjectives} from '../../src/eval/retrieval-objective.js'
import type {Objective} from '../../src/search/types.js'
import type {ParamSpace} from '../../src/space/index.js'
import {runSearch} from '../../src/study/search.js'

const data = fileURLToPath(new URL('./fixtures/mini-memory.jsonl', import.meta.url))

describe('routed profile from per-type sweeps', () => {
  it('keeps an override only where the type gains at least the minimum, with only the changed keys', () => {
    const base = {x: 0.5, y: 1, mode: 'a'}
    const routed = bundleRoutedProfile(
      base,
      [
        {type: 'A', base: 0.91, best: 0.99, bestConfig: {x: 0.2, y: 1, mode: 'a'}},
        {type: 'B', base: 0.9, best: 0.905, bestConfig: {x: 0.6, y: 1, mode: 'b'}},
        {type: 'C', base: 0.8, best: 0.8, bestConfig: {...base}},
      ],
      0.01,
      'router',
    )
    expect(routed.overrides).toEqual({A: {x: 0.2}})
    expect(routed.base).toEqual({...base, router: true})
    expect(routed.per_type.map((t) => t.override)).toEqual([true, false, false])
    expect(routed.per_type[1].reason).toMatch(/gain 0.0050 on B queries is below 0.01: served by the base/)
    expect(routed.per_type[2].reason).toMatch(/found the base configuration itself/)
  })

  it('runs one sweep over all types and one per type, and re-scores base and type bests on each type', async () => {
    const space: ParamSpace = {
      id: 'typed',
      params: [{kind: 'float', name: 'x', low: 0, high: 1, scale: 'linear', default: 0.5, env: 'X', description: ''}],
    }
    const centres: Record<string, number> = {A: 0.2, B: 0.8, C: 0.5}
    const quality = (x: number, type: string | undefined): number =>
      type
        ? 1 - (x - centres[type]) ** 2
        : (['A', 'B', 'C'] as const).reduce((s, t) => s + 1 - (x - centres[t]) ** 2, 0) / 3
    const objectiveFor = (type: string | undefined): {spec: {name: string}; instance: Objective} => ({
      spec: {name: 'branin'},
      instance: {id: `typed-${type ?? 'all'}`, space, evaluate: (c) => ({loss: -quality(c.x as number, type)})},
    })
    const routed = await runTypeSweeps({
      types: ['A', 'B', 'C'],
      objectiveFor,
      studyPrefix: 'typed',
      seed: 1,
      minGain: 0.01,
      runStudy: async (name, objective) => {
        const out = await runSearch({
          storage: ':memory:',
          study: name,
          objective: objective.spec,
          objectiveInstance: objective.instance,
          optimizer: 'grid',
          settings: {gridPoints: 11},
          seed: 1,
          maxTrials: 11,
        })
        return out.best ? {config: out.best.config} : undefined
      },
    })
    expect(routed.base).toEqual({x: 0.5})
    expect(routed.overrides).toEqual({A: {x: 0.2}, B: {x: 0.8}})
    expect(routed.per_type[0].gain).toBeCloseTo(0.09, 12)
    expect(routed.per_type[2]).toMatchObject({type: 'C', override: false, keys: []})
  })
})

describe('retrieval engine as a bi-objective objective', () => {
  it('reports quality, P99 latency and quality per query type on nested fidelity tiers', async () => {
    const objective = await createObjective({data})
    expect(objective.fidelity).toEqual({min: 1, max: 9, eta: 3})
    expect(objective.valueNames).toEqual(['neg_quality', 'p99_ms'])
    const ctx = {trialId: 0, configId: 'a', seed: 0}
    const low = await objective.evaluate({}, 1, ctx)
    const high = await objective.evaluate({}, 9, ctx)
    expect(low.metrics!.queries).toBeLessThan(high.metrics!.queries)
    expect(high.metrics!.queries).toBe(18)
    expect(high.loss).toBe(-high.metrics!.quality)
    expect(high.values).toEqual([-high.metrics!.quality, high.metrics!.p99_ms])
    expect(high.metrics!.quality).toBeGreaterThan(0)
    expect(high.metrics!.quality).toBeLessThanOrEqual(1)
    const perType = Object.keys(high.metrics!).filter((k) => k.startsWith('quality.'))
    expect(perType.length).toBeGreaterThan(1)
    // Quality is deterministic (latency is a timing).
    expect((await objective.evaluate({}, 9, ctx)).metrics!.quality).toBe(high.metrics!.quality)
  })

  it('restricts to one query type, and rejects a type with no queries', () => {
    const {objectiveFor, types, missingTypes} = retrievalObjectives({data})
    expect(types.length + missingTypes.length).toBe(5)
    const one = objectiveFor(types[0]).instance
    const result = one.evaluate({}, 9, {trialId: 0, configId: 'a', seed: 0}) as {metrics: Record<string, number>}
    expect(Object.keys(result.metrics).filter((k) => k.startsWith('quality.'))).toEqual([`quality.${types[0]}`])
    if (missingTypes.length > 0)
      expect(() => objectiveFor(missingTypes[0])).toThrow(/expected at least one scored query of that type/)
  })

  it('a BOHB study on it yields a front and the three domain profiles', async () => {
    const out = await runSearch({
      storage: ':memory:',
      objective: {name: 'retrieval', options: {data}},
      optimizer: 'bohb',
      seed: 2,
      maxBudget: 8,
    })
    expect(isBiObjective(out.trials)).toBe(true)
    const analysis = analyzeStudy(out.trials)
    expect(analysis.front.front.length).toBeGreaterThan(0)
    expect(analysis.front.hypervolume).toBeGreaterThan(0)
    expect(analysis.profiles.map((p) => p.profile)).toEqual([
      'financial-compliance',
      'high-throughput',
      'coding-assistant',
    ])
    expect(analysis.profiles[1].trialId).not.toBeNull()
  })
})
