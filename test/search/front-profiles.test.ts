import {describe, expect, it} from 'vitest'
import {frontReport, objectiveFront, objectiveReference, type FrontPoint} from '../../src/search/front.js'
import {chooseDomainProfiles as choose, type Candidate} from '../../src/search/profiles.js'
import {domainRules, RETRIEVAL_METRIC_NAMES} from '../../src/eval/retrieval-profiles.js'

const chooseDomainProfiles = (c: Candidate[]) => choose(c, RETRIEVAL_METRIC_NAMES, domainRules())
import {rankOrder} from '../../src/search/ranking.js'

const pt = (trialId: number, quality: number, latencyMs: number): FrontPoint => ({
  trialId,
  quality,
  latencyMs,
  config: {},
})

describe('quality / P99 Pareto front', () => {
  const points = [pt(0, 0.9, 40), pt(1, 0.8, 10), pt(2, 0.85, 30), pt(3, 0.7, 20), pt(4, 0.9, 60), pt(5, 0.6, 5)]

  it('lists the front fastest first and each dominated trial with its dominators', () => {
    const r = frontReport(points, {quality: 0, latencyMs: 100})
    expect(r.front.map((p) => p.trialId)).toEqual([5, 1, 2, 0])
    expect(r.dominated.map((p) => [p.trialId, p.dominatedBy])).toEqual([
      [3, [1]],
      [4, [0]],
    ])
  })

  it('computes the hypervolume against the stated reference point by hand', () => {
    // Gains over (0, 100 ms): (0.9, 60), (0.85, 70), (0.8, 90), (0.6, 95):
    // 0.9 * 60 + 0.85 * 10 + 0.8 * 20 + 0.6 * 5 = 81.5 of the box up to the best values (0.9, 5 ms): 0.9 * 95.
    const r = frontReport(points, {quality: 0, latencyMs: 100})
    expect(r.hypervolume).toBeCloseTo(81.5, 12)
    expect(r.hypervolumeShare).toBeCloseTo(81.5 / (0.9 * 95), 12)
    expect(r.reference.rule).toBe('stated in the engine file; stated in the engine file')
  })

  it("takes its default reference by the one rule of every front: an engine file's front over the same trials has the same hypervolume", () => {
    const r = frontReport(points)
    // quality: worst 0.6 minus 0.1 x the range 0.3; P99: worst 60 plus 0.1 x the range 55
    expect(r.reference).toMatchObject({quality: 0.57, latencyMs: 65.5})
    expect(r.reference.rule).toMatch(/^the worst trial's quality \(0\.6\) minus 0\.1 x the observed range; /)
    const same = objectiveFront(
      points.map((p) => ({trialId: p.trialId, config: {}, metrics: {quality: p.quality, p99_ms: p.latencyMs}})),
      [
        {metric: 'quality', direction: 'maximize'},
        {metric: 'p99_ms', direction: 'minimize'},
      ],
    )
    expect(same.reference).toEqual([r.reference.quality, r.reference.latencyMs])
    expect(same.hypervolume).toBe(r.hypervolume)
    expect(same.hypervolumeShare).toBe(r.hypervolumeShare)
  })

  it('ranks bi-objective observations front by front (NSGA-II), failures last', () => {
    const order = rankOrder([
      {loss: -0.9, values: [-0.9, 40]},
      {loss: -0.7, values: [-0.7, 20]},
      {loss: Infinity},
      {loss: -0.8, values: [-0.8, 10]},
      {loss: -0.9, values: [-0.9, 60]},
    ])
    expect(new Set(order.slice(0, 2))).toEqual(new Set([0, 3]))
    expect(new Set(order.slice(2, 4))).toEqual(new Set([1, 4]))
    expect(order[4]).toBe(2)
  })
})

describe("an engine objective's default reference", () => {
  it('is the worst value pushed out by 0.1 x the observed range, and the rule says so', () => {
    expect(objectiveReference({metric: 'mrr', direction: 'maximize'}, [0.2, 0.7, 0.5])).toEqual({
      value: 0.15,
      rule: "the worst trial's mrr (0.2) minus 0.1 x the observed range",
    })
    expect(objectiveReference({metric: 'p99_ms', direction: 'minimize'}, [10, 30])).toEqual({
      value: 32,
      rule: "the worst trial's p99_ms (30) plus 0.1 x the observed range",
    })
  })

  it('when every trial reached the same value, the rule names the margin really used (its magnitude, or 1 at 0)', () => {
    expect(objectiveReference({metric: 'p99_ms', direction: 'minimize'}, [20, 20])).toEqual({
      value: 22,
      rule: "the worst trial's p99_ms (20) plus 0.1 x its magnitude (every trial reached the same value: no range)",
    })
    const zero = objectiveReference({metric: 'mrr', direction: 'maximize'}, [0, 0, 0])
    expect(zero.value).toBe(-1)
    expect(zero.rule).toBe(
      "the worst trial's mrr (0) minus 1 (every trial reached 0: no range or magnitude to scale by)",
    )
    expect(zero.rule).not.toContain('observed range')
  })
})

describe('domain profiles', () => {
  const c = (trialId: number, quality: number, p99: number, entity: number, temporal: number): Candidate => ({
    trialId,
    config: {'edge.temporal': temporal},
    metrics: {quality, p99_ms: p99, 'quality.entity_lookup': entity},
  })
  const candidates = [
    c(0, 0.9, 60, 0.7, 0.2),
    c(1, 0.88, 45, 0.95, 0.3),
    c(2, 0.878, 30, 0.8, 0.9),
    c(3, 0.75, 8, 0.85, 0.1),
    c(4, 0.7, 5, 0.6, 0.5),
    c(5, 0.6, 2, 0.9, 0.4),
  ]
  const [financial, throughput, coding] = chooseDomainProfiles(candidates)

  it('financial-compliance: P99 <= 50 ms binds, the temporal weight breaks the near-tie', () => {
    expect(financial.trialId).toBe(2)
    expect(financial.constraints[0]).toMatchObject({binds: true, excluded: 1, threshold: 50})
    expect(financial.cost!.given_up).toBeCloseTo(0.022, 12)
    expect(financial.rationale.join('\n')).toMatch(
      /P99 <= 50 ms binds: the best by accuracy overall \(#0: accuracy 0.900, p99 60.00 ms\) violates it/,
    )
    expect(financial.rationale.join('\n')).toMatch(
      /#2 has the highest edge.temporal \(0.900 vs 0.300\), costing 0.00200 accuracy/,
    )
    expect(financial.onFront).toBe(true)
  })

  it('high-throughput: fastest trial with accuracy >= 0.8 x best (0.72)', () => {
    expect(throughput.trialId).toBe(3)
    expect(throughput.constraints[0].threshold).toBeCloseTo(0.72, 12)
    expect(throughput.constraints[0].binds).toBe(true)
    expect(throughput.cost!.given_up).toBe(6)
  })

  it('coding-assistant: best entity lookup within P99 <= 20 ms', () => {
    expect(coding.trialId).toBe(5)
    expect(coding.constraints[0].binds).toBe(true)
    expect(coding.cost!.given_up).toBeCloseTo(0.05, 12)
  })

  it('says when no trial meets a constraint', () => {
    const slow = [c(0, 0.9, 60, 0.7, 0.2), c(1, 0.8, 25, 0.9, 0.1)]
    const [, , none] = chooseDomainProfiles(slow)
    expect(none.trialId).toBeNull()
    expect(none.rationale[0]).toBe('no trial meets P99 <= 20 ms; closest is #1 at 25.00')
  })

  it('says when a constraint does not bind', () => {
    const fast = [c(0, 0.9, 10, 0.7, 0.2), c(1, 0.8, 5, 0.9, 0.1)]
    const [fin] = chooseDomainProfiles(fast)
    expect(fin.trialId).toBe(0)
    expect(fin.constraints[0].binds).toBe(false)
    expect(fin.rationale.join('\n')).toMatch(/does not bind/)
    expect(fin.rationale[fin.rationale.length - 1]).toBe('nothing given up against the unconstrained best')
  })
})
