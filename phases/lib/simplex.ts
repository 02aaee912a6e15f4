import {SIGNALS, type Weights} from '../../src/engine/importance/space.js'
import type {Rng} from '../../src/util/rng.js'

/**
 * Every point of the simplex lattice with the given step: all (k1, ..., k4) / m with
 * k_i >= 0 integers summing to m = 1/step. For step .05 that is C(23, 3) = 1,771 points: the full
 * 4-weight grid, not a sweep of one weight. `bounds` restricts each k_i to [lo_i, hi_i].
 */
export function simplexLattice(step: number, bounds?: ReadonlyArray<readonly [number, number]>): Weights[] {
  const m = Math.round(1 / step)
  const lo = (i: number) => Math.max(0, bounds ? bounds[i][0] : 0)
  const hi = (i: number) => Math.min(m, bounds ? bounds[i][1] : m)
  const out: Weights[] = []
  for (let a = lo(0); a <= hi(0); a++)
    for (let b = lo(1); b <= Math.min(hi(1), m - a); b++)
      for (let c = lo(2); c <= Math.min(hi(2), m - a - b); c++) {
        const d = m - a - b - c
        if (d < lo(3) || d > hi(3)) continue
        out.push({decay: a / m, surprise: b / m, relevance: c / m, habituation: d / m})
      }
  return out
}

/** The lattice of a finer step restricted to within `radius` of a centre point. */
export function latticeAround(center: Weights, step: number, radius: number): Weights[] {
  const m = Math.round(1 / step)
  const r = Math.round(radius / step)
  return simplexLattice(
    step,
    SIGNALS.map((s) => {
      const k = Math.round(center[s] * m)
      return [k - r, k + r] as const
    }),
  )
}

/** Uniform samples on the simplex (Dirichlet(1, 1, 1, 1)). */
export function randomSimplex(samples: number, rng: Rng): Weights[] {
  const v = new Float64Array(SIGNALS.length)
  return Array.from({length: samples}, () => {
    rng.dirichlet([1, 1, 1, 1], v)
    return {decay: v[0], surprise: v[1], relevance: v[2], habituation: v[3]}
  })
}

/**
 * Moves weight `s` to `value` and rescales the others to fill 1 - value in their current
 * proportions (equal shares if they are all zero): a line through the simplex.
 */
export function withWeight(w: Weights, s: (typeof SIGNALS)[number], value: number): Weights {
  const others = SIGNALS.filter((x) => x !== s)
  const rest = others.reduce((t, x) => t + w[x], 0)
  const out = {[s]: value} as Record<string, number>
  for (const x of others) out[x] = rest > 0 ? (w[x] / rest) * (1 - value) : (1 - value) / others.length
  return out as unknown as Weights
}
