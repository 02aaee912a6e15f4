import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {braninObjective} from '../../src/search/benchmarks/index.js'
import type {Objective} from '../../src/search/types.js'
import {runSearch} from '../../src/study/search.js'

const dir = mkdtempSync(join(tmpdir(), 'kt-workers-'))
const fixture = fileURLToPath(new URL('./fixtures/slow-objective.ts', import.meta.url))

describe('parallel workers', () => {
  it('evaluates every trial exactly once on worker threads', async () => {
    const evalLog = join(dir, 'evals.log')
    const out = await runSearch({
      storage: ':memory:',
      objective: {name: 'counting_ones', delayMs: 5, evalLog},
      optimizer: 'bohb',
      seed: 2,
      maxTrials: 120,
      workers: 2,
    })
    const ids = readFileSync(evalLog, 'utf8')
      .trim()
      .split('\n')
      .map((l) => Number(l.split(' ')[0]))
    expect(ids).toHaveLength(120)
    expect(new Set(ids).size).toBe(120)
    expect(out.trials.every((t) => t.status === 'ok')).toBe(true)
    const workers = new Set(out.trials.map((t) => t.worker))
    expect(workers.size).toBe(2)
    expect(workers.has(null)).toBe(false)
    // Two workers let the first bracket's rung-0 results arrive out of order, and BOHB still
    // promotes only configurations it has results for.
    const promoted = out.trials.filter((t) => t.budget === 27 && t.continues !== null)
    for (const t of promoted) expect(out.trials[t.continues!].status).toBe('ok')
  })

  it('terminates a worker that overruns the timeout, fails that trial and a throwing one, and goes on', async () => {
    const out = await runSearch({
      storage: ':memory:',
      objective: {name: 'module', module: fixture, options: {spinTrial: 3, throwTrial: 5}},
      optimizer: 'random',
      seed: 1,
      maxTrials: 10,
      workers: 2,
      timeoutMs: 4000, // long enough for a worker thread to load the module on a loaded machine
    })
    expect(out.trials).toHaveLength(10)
    expect(out.trials[3]).toMatchObject({status: 'failed', error: 'timed out after 4000 ms'})
    expect(out.trials[5].status).toBe('failed')
    expect(out.trials[5].error).toMatch(/objective exploded/)
    expect(out.trials.filter((t) => t.status === 'ok')).toHaveLength(8)
  })
})

describe('failures in this thread', () => {
  it('marks a throwing or timed-out trial failed, never promotes it, and the study goes on', async () => {
    const base = braninObjective()
    const flaky: Objective = {
      ...base,
      fidelity: {min: 1, max: 9, eta: 3},
      async evaluate(config, budget, ctx) {
        if (budget === 1 && ctx.trialId % 3 === 0) throw new Error(`bad trial ${ctx.trialId}`)
        if (budget === 1 && ctx.trialId % 3 === 1) await new Promise((r) => setTimeout(r, ctx.trialId === 1 ? 200 : 0))
        return base.evaluate(config, budget, ctx)
      },
    }
    const out = await runSearch({
      storage: ':memory:',
      objective: {name: 'branin'},
      objectiveInstance: flaky,
      optimizer: 'bohb',
      seed: 3,
      maxTrials: 14,
      timeoutMs: 100,
    })
    const rung0 = out.trials.slice(0, 9)
    expect(rung0.every((t) => t.budget === 1)).toBe(true)
    expect(rung0.filter((t) => t.status === 'failed').map((t) => t.id)).toEqual([0, 1, 3, 6])
    expect(out.trials[0].error).toBe('bad trial 0')
    expect(out.trials[1].error).toBe('timed out after 100 ms')
    const rung1 = out.trials.slice(9, 12)
    expect(rung1.every((t) => t.budget === 3)).toBe(true)
    const failedConfigs = new Set(rung0.filter((t) => t.status === 'failed').map((t) => t.configId))
    for (const t of rung1) expect(failedConfigs.has(t.configId)).toBe(false)
    expect(out.trials).toHaveLength(14)
  })
})

describe('an objective that cannot be built in a worker', () => {
  it('stops the study with a one-line error instead of failing every trial', async () => {
    await expect(
      runSearch({
        storage: ':memory:',
        objective: {name: 'module', module: join(dir, 'no-such-module.ts')},
        objectiveInstance: braninObjective(),
        optimizer: 'random',
        maxTrials: 5,
        workers: 2,
      }),
    ).rejects.toThrow(
      /objective \(in a worker thread\): expected an objective that builds, got .*no-such-module\.ts: expected an importable ES module/,
    )
  })
})

