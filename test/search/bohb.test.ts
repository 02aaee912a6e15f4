import {describe, expect, it} from 'vitest'
import {BOHB_HINT_FORMAT, BohbOptimizer} from '../../src/search/bohb.js'
import {countingOnesObjective, simplexObjective} from '../../src/search/benchmarks/index.js'
import {RandomOptimizer} from '../../src/search/random.js'
import type {Objective, Optimizer, Trial, TrialResult} from '../../src/search/types.js'

/** Runs ask/tell sequentially; returns every trial with its loss. */
function drive(
  opt: Optimizer,
  obj: Objective,
  n: number,
  seed: number,
  fails: (t: Trial) => boolean = () => false,
): Array<Trial & {loss?: number}> {
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
    const r = obj.evaluate(t.config, t.budget, {
      trialId: t.id,
      configId: t.configId,
      seed,
      checkpoint: state ? {budget: t.continues!.budget, state} : undefined,
    }) as {loss: number; checkpoint?: unknown}
    checkpoints.set(t.id, r.checkpoint)
    opt.tell(t.id, {status: 'ok', loss: r.loss})
    out.push({...t, loss: r.loss})
  }
  return out
}

describe('BOHB', () => {
  const obj = countingOnesObjective()

  it('is deterministic: the same seed gives the same trials, another seed other trials', () => {
    const run = (seed: number): string =>
      JSON.stringify(drive(new BohbOptimizer(obj.space, {seed, fidelity: obj.fidelity}), obj, 200, seed))
    expect(run(3)).toBe(run(3))
    expect(run(3)).not.toBe(run(4))
  })

  it('runs the first bracket as synchronous successive halving: 81 at 9, the best 27 continue at 27, then 9 at 81', () => {
    const trials = drive(new BohbOptimizer(obj.space, {seed: 1, fidelity: obj.fidelity}), obj, 81 + 27 + 9 + 3 + 1, 1)
    expect(trials.slice(0, 81).every((t) => t.budget === 9)).toBe(true)
    const rung1 = trials.slice(81, 108)
    expect(rung1.every((t) => t.budget === 27)).toBe(true)
    const best27 = [...trials.slice(0, 81)]
      .sort((a, b) => a.loss! - b.loss! || a.id - b.id)
      .slice(0, 27)
      .map((t) => t.configId)
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
    const okAt9 = new Set(
      trials
        .slice(0, 81)
        .filter((t) => t.id % 10 === 0)
        .map((t) => t.configId),
    )
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
      return trials.filter(
        (t) => t.info?.model_based && Math.abs((Object.values(t.config) as number[])[3] - 0.05) < 1e-12,
      ).length
    }
    expect(atFloor({})).toBeGreaterThan(10)
    expect(atFloor({simplexSampling: 'reject'})).toBe(0)
    expect(atFloor({reference: true})).toBe(0)
  })

  it('beats random search on the simplex after 100 evaluations for this seed (model-based picks help)', () => {
    const simplex = simplexObjective()
    const best = (opt: Optimizer): number => Math.min(...drive(opt, simplex, 100, 0).map((t) => t.loss!))
    expect(best(new BohbOptimizer(simplex.space, {seed: 0}))).toBeLessThan(
      best(new RandomOptimizer(simplex.space, {seed: 0})),
    )
  })
  /**
   * An asker that keeps `lag` results outstanding (as parallel workers do), logging every ask with
   * its hint (as the store keeps it, JSON) and every tell in order: the history a replica replays
   * from a study store. Trials with `fails` are told as failed (never promoted, last in the KDE).
   */
  function history(
    make: () => BohbOptimizer,
    o: Objective,
    steps: number,
    lag: number,
    fails: (t: Trial) => boolean = () => false,
  ) {
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
        const r = o.evaluate(t.config, t.budget, {
          trialId: t.id,
          configId: t.configId,
          seed: 1,
          checkpoint: state ? {budget: t.continues!.budget, state} : undefined,
        }) as {loss: number; checkpoint?: unknown}
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
  function replicate(
    make: () => BohbOptimizer,
    log: ReturnType<typeof history>['log'],
    hintFor: (hint: Hint, i: number) => unknown,
  ): BohbOptimizer {
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

  for (const [name, o] of [
    ['counting_ones', obj],
    ['simplex', simplexObjective()],
  ] as const) {
    it(`replays model-based asks from their hints' generator states without drawing, bit-identically to the asker (${name})`, () => {
      const make = (): BohbOptimizer => new BohbOptimizer(o.space, {seed: 11, fidelity: o.fidelity})
      const {asker, log} = history(make, o, 130, 3, (t) => t.id % 9 === 4)
      const asks = log.filter((e) => 'ask' in e) as Array<{ask: Trial; hint: Hint | null}>
      const hints = asks.filter((e) => e.hint !== null)
      // model-based, random-fraction and promoted (continuing) asks, in several brackets
      expect(hints.length).toBeGreaterThan(20)
      expect(hints.every((e) => e.hint!.v === BOHB_HINT_FORMAT && e.ask.info?.model_based === true)).toBe(true)
      expect(
        asks.filter((e) => e.hint === null && e.ask.info?.model_based === false && e.ask.info?.rung === 0).length,
      ).toBeGreaterThan(5)
      if (o.fidelity) {
        expect(asks.filter((e) => e.ask.continues).length).toBeGreaterThan(5)
        expect(new Set(asks.map((e) => e.ask.info?.iteration)).size).toBeGreaterThanOrEqual(2)
      }
      const restored = replicate(make, log, (h) => h)
      expect(restored.replayCounts).toEqual({restored: hints.length, drawn: 0, rejected: 0})
      expect(rngState(restored)).toEqual(rngState(asker))
      // the same future, asks and hints, over further brackets (the KDEs it scores with are the asker's)
      const future = continuation(asker, 150)
      expect(future).toContain(`"v":${BOHB_HINT_FORMAT}`)
      expect(continuation(restored, 150)).toBe(future)
    })

    it(`replays old-format hints (the pick alone) by drawing, and damaged or foreign hints by re-scoring, ending as the asker (${name})`, () => {
      const make = (): BohbOptimizer => new BohbOptimizer(o.space, {seed: 11, fidelity: o.fidelity})
      const {asker, log} = history(make, o, 130, 3, (t) => t.id % 9 === 4)
      const hints = log.filter((e) => 'ask' in e && e.hint !== null) as Array<{ask: Trial; hint: Hint}>
      const n = hints.length
      const rescored = replicate(make, log, () => null)
      const old = replicate(make, log, (h) => ({pick: h.pick}))
      // format 2 (same fields, a check that did not bind the results): its state is not trusted, its pick is
      const unbound = replicate(make, log, (h) => ({...h, v: 2}))
      const wrongPick = replicate(make, log, (h) => ({pick: (h.pick + 1) % 64}))
      const damaged = replicate(make, log, (h, i) => {
        const variants: unknown[] = [
          {pick: -1},
          {pick: 'x'},
          {pick: 1.5},
          {pick: 64},
          'garbage',
          {},
          [h.pick],
          {...h, v: BOHB_HINT_FORMAT + 1}, // an unknown format: its state is not trusted
          {...h, v: String(BOHB_HINT_FORMAT)},
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
      expect(unbound.replayCounts).toEqual({restored: 0, drawn: n, rejected: 0})
      expect(wrongPick.replayCounts).toEqual({restored: 0, drawn: 0, rejected: n})
      expect(damaged.replayCounts).toEqual({restored: 0, drawn: 0, rejected: n})
      // a mix, as a study written by two kt versions has: each ask by the way its hint allows
      const mixed = replicate(make, log, (h, i) => (i % 3 === 0 ? {pick: h.pick} : i % 3 === 1 ? h : {...h, h: 0}))
      expect(mixed.replayCounts.restored + mixed.replayCounts.drawn + mixed.replayCounts.rejected).toBe(n)
      expect(
        Math.min(mixed.replayCounts.restored, mixed.replayCounts.drawn, mixed.replayCounts.rejected),
      ).toBeGreaterThan(0)
      const copies = [rescored, old, unbound, wrongPick, damaged, mixed]
      for (const copy of copies) expect(rngState(copy)).toEqual(rngState(asker))
      const future = continuation(asker, 100)
      for (const copy of copies) expect(continuation(copy, 100)).toBe(future)
    })
  }

  /** The log up to its first hinted ask (`first` of them), that ask, and a fresh copy told `tellFor` of each tell and asked every earlier ask. */
  const log60 = history(() => new BohbOptimizer(obj.space, {seed: 11, fidelity: obj.fidelity}), obj, 60, 1).log
  const hintedAsks = log60.flatMap((e, i) => ('ask' in e && e.hint !== null ? [i] : []))
  function upTo(
    copy: BohbOptimizer,
    k: number,
    tellFor: (tell: number, result: TrialResult) => TrialResult = (_, r) => r,
  ): {ask: Trial; hint: Hint} {
    for (let i = 0; i < k; i++) {
      const e = log60[i]
      if ('tell' in e) copy.tell(e.tell, tellFor(e.tell, e.result))
      else expect(copy.ask()).toEqual(e.ask) // re-scored: the counts are the ask under test's alone
    }
    return log60[k] as {ask: Trial; hint: Hint}
  }
  const seed11 = (options: {bandwidthFactor?: number} = {}): BohbOptimizer =>
    new BohbOptimizer(obj.space, {seed: 11, fidelity: obj.fidelity, ...options})
  const internals = (b: BohbOptimizer) =>
    b as unknown as {rng: {next(): number; snapshot(): unknown; restore(s: unknown): void}; nextTrialId: number}

  it("does not take a hint's state from a study with other options or another seed", () => {
    expect(hintedAsks.length).toBeGreaterThan(5)
    const k = hintedAsks[0]
    // other options, which draw the same random asks
    const other = seed11({bandwidthFactor: 2.5})
    const e = upTo(other, k)
    other.replayAsk(e.hint, e.ask.config)
    expect(other.replayCounts).toEqual({restored: 0, drawn: 0, rejected: 1})
    // another seed, its generator put where seed 11's starts: it makes every draw the asker made, and the same trial when it re-scores
    const seed12 = new BohbOptimizer(obj.space, {seed: 12, fidelity: obj.fidelity})
    internals(seed12).rng.restore(internals(seed11()).rng.snapshot())
    upTo(seed12, k)
    expect(seed12.replayAsk(e.hint, e.ask.config)).toEqual(e.ask)
    expect(seed12.replayCounts).toEqual({restored: 0, drawn: 0, rejected: 1})
    // the control: a copy like the asker takes it
    const same = seed11()
    upTo(same, k)
    expect(same.replayAsk(e.hint, e.ask.config)).toEqual(e.ask)
    expect(same.replayCounts).toEqual({restored: 1, drawn: 0, rejected: 0})
  })

  it("does not take a hint's state when the copy's generator before the ask, or the ask's trial id, differs", () => {
    // a generator one draw ahead: the random-fraction draw may then make the ask a random one; the first that stays model-based must re-score
    let checked = 0
    for (const k of hintedAsks) {
      const copy = seed11()
      const e = upTo(copy, k)
      internals(copy).rng.next()
      const t = copy.replayAsk(e.hint, e.ask.config)
      expect(copy.replayCounts.restored).toBe(0)
      if (typeof t !== 'string' && t.info?.model_based === true) {
        expect(copy.replayCounts).toEqual({restored: 0, drawn: 0, rejected: 1})
        checked++
      }
      if (checked >= 2) break
    }
    expect(checked).toBe(2)
    // the same generator and results, but the ask numbered one later
    const shifted = seed11()
    const e = upTo(shifted, hintedAsks[0])
    internals(shifted).nextTrialId++
    const t = shifted.replayAsk(e.hint, e.ask.config)
    expect(typeof t !== 'string' && t.id).toBe(e.ask.id + 1)
    expect(shifted.replayCounts).toEqual({restored: 0, drawn: 0, rejected: 1})
  })

  it("does not take a hint's state from a copy told other results (results draw nothing; the check binds them)", () => {
    // the first hinted ask after a few tells; the result altered is the last told before it
    const k = hintedAsks.find((i) => log60.slice(0, i).filter((e) => 'tell' in e).length >= 3)!
    const tells = log60.slice(0, k).filter((e) => 'tell' in e) as Array<{tell: number; result: TrialResult}>
    const last = tells[tells.length - 1]
    expect(last.result.status).toBe('ok')
    const loss = last.result.loss!
    const nextUp = (x: number): number => {
      const b = new Float64Array([x])
      const w = new BigInt64Array(b.buffer)
      w[0] += x >= 0 ? 1n : -1n
      return b[0]
    }
    const alterations: Array<[string, (id: number, r: TrialResult) => TrialResult]> = [
      ['a loss one ulp away', (id, r) => (id === last.tell ? {...r, loss: nextUp(loss)} : r)],
      ['a loss lowered by 100', (id, r) => (id === last.tell ? {...r, loss: loss - 100} : r)],
      ['a failure', (id, r) => (id === last.tell ? {status: 'failed'} : r)],
      ['objective values', (id, r) => (id === last.tell ? {...r, values: [loss]} : r)],
      ['the first result altered', (id, r) => (id === tells[0].tell ? {...r, loss: r.loss! - 100} : r)],
      // two sign flips: a hash whose words' high bits never reach its low ones loses them in pairs
      ['two losses negated', (id, r) => (id === tells[0].tell || id === last.tell ? {...r, loss: -r.loss!} : r)],
    ]
    for (const [what, alter] of alterations) {
      const copy = seed11()
      const e = upTo(copy, k, alter)
      const t = copy.replayAsk(e.hint, e.ask.config)
      expect(typeof t !== 'string' && t.id === e.ask.id && t.info?.model_based === true, what).toBe(true)
      expect(copy.replayCounts, what).toEqual({restored: 0, drawn: 0, rejected: 1})
    }
    // two results told in the other order (same asks before them): the digest is order-sensitive
    // results told two at a time, as two workers finishing in one section leave them
    const asker = seed11()
    const log: Array<{ask: Trial; hint: unknown} | {tell: number; result: TrialResult}> = []
    const pending: Trial[] = []
    while (log.length < 200) {
      const t = asker.ask()
      if (typeof t !== 'string') {
        log.push({ask: t, hint: JSON.parse(JSON.stringify(asker.askHint() ?? null))})
        pending.push(t)
      }
      if (pending.length === 2 || typeof t === 'string') {
        for (const p of pending.splice(0)) {
          const result: TrialResult = {
            status: 'ok',
            loss: (obj.evaluate(p.config, p.budget, {trialId: p.id, configId: p.configId, seed: 1}) as {loss: number})
              .loss,
          }
          asker.tell(p.id, result)
          log.push({tell: p.id, result})
        }
      }
    }
    const k2 = log.findIndex((e, j) => j > 10 && 'ask' in e && e.hint !== null)
    const i =
      k2 -
      1 -
      [...log.slice(0, k2)].reverse().findIndex((e, j, r) => 'tell' in e && j + 1 < r.length && 'tell' in r[j + 1])
    expect(k2 > 0 && 'tell' in log[i] && 'tell' in log[i - 1]).toBe(true)
    const swapped = seed11()
    const inOrder = seed11()
    for (let j = 0; j < k2; j++) {
      const e = log[j]
      const f = log[j === i ? i - 1 : j === i - 1 ? i : j]
      if ('tell' in f) swapped.tell(f.tell, f.result)
      else swapped.ask()
      if ('tell' in e) inOrder.tell(e.tell, e.result)
      else inOrder.ask()
    }
    const e = log[k2] as {ask: Trial; hint: Hint}
    swapped.replayAsk(e.hint, e.ask.config)
    inOrder.replayAsk(e.hint, e.ask.config)
    expect(inOrder.replayCounts.restored).toBe(1)
    expect(swapped.replayCounts.restored).toBe(0)
  })
})
