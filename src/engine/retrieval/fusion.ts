import type {Rng} from '../../util/rng.js'

/**
 * Fusion of the three signals: each is divided by its maximum over the query's turns (so the best
 * turn of each signal scores 1 and a turn the signal does not reach scores 0), then mixed with
 * weights on the floored simplex (sum 1, each at least the floor, 0.05 in RETRIEVAL_SPACE).
 */
export interface FusionWeights {
  readonly bm25: number
  readonly vector: number
  readonly graph: number
}

/** w_b * b / max_b + w_v * v / max_v + w_g * g / max_g, a zero maximum contributing nothing. */
export function fuse(bm25: number, vector: number, graph: number, maxBm25: number, maxVector: number, maxGraph: number, w: FusionWeights): number {
  return w.bm25 * (maxBm25 > 0 ? bm25 / maxBm25 : 0) + w.vector * (maxVector > 0 ? vector / maxVector : 0) + w.graph * (maxGraph > 0 ? graph / maxGraph : 0)
}

/**
 * The point of the floored simplex {x : sum x = 1, x_i >= floor} nearest (Euclidean) to `x`:
 * shift by floor, project onto the scaled simplex of mass 1 - n * floor (Duchi et al. 2008,
 * "Efficient projections onto the l1-ball"), shift back.
 */
export function projectFlooredSimplex(x: readonly number[], floor: number): number[] {
  const n = x.length
  const mass = 1 - n * floor
  if (mass < -1e-12) throw new RangeError(`floor ${floor} too large for ${n} weights`)
  const y = x.map((v) => v - floor)
  const sorted = [...y].sort((a, b) => b - a)
  let cumulative = 0
  let theta = 0
  for (let i = 0; i < n; i++) {
    cumulative += sorted[i]
    const t = (cumulative - mass) / (i + 1)
    if (sorted[i] - t > 0) theta = t
  }
  return y.map((v) => Math.max(v - theta, 0) + floor)
}

/** A uniform draw from the floored simplex: floor + (1 - n floor) x Dirichlet(1, ..., 1). */
export function sampleFlooredSimplex(rng: Rng, n: number, floor: number): number[] {
  const d = rng.dirichlet(new Array<number>(n).fill(1))
  return Array.from(d, (v) => floor + (1 - n * floor) * v)
}