describe('resume with parallel workers', () => {
  it('replays the out-of-order history of a two-worker study and finishes it without re-evaluating a finished trial', async () => {
    const storage = join(dir, 'parallel-resume.sqlite')
    const evalLog = join(dir, 'parallel-evals.log')
    const controller = new AbortController()
    let finished = 0
    const first = await runSearch({
      storage,
      study: 'p',
      objective: {name: 'counting_ones', delayMs: 4, evalLog},
      optimizer: 'bohb',
      seed: 6,
      maxTrials: 100,
      workers: 2,
      signal: controller.signal,
      onTrial: () => {
        if (++finished === 60) controller.abort()
      },
    })
    const done = new Set(first.trials.filter((t) => t.status !== 'running').map((t) => t.id))
    expect(done.size).toBe(60)
    const resumed = await runSearch({storage, study: 'p', resume: true, workers: 2})
    expect(resumed.summary.replayed).toBe(60)
    expect(resumed.trials.map((t) => t.id)).toEqual([...Array(100).keys()])
    expect(resumed.trials.every((t) => t.status === 'ok')).toBe(true)
    const ids = readFileSync(evalLog, 'utf8')
      .trim()
      .split('\n')
      .map((l) => Number(l.split(' ')[0]))
    for (const id of done) expect(ids.filter((x) => x === id)).toHaveLength(1)
  })
})

describe('worker threads are bounded and started as trials arrive', () => {
  it('starts no thread before a trial, one per trial in flight, and reuses idle ones', async () => {
    const {WorkerPool} = await import('../../src/study/pool.js')
    const first = (
      await runSearch({
        storage: ':memory:',
        objective: {name: 'counting_ones'},
        optimizer: 'random',
        seed: 1,
        maxTrials: 1,
      })
    ).trials[0]
    const pool = new WorkerPool({name: 'counting_ones', delayMs: 20}, 8, undefined, () => new Date().toISOString())
    try {
      expect(pool.started).toBe(0)
      const job = (trialId: number) => ({
        trialId,
        config: first.config,
        budget: first.budget,
        ctx: {trialId, configId: first.configId, seed: 1},
      })
      const outcomes = await Promise.all([pool.evaluate(job(0)), pool.evaluate(job(1))])
      expect(outcomes.map((o) => o.status)).toEqual(['ok', 'ok'])
      expect(pool.started).toBe(2)
      await pool.evaluate(job(2))
      expect(pool.started).toBe(2)
    } finally {
      await pool.close()
    }
  })

  it('refuses more workers than one process runs, in one line naming --workers; a complete study with many workers starts none', async () => {
    const {MAX_WORKERS_PER_PROCESS} = await import('../../src/study/pool.js')
    const {kt} = await import('../cli/helpers.js')
    const file = join(dir, 'bounded.sqlite')
    let r = kt(['worker', '--storage', file, '--study', 'x', '--workers', String(MAX_WORKERS_PER_PROCESS + 1)])
    expect(r.status).toBe(2)
    expect(r.stderr).toBe(
      `kt: --workers: expected at most ${MAX_WORKERS_PER_PROCESS} trials in flight per process (each is a worker thread or engine process with its own copy of the objective; for more, start more kt worker processes), got ${MAX_WORKERS_PER_PROCESS + 1}\n`,
    )
    r = kt([
      'search',
      '--objective',
      'counting_ones',
      '--optimizer',
      'random',
      '--trials',
      '3',
      '--study',
      'x',
      '--storage',
      file,
      '--workers',
      '1000',
    ])
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/^kt: --workers: expected at most \d+ trials in flight per process .*, got 1000\n$/)
    r = kt([
      'search',
      '--objective',
      'counting_ones',
      '--optimizer',
      'random',
      '--trials',
      '3',
      '--study',
      'x',
      '--storage',
      file,
    ])
    expect(r.status, r.stderr).toBe(0)
    r = kt(['worker', '--storage', file, '--study', 'x', '--workers', String(MAX_WORKERS_PER_PROCESS), '--json'])
    expect(r.status, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({state: 'finished', run: {evaluated: 0}})
  })
})
