import {describe, expect, it} from 'vitest'
import {BOHB_HINT_FORMAT, BohbOptimizer} from '../../src/search/bohb.js'
import {countingOnesObjective, simplexObjective} from '../../src/search/benchmarks/index.js'
import {RandomOptimizer} from '../../src/search/random.js'
import type {Objective, Optimizer, Trial, TrialResult} from '../../src/search/types.js'

/** Runs ask/tell sequentially; returns every trial with its loss. */
function drive(opt: Optimizer, obj: Objective, n: number, seed: number, fails: (t: Trial) => boolean = () => false): Array<Trial & {loss?: number}> {
  const out: Array<Trial & {loss?: number}> = []
  const checkpoints = new Map<number, unknown>()
  for (let i = 0; i < n; i++) {
    const t = opt.ask()
    if (typeof t === 'string') throw new Error(t)
    if (fails(t)) {
      opt.tell(t.id, {status: 'failed'})
      out.push(t)
      continue
    }
    const state = t.continues ? checkpoints.get(t.continues.trialId) : undefined
    const r = obj.evaluate(t.config, t.budget, {trialId: t.id, configId: t.configId, seed, checkpoint: state ? {budget: t.continues!.budget, state} : undefined}) as {loss: number; checkpoint?: unknown}
    checkpoints.set(t.id, r.checkpoint)
    opt.tell(t.id, {status: 'ok', loss: r.loss})
    out.push({...t, loss: r.loss})
  }
  return out
}

