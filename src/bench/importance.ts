import {performance} from 'node:perf_hooks'
import {scoreColumns, importanceOf} from '../engine/importance/score.js'
import {Rng} from '../util/rng.js'
import {median} from '../stats/summary.js'

/** The throughput target of the foundation issue: turns scored per second on one core. */
const TARGET_TURNS_PER_SECOND = 100e6
/** Untimed passes of each loop before timing (V8 optimises both first). */
const WARMUP_PASSES = 3
/** The signals' weights (any fixed weights time the same arithmetic). */
const WEIGHTS = {decay: 0.4, surprise: 0.3, relevance: 0.2, habituation: 0.1}

export interface ImportanceBench {
  turns: number
  repeats: number
  columnar_turns_per_s: number
  naive_turns_per_s: number
  speedup: number
  target_turns_per_s: number
  meets_target: boolean
  checksum_equal: boolean
}

/**
 * Times batch scoring over columnar Float64Arrays against a naive loop over one object per turn,
 * in the same process on the same data; the median of `repeats` timed passes each, after warm-up.
 */
export function benchImportance(turns: number, repeats: number, seed: number): ImportanceBench {
  const rng = new Rng(seed)
  const column = () => new Float64Array(turns)
  const cols = {n: turns, decay: column(), surprise: column(), relevance: column(), habituation: column()}
  for (let i = 0; i < turns; i++)
    for (const c of [cols.decay, cols.surprise, cols.relevance, cols.habituation]) c[i] = rng.next()
  const objects = Array.from({length: turns}, (_, i) => ({
    decay: cols.decay[i],
    surprise: cols.surprise[i],
    relevance: cols.relevance[i],
    habituation: cols.habituation[i],
    score: 0,
  }))
  const out = new Float64Array(turns)
  const naive = () => {
    for (const o of objects) o.score = importanceOf(o, WEIGHTS)
  }
  const columnar = () => scoreColumns(cols, WEIGHTS, out)
  for (let k = 0; k < WARMUP_PASSES; k++) {
    columnar()
    naive()
  }
  const rate = (f: () => unknown) => {
    const ms = Array.from({length: repeats}, () => {
      const t0 = performance.now()
      f()
      return performance.now() - t0
    })
    return turns / (median(ms) / 1000)
  }
  const columnarRate = rate(columnar)
  const naiveRate = rate(naive)
  return {
    turns,
    repeats,
    columnar_turns_per_s: columnarRate,
    naive_turns_per_s: naiveRate,
    speedup: columnarRate / naiveRate,
    target_turns_per_s: TARGET_TURNS_PER_SECOND,
    meets_target: columnarRate >= TARGET_TURNS_PER_SECOND,
    checksum_equal: objects.every((o, i) => o.score === out[i]),
  }
}

/** The line `kt bench importance` prints. */
export function importanceBenchLine(r: ImportanceBench): string {
  const m = (x: number) => `${(x / 1e6).toFixed(1)} M turns/s`
  return `columnar: ${m(r.columnar_turns_per_s)}  naive: ${m(r.naive_turns_per_s)}  ratio ${r.speedup.toFixed(1)}x  target ${m(r.target_turns_per_s)}: ${r.meets_target ? 'met' : 'MISSED'}  (same scores: ${r.checksum_equal})`
}
