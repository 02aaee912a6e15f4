/**
 * BOHB's trial sequences pinned bit for bit: 120 seeded runs over every kind of space (mixed
 * multi-fidelity, floored simplex in its three sampling modes, single-fidelity continuous, log
 * floats, ints and 4-level categoricals) and the options that change the model (reference mode,
 * a uniform prior, failures, objective vectors), each asked with results outstanding as parallel
 * workers leave them, and replayed from its hints by a copy. Each group's digest is the SHA-256 of
 * every trial (configuration values printed exactly by JSON), every hint's pick (the whole hint
 * when the digests were taken) and every replayed trial; the full hints, generator states
 * included, are pinned together with their format (HINTS_GOLDEN).
 *
 * The digests were taken from the BOHB of 2026-12-01 (before its ask was made cheaper): a change
 * meant to be a pure speed-up must leave them as they are. A change that is meant to alter the
 * sequences (a new default) must say so and take new digests (KT_PRINT_GOLDEN=1 prints them).
 */
import {createHash} from 'node:crypto'
import {describe, expect, it} from 'vitest'
import {BOHB_HINT_FORMAT, BohbOptimizer, type BohbOptions} from '../../src/search/bohb.js'
import {benchmarkObjective} from '../../src/search/benchmarks/index.js'
import {Encoding} from '../../src/search/encoding.js'
import {overheadSpace} from '../../src/bench/bohb-overhead.js'
import type {Objective, Trial, TrialResult} from '../../src/search/types.js'

/** The mixed 16-D space of `kt bench bohb-overhead` with a smooth loss, as an objective. */
function overheadObjective(): Objective {
  const space = overheadSpace()
  const encoding = new Encoding(space)
  const target = new Float64Array(encoding.size).map((_, j) => ((j * 7) % 10) / 10)
  return {
    id: 'overhead',
    space,
    evaluate(config) {
      const v = encoding.encode(config)
      let s = 0
      for (let j = 0; j < v.length; j++)
        s += encoding.vartypes[j] > 0 ? (v[j] === 0 ? 0 : 0.2) : (v[j] - target[j]) ** 2
      return {loss: s}
    },
  }
}

interface Run {
  readonly objective: Objective
  readonly options: Omit<BohbOptions, 'seed' | 'fidelity'>
  readonly asks: number
  /** Results kept outstanding (parallel workers). */
  readonly lag: number
  /** Trials told as failed. */
  readonly fails?: (t: Trial) => boolean
  /** Adds an objective vector to each result (multi-objective ranking). */
  readonly vector?: boolean
}

/**
 * Every ask (with its hint's pick, as the digests were taken before hints carried the generator's
 * state) and tell of one run, then the same history replayed by a copy from the full hints; and
 * the full hints, as JSON.
 */
function transcript(run: Run, seed: number): {text: string; hints: number; fullHints: string} {
  const {objective: o} = run
  const make = (): BohbOptimizer => new BohbOptimizer(o.space, {...run.options, seed, fidelity: o.fidelity})
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
  while (asked < run.asks) {
    const t = asker.ask()
    if (t === 'done') break
    if (t === 'wait') {
      tellOne()
      continue
    }
    asked++
    log.push({ask: t, hint: asker.askHint() ?? null})
    let result: TrialResult
    if (run.fails?.(t)) result = {status: 'failed'}
    else {
      const state = t.continues ? checkpoints.get(t.continues.trialId) : undefined
      const r = o.evaluate(t.config, t.budget, {
        trialId: t.id,
        configId: t.configId,
        seed,
        checkpoint: state ? {budget: t.continues!.budget, state} : undefined,
      }) as {loss: number; checkpoint?: unknown}
      checkpoints.set(t.id, r.checkpoint)
      result = run.vector
        ? {status: 'ok', loss: r.loss, values: [r.loss, Math.cos(t.id) * (t.budget % 7)]}
        : {status: 'ok', loss: r.loss}
    }
    pending.push({id: t.id, result})
    if (pending.length > run.lag) tellOne()
  }
  const copy = make()
  const replayed: unknown[] = []
  for (const e of log) {
    if ('tell' in e) copy.tell(e.tell, e.result)
    else
      replayed.push(
        e.hint === null
          ? copy.ask()
          : copy.replayAsk(JSON.parse(JSON.stringify(e.hint)), JSON.parse(JSON.stringify(e.ask.config))),
      )
  }
  // every model-based ask replayed from its hint's state, none drawn or re-scored
  expect(copy.replayCounts.rejected).toBe(0)
  expect(copy.replayCounts.drawn).toBe(0)
  const picks = log.map((e) =>
    'ask' in e ? {ask: e.ask, hint: e.hint === null ? null : {pick: (e.hint as {pick: number}).pick}} : e,
  )
  const text = JSON.stringify({log: picks, replayed})
  expect(JSON.stringify(replayed)).toBe(
    JSON.stringify(log.filter((e) => 'ask' in e).map((e) => (e as {ask: Trial}).ask)),
  )
  const fullHints = JSON.stringify(
    log.filter((e) => 'ask' in e && e.hint !== null).map((e) => (e as {hint: unknown}).hint),
  )
  return {text, hints: copy.replayCounts.restored, fullHints}
}

const SEEDS = Array.from({length: 10}, (_, i) => i)
const counting = benchmarkObjective('counting_ones')
const simplex = benchmarkObjective('simplex')