describe('BOHB', () => {
  const obj = countingOnesObjective()

  it('is deterministic: the same seed gives the same trials, another seed other trials', () => {
    const run = (seed: number): string => JSON.stringify(drive(new BohbOptimizer(obj.space, {seed, fidelity: obj.fidelity}), obj, 200, seed))
    expect(run(3)).toBe(run(3))
    expect(run(3)).not.toBe(run(4))
  })

  it('runs the first bracket as synchronous successive halving: 81 at 9, the best 27 continue at 27, then 9 at 81', () => {
    const trials = drive(new BohbOptimizer(obj.space, {seed: 1, fidelity: obj.fidelity}), obj, 81 + 27 + 9 + 3 + 1, 1)
    expect(trials.slice(0, 81).every((t) => t.budget === 9)).toBe(true)
    const rung1 = trials.slice(81, 108)
    expect(rung1.every((t) => t.budget === 27)).toBe(true)
    const best27 = [...trials.slice(0, 81)].sort((a, b) => a.loss! - b.loss! || a.id - b.id).slice(0, 27).map((t) => t.configId)
    expect(new Set(rung1.map((t) => t.configId))).toEqual(new Set(best27))
    for (const t of rung1) {
      const previous = trials.find((p) => p.id === t.continues!.trialId)!
      expect(previous.configId).toBe(t.configId)
      expect(t.continues!.budget).toBe(9)
    }
    expect(trials.slice(108, 117).every((t) => t.budget === 81)).toBe(true)
    expect(trials.slice(117, 120).every((t) => t.budget === 243)).toBe(true)
    expect(trials[120].budget).toBe(729)
  })

  it('uses the model only after each side of the split has more points than dimensions (34 at d = 16)', () => {
    const trials = drive(new BohbOptimizer(obj.space, {seed: 2, fidelity: obj.fidelity}), obj, 81, 2)
    expect(trials.slice(0, 34).some((t) => t.info?.model_based)).toBe(false)
    const later = trials.slice(34).filter((t) => t.info?.model_based).length
    // About 2/3 of the remaining 47 draws are model-based (1/3 stay random).
    expect(later).toBeGreaterThan(20)
    expect(later).toBeLessThan(47)
  })

  it('never promotes a failed trial', () => {
    const failing = (t: Trial): boolean => t.budget === 9 && t.id % 10 !== 0 // only 9 of 81 succeed
    const trials = drive(new BohbOptimizer(obj.space, {seed: 5, fidelity: obj.fidelity}), obj, 81 + 9, 5, failing)
    const okAt9 = new Set(trials.slice(0, 81).filter((t) => t.id % 10 === 0).map((t) => t.configId))
    const rung1 = trials.slice(81, 90)
    expect(rung1.every((t) => t.budget === 27 && okAt9.has(t.configId))).toBe(true)
  })

  it('opens the next bracket while a rung waits for results (parallel workers)', () => {
    const bohb = new BohbOptimizer(obj.space, {seed: 1, fidelity: obj.fidelity})
    for (let i = 0; i < 81; i++) expect((bohb.ask() as Trial).budget).toBe(9)
    const next = bohb.ask() as Trial
    expect(next.budget).toBe(27)
    expect(next.info?.iteration).toBe(1)
  })

  for (const simplexSampling of ['project-near', 'project', 'reject'] as const) {
    it(`keeps every simplex proposal on the floored simplex (${simplexSampling} inside the KDE)`, () => {
      const simplex = simplexObjective()
      const trials = drive(new BohbOptimizer(simplex.space, {seed: 7, simplexSampling}), simplex, 150, 7)
      expect(trials.filter((t) => t.info?.model_based).length).toBeGreaterThan(50)
      for (const t of trials) {
        const w = Object.values(t.config) as number[]
        expect(Math.abs(w.reduce((a, b) => a + b, 0) - 1)).toBeLessThan(1e-9)
        for (const x of w) expect(x).toBeGreaterThanOrEqual(0.05 - 1e-12)
      }
    })
  }

  it('reaches the face where the simplex optimum sits (w4 at its floor) only when projecting; reference mode never does', () => {
    const simplex = simplexObjective()
    const atFloor = (options: {simplexSampling?: 'project-near' | 'reject'; reference?: boolean}): number => {
      const trials = drive(new BohbOptimizer(simplex.space, {seed: 3, ...options}), simplex, 200, 3)
      return trials.filter((t) => t.info?.model_based && Math.abs((Object.values(t.config) as number[])[3] - 0.05) < 1e-12).length
    }
    expect(atFloor({})).toBeGreaterThan(10)
    expect(atFloor({simplexSampling: 'reject'})).toBe(0)
    expect(atFloor({reference: true})).toBe(0)
  })

  it('beats random search on the simplex after 100 evaluations for this seed (model-based picks help)', () => {
    const simplex = simplexObjective()
    const best = (opt: Optimizer): number => Math.min(...drive(opt, simplex, 100, 0).map((t) => t.loss!))
    expect(best(new BohbOptimizer(simplex.space, {seed: 0}))).toBeLessThan(best(new RandomOptimizer(simplex.space, {seed: 0})))
  })
  /**
   * An asker that keeps `lag` results outstanding (as parallel workers do), logging every ask with
   * its hint (as the store keeps it, JSON) and every tell in order: the history a replica replays
   * from a study store. Trials with `fails` are told as failed (never promoted, last in the KDE).
   */
  function history(make: () => BohbOptimizer, o: Objective, steps: number, lag: number, fails: (t: Trial) => boolean = () => false) {
    const asker = make()
    const log: Array<{ask: Trial; hint: unknown} | {tell: number; result: TrialResult}> = []
    const checkpoints = new Map<number, unknown>()
    const pending: Array<{id: number; result: TrialResult}> = []
    const tellOne = (): void => {
      const p = pending.shift()!
      asker.tell(p.id, p.result)
      log.push({tell: p.id, result: p.result})
    }
    let asked = 0
    while (asked < steps) {
      const t = asker.ask()
      if (typeof t === 'string') {
        tellOne()
        continue
      }
      asked++
      log.push({ask: t, hint: JSON.parse(JSON.stringify(asker.askHint() ?? null))})
      if (fails(t)) {
        pending.push({id: t.id, result: {status: 'failed'}})
      } else {
        const state = t.continues ? checkpoints.get(t.continues.trialId) : undefined
        const r = o.evaluate(t.config, t.budget, {trialId: t.id, configId: t.configId, seed: 1, checkpoint: state ? {budget: t.continues!.budget, state} : undefined}) as {loss: number; checkpoint?: unknown}
        checkpoints.set(t.id, r.checkpoint)
        pending.push({id: t.id, result: {status: 'ok', loss: r.loss}})
      }
      if (pending.length > lag) tellOne()
    }
    return {asker, log}
  }

  /** The next asks and tells of an optimiser (results by a fixed rule, some failed), to compare two copies' states. */
  function continuation(opt: BohbOptimizer, n: number): string {
    const out: unknown[] = []
    const pending: number[] = []
    for (let i = 0; i < n; i++) {
      const t = opt.ask()
      out.push(t, opt.askHint() ?? null)
      if (typeof t !== 'string') pending.push(t.id)
      // two results outstanding, so rungs wait and new brackets start while others run
      if (pending.length > 2 || (t === 'wait' && pending.length > 0)) {
        const id = pending.shift()!
        opt.tell(id, id % 11 === 5 ? {status: 'failed'} : {status: 'ok', loss: Math.sin(id) + id / 1000})
      }
    }
    return JSON.stringify(out)
  }

  type Hint = Record<string, unknown> & {pick: number}
  /** Replays `log` on a fresh copy, each hint passed through `hintFor` (null: a plain ask); every replayed trial must be the asker's. */
  function replicate(make: () => BohbOptimizer, log: ReturnType<typeof history>['log'], hintFor: (hint: Hint, i: number) => unknown): BohbOptimizer {
    const copy = make()
    let i = 0
    for (const e of log) {
      if ('tell' in e) {
        copy.tell(e.tell, e.result)
        continue
      }
      const hint = e.hint === null ? null : hintFor(e.hint as Hint, i++)
      const t = hint === null ? copy.ask() : copy.replayAsk(hint, JSON.parse(JSON.stringify(e.ask.config)))
      expect(t).toEqual(e.ask)
    }
    return copy
  }
  const rngState = (b: BohbOptimizer): unknown => (b as unknown as {rng: {snapshot(): unknown}}).rng.snapshot()

  for (const [name, o] of [['counting_ones', obj], ['simplex', simplexObjective()]] as const) {
    it(`replays model-based asks from their hints' generator states without drawing, bit-identically to the asker (${name})`, () => {
      const make = (): BohbOptimizer => new BohbOptimizer(o.space, {seed: 11, fidelity: o.fidelity})
      const {asker, log} = history(make, o, 130, 3, (t) => t.id % 9 === 4)
      const asks = log.filter((e) => 'ask' in e) as Array<{ask: Trial; hint: Hint | null}>
      const hints = asks.filter((e) => e.hint !== null)
      // model-based, random-fraction and promoted (continuing) asks, in several brackets
      expect(hints.length).toBeGreaterThan(20)
      expect(hints.every((e) => e.hint!.v === BOHB_HINT_FORMAT && e.ask.info?.model_based === true)).toBe(true)
      expect(asks.filter((e) => e.hint === null && e.ask.info?.model_based === false && e.ask.info?.rung === 0).length).toBeGreaterThan(5)
      if (o.fidelity) {
        expect(asks.filter((e) => e.ask.continues).length).toBeGreaterThan(5)
        expect(new Set(asks.map((e) => e.ask.info?.iteration)).size).toBeGreaterThanOrEqual(2)
      }
      const restored = replicate(make, log, (h) => h)
      expect(restored.replayCounts).toEqual({restored: hints.length, drawn: 0, rejected: 0})
      expect(rngState(restored)).toEqual(rngState(asker))
      // the same future, asks and hints, over further brackets (the KDEs it scores with are the asker's)
      const future = continuation(asker, 150)
      expect(future).toContain('"v":2')
      expect(continuation(restored, 150)).toBe(future)
    })

    it(`replays old-format hints (the pick alone) by drawing, and damaged or foreign hints by re-scoring, ending as the asker (${name})`, () => {
      const make = (): BohbOptimizer => new BohbOptimizer(o.space, {seed: 11, fidelity: o.fidelity})
      const {asker, log} = history(make, o, 130, 3, (t) => t.id % 9 === 4)
      const hints = log.filter((e) => 'ask' in e && e.hint !== null) as Array<{ask: Trial; hint: Hint}>
      const n = hints.length
      const rescored = replicate(make, log, () => null)
      const old = replicate(make, log, (h) => ({pick: h.pick}))
      const wrongPick = replicate(make, log, (h) => ({pick: (h.pick + 1) % 64}))
      const damaged = replicate(make, log, (h, i) => {
        const variants: unknown[] = [
          {pick: -1}, {pick: 'x'}, {pick: 1.5}, {pick: 64}, 'garbage', {}, [h.pick],
          {...h, v: 3}, // an unknown format: its state is not trusted
          {...h, v: '2'},
          {...h, h: (h.h as number) + 1}, // any field changed fails the check
          {...h, s0: (h.s0 as number) ^ 1},
          {...h, s3: (h.s3 as number) + 0.5},
          {...h, n: h.n === undefined ? 0.25 : (h.n as number) * 2},
          {...h, pick: (h.pick + 1) % 64},
          {...h, x0: 0.5}, // a coordinate the vector does not have
          {...h, x99: 0.5},
          {...h, extra: 1}, // an unknown field
          {...h, h: undefined, check: h.h},
          hints[(i + 1) % n].hint, // another ask's hint (the check binds the trial id and the state before)
          hints[(i + n - 1) % n].hint,
        ]
        return variants[i % variants.length]
      })
      expect(rescored.replayCounts).toEqual({restored: 0, drawn: 0, rejected: 0})
      expect(old.replayCounts).toEqual({restored: 0, drawn: n, rejected: 0})
      expect(wrongPick.replayCounts).toEqual({restored: 0, drawn: 0, rejected: n})
      expect(damaged.replayCounts).toEqual({restored: 0, drawn: 0, rejected: n})
      // a mix, as a study written by two kt versions has: each ask by the way its hint allows
      const mixed = replicate(make, log, (h, i) => (i % 3 === 0 ? {pick: h.pick} : i % 3 === 1 ? h : {...h, h: 0}))
      expect(mixed.replayCounts.restored + mixed.replayCounts.drawn + mixed.replayCounts.rejected).toBe(n)
      expect(Math.min(mixed.replayCounts.restored, mixed.replayCounts.drawn, mixed.replayCounts.rejected)).toBeGreaterThan(0)
      const copies = [rescored, old, wrongPick, damaged, mixed]
      for (const copy of copies) expect(rngState(copy)).toEqual(rngState(asker))
      const future = continuation(asker, 100)
      for (const copy of copies) expect(continuation(copy, 100)).toBe(future)
    })
  }

  it("does not take a hint's state from a study with other options or another seed", () => {
    const make = (options: {seed: number; bandwidthFactor?: number}) => (): BohbOptimizer => new BohbOptimizer(obj.space, {...options, fidelity: obj.fidelity})
    const {log} = history(make({seed: 11}), obj, 60, 1)
    const hints = log.filter((e) => 'ask' in e && e.hint !== null) as Array<{ask: Trial; hint: Hint}>
    expect(hints.length).toBeGreaterThan(5)
    // a replica with other options (which draws the same random asks) meets the first hint and must not adopt its state
    const other = make({seed: 11, bandwidthFactor: 2.5})()
    for (const e of log) {
      if ('tell' in e) {
        other.tell(e.tell, e.result)
        continue
      }
      if (e.hint !== null) {
        other.replayAsk(e.hint, e.ask.config)
        break
      }
      expect(other.ask()).toEqual(e.ask)
    }
    expect(other.replayCounts).toEqual({restored: 0, drawn: 0, rejected: 1})
  })
})
