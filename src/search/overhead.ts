/**
 * BOHB's own cost per suggestion, measured the way the target states it: 300 observed trials in a
 * 16-dimensional mixed space, then each further suggestion timed (ask, which draws the candidates
 * and scores them on the KDE pair, plus tell, which refits the KDEs).
 */
import type {ParamSpace} from '../space/index.js'
import {median, quantile} from '../stats/summary.js'
import {BohbOptimizer} from './bohb.js'
import {Encoding} from './encoding.js'

/** The target's setting: observed trials before timing, and dimensions. */
export const OVERHEAD_OBSERVED = 300
export const OVERHEAD_DIMENSIONS = 16

/** A 16-D mixed space: 10 floats (3 log-scale), 3 ints, 3 categoricals. */
export function overheadSpace(): ParamSpace {
  const params: ParamSpace['params'][number][] = []
  for (let i = 0; i < 10; i++) {
    const log = i < 3
    params.push({kind: 'float', name: `f${i}`, low: log ? 1e-3 : 0, high: 1, scale: log ? 'log' : 'linear', default: log ? 0.01 : 0.5, env: `KT_OVERHEAD_F${i}`, description: 'overhead benchmark float'})
  }
  for (let i = 0; i < 3; i++) params.push({kind: 'int', name: `i${i}`, low: 1, high: 64, scale: i === 0 ? 'log' : 'linear', default: 8, env: `KT_OVERHEAD_I${i}`, description: 'overhead benchmark int'})
  for (let i = 0; i < 3; i++) params.push({kind: 'categorical', name: `c${i}`, choices: ['a', 'b', 'c', 'd'], default: 'a', env: `KT_OVERHEAD_C${i}`, description: 'overhead benchmark categorical'})
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
  const step = (): {ask: number; tell: number; model: boolean} => {
    const t0 = performance.now()
    const trial = optimizer.ask()
    const t1 = performance.now()
    if (typeof trial === 'string') throw new Error(`overhead: optimiser answered ${trial}`)
    const l = loss(trial.config)
    const t2 = performance.now()
    optimizer.tell(trial.id, {status: 'ok', loss: l})
    return {ask: t1 - t0, tell: performance.now() - t2, model: trial.info?.model_based === true}
  }
  for (let i = 0; i < observed; i++) step()
  const asks: number[] = []
  const tells: number[] = []
  const totals: number[] = []
  const modelTotals: number[] = []
  const cpu0 = process.cpuUsage()
  const wall0 = performance.now()
  for (let i = 0; i < suggestions; i++) {
    const s = step()
    asks.push(s.ask)
    tells.push(s.tell)
    totals.push(s.ask + s.tell)
    if (s.model) modelTotals.push(s.ask + s.tell)
  }
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