/** 12 groups of 10 seeds: 120 runs. */
const GROUPS: Record<string, Run> = {
  counting_ones: {objective: counting, options: {}, asks: 110, lag: 0},
  counting_ones_parallel: {objective: counting, options: {}, asks: 140, lag: 7},
  counting_ones_reference: {objective: counting, options: {reference: true}, asks: 110, lag: 3},
  counting_ones_prior: {objective: counting, options: {priorWeight: 1, topNPercent: 30}, asks: 110, lag: 1},
  counting_ones_failures_vectors: {
    objective: counting,
    options: {},
    asks: 110,
    lag: 2,
    fails: (t) => t.id % 9 === 4,
    vector: true,
  },
  simplex_project_near: {objective: simplex, options: {}, asks: 70, lag: 0},
  simplex_project: {objective: simplex, options: {simplexSampling: 'project'}, asks: 70, lag: 2},
  simplex_reject: {objective: simplex, options: {simplexSampling: 'reject'}, asks: 70, lag: 1},
  simplex_mf: {objective: benchmarkObjective('simplex_mf'), options: {}, asks: 110, lag: 3},
  branin: {objective: benchmarkObjective('branin'), options: {}, asks: 60, lag: 0},
  hartmann6: {objective: benchmarkObjective('hartmann6'), options: {numSamples: 24}, asks: 60, lag: 1},
  overhead_mixed: {objective: overheadObjective(), options: {}, asks: 70, lag: 2},
}

const GOLDEN: Record<string, string> = {
  counting_ones: '05c34f1806e66ac65060918f6e4e83940c746d78230c3c96267ff6b2c25833e0',
  counting_ones_parallel: '2bbda4fcbe8fea80582c20366bcb325494f31083b70b7d940b8b6dfb54ff672d',
  counting_ones_reference: 'f85096631e4cce634ea08b1c263a4168c16a5ac0285f644988ae3ee079882621',
  counting_ones_prior: '79c66d611ae0e261c8545244892adc8442307202a65222d66bac03981d665c6c',
  counting_ones_failures_vectors: '04b8a1c4bab5a6530ff0224a2691b12d1aa795862b9d907d529e0a57faca5926',
  simplex_project_near: 'bab82d45b60311f047f5875d16be6692855c514c10a229e6eb8813fa95ab6ddb',
  simplex_project: '4a05e7d2bfb486d643c2e3d46783180de328365f4d0a8d51af68566ccba6a4d6',
  simplex_reject: '2c95d6089fcb4bc9784b2e7b7f3564b78e4e3236eaecaa599f2f33cce0f015e2',
  simplex_mf: '75976661511b6ad6bb83f1fdb92b8efe8d896e2de839cd32f3b33404ea258929',
  branin: 'ee22bf0a33bf1f9b3c9cdb31e45ce522f8b6de9eca435465405300ab630adeaa',
  hartmann6: '3d92840dc77f18588fae78cb99375c68defcc59ff45b8c6aa0cf17cbf3c0e3f1',
  overhead_mixed: 'c9b354cf760c8e213d9c3b03048bab68a0a0ef8040cd29e6fe03dcbb78d23541',
}

/**
 * The SHA-256 of every group's full hints (generator states and checks included) and the hint
 * format they were taken with. A replica adopts a hint's state without drawing, so hints whose
 * draws or check changed must not keep their format: when the digest changes, bump BOHB_HINT_FORMAT
 * (src/search/bohb.ts) and take the new digest here with it.
 */
const HINTS_GOLDEN = {format: 3, digest: '8c4e60ccefc9e6ab7dd5af0e8b53cbf4a00b3dc49ea68beff3b1a2ff62a71094'}

describe('BOHB golden sequences (120 seeded runs, bit for bit)', () => {
  const digests: Record<string, string> = {}
  const hintDigests: Record<string, string> = {}
  for (const [name, run] of Object.entries(GROUPS)) {
    it(`${name}: seeds 0-9 ask, tell and replay exactly as pinned`, () => {
      const hash = createHash('sha256')
      const hintHash = createHash('sha256')
      let hints = 0
      for (const seed of SEEDS) {
        const t = transcript(run, seed)
        hash.update(t.text)
        hintHash.update(t.fullHints)
        hints += t.hints
      }
      hintDigests[name] = hintHash.digest('hex')
      // the model-based asks (scored, and replayed from their hints) are what the digest must cover
      expect(hints).toBeGreaterThan(5 * SEEDS.length)
      digests[name] = hash.digest('hex')
      if (process.env.KT_PRINT_GOLDEN) console.log(`  ${name}: '${digests[name]}',`)
      expect(digests[name]).toBe(GOLDEN[name])
    })
  }
  it('hints whose generator states changed come with a new BOHB_HINT_FORMAT', (ctx) => {
    // needs every group's hints (a run filtered to some groups cannot tell)
    if (Object.keys(hintDigests).length !== Object.keys(GROUPS).length) return ctx.skip()
    const digest = createHash('sha256')
      .update(
        Object.keys(GROUPS)
          .map((name) => hintDigests[name])
          .join(''),
      )
      .digest('hex')
    if (process.env.KT_PRINT_GOLDEN) console.log(`  hints (format ${BOHB_HINT_FORMAT}): '${digest}'`)
    // both pinned: changed hints must come with a bumped format AND a new pin taken with it
    const message = `hints (format ${BOHB_HINT_FORMAT}) differ from the pinned format ${HINTS_GOLDEN.format}: if the hints changed, bump BOHB_HINT_FORMAT, then re-pin the digest and format together`
    expect({digest, format: BOHB_HINT_FORMAT}, message).toEqual({
      digest: HINTS_GOLDEN.digest,
      format: HINTS_GOLDEN.format,
    })
  })
})
