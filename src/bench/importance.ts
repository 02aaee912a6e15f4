import {performance} from 'node:perf_hooks'
import {scoreColumns, importanceOf} from '../engine/importance/score.js'
import {Rng} from '../util/rng.js'
import {median} from '../stats/summary.js'

/** The throughput target of the foundation issue: turns scored per second on one core. */
const TARGET_TURNS_PER_SECOND = 100e6

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
  const cols = {
    n: turns,
    decay: new Float64Array(turns),
    surprise: new Float64Array(turns),
    relevance: new Float64Array(turns),
    habituation: new Float64Array(turns),
  }
  for (let i = 0; i < turns; i++) {
    cols.decay[i] = rng.next()
    cols.surprise[i] = rng.next()
    cols.relevance[i] = rng.next()
    cols.habituation[i] = rng.next()
  }
  const objects = Array.from({length: turns}, (_, i) => ({
    decay: cols.decay[i],
    surprise: cols.surprise[i],
    relevance: cols.relevance[i],
    habituation: cols.habituation[i],
    score: 0,
  }))
  const w = {decay: 0.4, surprise: 0.3, relevance: 0.2, habituation: 0.1}
  const out = new Float64Array(turns)
  const naive = () => {
    for (const o of objects) o.score = importanceOf(o, w)
  }
  const columnar = () => scoreColumns(cols, w, out)
  for (let k = 0; k < 3; k++) {
    columnar()
    naive()
  }
  const time = (f: () => unknown) =>
    median(
      Float64Array.from({length: repeats}, () => {
        const t0 = performance.now()
        f()
        return performance.now() - t0
      }),
    )
  const tc = time(columnar),
    tn = time(naive)
  let equal = true
  for (let i = 0; i < turns; i++) if (objects[i].score !== out[i]) equal = false
  const columnarRate = turns / (tc / 1000),
    naiveRate = turns / (tn / 1000)
  return {
    turns,
    repeats,
    columnar_turns_per_s: columnarRate,
    naive_turns_per_s: naiveRate,
    speedup: columnarRate / naiveRate,
    target_turns_per_s: TARGET_TURNS_PER_SECOND,
    meets_target: columnarRate >= TARGET_TURNS_PER_SECOND,
    checksum_equal: equal,
  }
}
