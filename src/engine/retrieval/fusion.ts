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
export function fuse(
  bm25: number,
  vector: number,
  graph: number,
  maxBm25: number,
  maxVector: number,
  maxGraph: number,
  w: FusionWeights,
): number {
  return (
    w.bm25 * (maxBm25 > 0 ? bm25 / maxBm25 : 0) +
    w.vector * (maxVector > 0 ? vector / maxVector : 0) +
    w.graph * (maxGraph > 0 ? graph / maxGraph : 0)
  )
}

/** Fusion weights are projected with the shared floored-simplex projection. */
export {projectFlooredSimplex} from '../../util/simplex.js'

/** A uniform draw from the floored simplex: floor + (1 - n floor) x Dirichlet(1, ..., 1). */
export function sampleFlooredSimplex(rng: Rng, n: number, floor: number): number[] {
  const d = rng.dirichlet(new Array<number>(n).fill(1))
  return Array.from(d, (v) => floor + (1 - n * floor) * v)
}
