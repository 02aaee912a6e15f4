/**
 * BOHB's own cost per suggestion, measured the way the target states it: 300 observed trials in a
 * 16-dimensional mixed space, then each further suggestion timed (ask, which draws the candidates
 * and scores them on the KDE pair, plus tell, which refits the KDEs). And its cost per call on the
 * workload of `kt bench workers` (measureWorkersWorkload).
 */
import type {ParamSpace} from '../space/index.js'
import {median, quantile} from '../stats/summary.js'
import {BohbOptimizer} from '../search/bohb.js'
import {countingOnesObjective} from '../search/benchmarks/counting-ones.js'
import {Encoding} from '../search/encoding.js'
import {optimizeInProcess, type Evaluation} from '../search/loop.js'
import type {Trial, TrialResult} from '../search/types.js'
import {WORKERS_WORKLOAD} from './workers-workload.js'

/** The target's setting: observed trials before timing, and dimensions. */
const OVERHEAD_OBSERVED = 300

/** A 16-D mixed space: 10 floats (3 log-scale), 3 ints, 3 categoricals. */
export function overheadSpace(): ParamSpace {
  const params: ParamSpace['params'][number][] = []
  for (let i = 0; i < 10; i++) {
    const log = i < 3
    params.push({
      kind: 'float',
      name: `f${i}`,
      low: log ? 1e-3 : 0,
      high: 1,
      scale: log ? 'log' : 'linear',
      default: log ? 0.01 : 0.5,
      env: `KT_OVERHEAD_F${i}`,
      description: 'overhead benchmark float',
    })
  }
  for (let i = 0; i < 3; i++)
    params.push({
      kind: 'int',
      name: `i${i}`,
      low: 1,
      high: 64,
      scale: i === 0 ? 'log' : 'linear',
      default: 8,
      env: `KT_OVERHEAD_I${i}`,
      description: 'overhead benchmark int',
    })
  for (let i = 0; i < 3; i++)
    params.push({
      kind: 'categorical',
      name: `c${i}`,
      choices: ['a', 'b', 'c', 'd'],
      default: 'a',
      env: `KT_OVERHEAD_C${i}`,
      description: 'overhead benchmark categorical',
    })
  return {id: 'bench-overhead', params}
}

export interface OverheadResult {
  readonly dimensions: number
  readonly observed: number
  readonly suggestions: number
  readonly ask_ms: {median: number; p99: number}
  readonly tell_ms: {median: number; p99: number}
  readonly suggest_ms: {median: number; p99: number; max: number}
  /** The same over model-based suggestions only (the others are uniform draws). */
  readonly model_suggest_ms: {median: number; p99: number}
  /**
   * Process CPU time per suggestion over the timed block (includes the loss computation, a few
   * microseconds): on a busy machine the wall-clock tail measures the scheduler, this does not.
   */
  readonly cpu_ms_per_suggestion: number
  readonly wall_ms_per_suggestion: number
}

export function measureOverhead(seed: number, suggestions: number, observed = OVERHEAD_OBSERVED): OverheadResult {
  const space = overheadSpace()
  const encoding = new Encoding(space)
  const optimizer = new BohbOptimizer(space, {seed})
  // A smooth loss over the unit cube (distance to a fixed point), so the KDEs have structure.
  const target = new Float64Array(encoding.size).map((_, j) => ((j * 7) % 10) / 10)
  const loss = (config: Record<string, unknown>): number => {
    const v = encoding.encode(config as never)
    let s = 0
    for (let j = 0; j < v.length; j++) s += encoding.vartypes[j] > 0 ? (v[j] === 0 ? 0 : 0.2) : (v[j] - target[j]) ** 2
    return s
  }
  const evaluate = (trial: Trial): Evaluation<null> => ({result: {status: 'ok', loss: loss(trial.config)}, value: null})
  optimizeInProcess(optimizer, evaluate, {maxTrials: observed})
  const cpu0 = process.cpuUsage()
  const wall0 = performance.now()
  const {steps} = optimizeInProcess(optimizer, evaluate, {maxTrials: suggestions})
  if (steps.length < suggestions) throw new Error(`overhead: the optimiser stopped after ${steps.length} suggestions`)
  const asks = steps.map((s) => s.askMs)
  const tells = steps.map((s) => s.tellMs)
  const totals = steps.map((s) => s.askMs + s.tellMs)
  const modelTotals = steps.filter((s) => s.trial.info?.model_based === true).map((s) => s.askMs + s.tellMs)
  const cpu = process.cpuUsage(cpu0)
  const wall = performance.now() - wall0
  const mp = (xs: number[]): {median: number; p99: number} => ({median: median(xs), p99: quantile(xs, 0.99)})
  return {
    dimensions: encoding.size,
    observed,
    suggestions,
    ask_ms: mp(asks),
    tell_ms: mp(tells),
    suggest_ms: {...mp(totals), max: Math.max(...totals)},
    model_suggest_ms: mp(modelTotals),
    cpu_ms_per_suggestion: (cpu.user + cpu.system) / 1000 / suggestions,
    wall_ms_per_suggestion: wall / suggestions,
  }
}

/**
 * The optimiser of `kt bench workers` (WORKERS_WORKLOAD). Every process asks its own trials inside
 * the study's lock and replays every other process's ask from its hint (replayAsk), so these
 * per-call costs are what the lock holds and what each process spends keeping up.
 */
export {WORKERS_WORKLOAD}

interface WorkloadRow {
  readonly processes: number
  readonly trials: number
  /** Asks that drew a configuration from the model (the others are uniform draws or promotions). */
  readonly model_based_asks: number
  /** Mean time of one call, ms: the asker's ask and tell, and a copy's replayed ask (with the hint) and tell. */
  readonly ask_ms: number
  readonly tell_ms: number
  readonly replay_ask_ms: number
  readonly replay_tell_ms: number
}

/**
 * One pass of the workload at each process count: an asker keeping processes - 1 results
 * outstanding (as the other processes do), then a copy replaying its history from the hints,
 * each call timed. Returns the rows and the transcript (for checking that passes agree).
 */
function runWorkersWorkload(): {rows: WorkloadRow[]; transcript: string} {
  const objective = countingOnesObjective()
  const rows: WorkloadRow[] = []
  let transcript = ''
  for (const processes of WORKERS_WORKLOAD.processes) {
    const trials = WORKERS_WORKLOAD.trialsPerProcess * processes
    const make = (): BohbOptimizer =>
      new BohbOptimizer(objective.space, {seed: WORKERS_WORKLOAD.seed, fidelity: objective.fidelity})
    const asker = make()
    const log: Array<{trial: Trial; hint: unknown} | {tell: number; result: TrialResult}> = []
    const checkpoints = new Map<number, unknown>()
    const pending: Array<{id: number; result: TrialResult}> = []
    let askMs = 0
    let tellMs = 0
    let tells = 0
    let modelBased = 0
    const tellOne = (): void => {
      const p = pending.shift()!
      const t0 = performance.now()
      asker.tell(p.id, p.result)
      tellMs += performance.now() - t0
      tells++
      log.push({tell: p.id, result: p.result})
    }
    let asked = 0
    while (asked < trials) {
      const t0 = performance.now()
      const trial = asker.ask()
      const hint = typeof trial === 'string' ? undefined : asker.askHint()
      askMs += performance.now() - t0
      if (trial === 'done') throw new Error('workers workload: BOHB ran out of brackets')
      if (trial === 'wait') {
        tellOne()
        continue
      }
      asked++
      if (hint) modelBased++
      // the hint as the store keeps it (JSON)
      log.push({trial, hint: hint === undefined ? null : JSON.parse(JSON.stringify(hint))})
      const state = trial.continues ? checkpoints.get(trial.continues.trialId) : undefined
      const r = objective.evaluate(trial.config, trial.budget, {
        trialId: trial.id,
        configId: trial.configId,
        seed: WORKERS_WORKLOAD.seed,
        checkpoint: state ? {budget: trial.continues!.budget, state} : undefined,
      }) as {loss: number; checkpoint?: unknown}
      checkpoints.set(trial.id, r.checkpoint)
      pending.push({id: trial.id, result: {status: 'ok', loss: r.loss}})
      if (pending.length > processes - 1) tellOne()
    }
    while (pending.length > 0) tellOne()
    const copy = make()
    let replayAskMs = 0
    let replayTellMs = 0
    for (const entry of log) {
      if ('tell' in entry) {
        const t0 = performance.now()
        copy.tell(entry.tell, entry.result)
        replayTellMs += performance.now() - t0
        continue
      }
      const config = {...entry.trial.config}
      const t0 = performance.now()
      const again = entry.hint === null ? copy.ask() : copy.replayAsk(entry.hint, config)
      replayAskMs += performance.now() - t0
      if (typeof again === 'string' || again.id !== entry.trial.id)
        throw new Error(
          `workers workload: the copy replayed trial ${entry.trial.id} as ${typeof again === 'string' ? again : again.id}`,
        )
    }
    // the asker's own hints: every one must be taken, or this would time re-scoring
    if (copy.replayCounts.rejected > 0)
      throw new Error(`workers workload: the copy rejected ${copy.replayCounts.rejected} of the asker's hints`)
    transcript += JSON.stringify(log)
    rows.push({
      processes,
      trials,
      model_based_asks: modelBased,
      ask_ms: askMs / trials,
      tell_ms: tellMs / tells,
      replay_ask_ms: replayAskMs / trials,
      replay_tell_ms: replayTellMs / tells,
    })
  }
  return {rows, transcript}
}

export interface WorkloadResult {
  /** The first pass in this process: BOHB's code not yet compiled, as in a freshly started worker. */
  readonly cold: WorkloadRow[]
  /** Medians of the further passes (compiled code, as in a long-running worker). */
  readonly warm: WorkloadRow[]
  readonly passes: number
  /** Process CPU per trial over the warm passes (ask, tell and replay of every trial, plus the objective's few microseconds), ms. */
  readonly warm_cpu_ms_per_trial: number
}

/** The workload once cold, then `passes` times warm; every pass must give the same trials. */
export function measureWorkersWorkload(passes: number): WorkloadResult {
  const first = runWorkersWorkload()
  const runs: WorkloadRow[][] = []
  const cpu0 = process.cpuUsage()
  for (let i = 0; i < passes; i++) {
    const pass = runWorkersWorkload()
    if (pass.transcript !== first.transcript) throw new Error('workers workload: two passes gave different trials')
    runs.push(pass.rows)
  }
  const cpu = process.cpuUsage(cpu0)
  const trials = passes * first.rows.reduce((s, r) => s + r.trials, 0)
  const warm = first.rows.map((row, i) => {
    const m = (f: (r: WorkloadRow) => number): number => median(runs.map((pass) => f(pass[i])))
    return {
      ...row,
      ask_ms: m((r) => r.ask_ms),
      tell_ms: m((r) => r.tell_ms),
      replay_ask_ms: m((r) => r.replay_ask_ms),
      replay_tell_ms: m((r) => r.replay_tell_ms),
    }
  })
  return {cold: first.rows, warm, passes, warm_cpu_ms_per_trial: (cpu.user + cpu.system) / 1000 / Math.max(1, trials)}
}
