/**
 * Euclidean projection onto the floored simplex {w_i >= floor, sum w_i = 1}: shift by the floor,
 * project onto the simplex of mass 1 - m floor by the sort-and-threshold rule (Held, Wolfe &
 * Crowder 1974; Duchi et al. 2008, "Efficient projections onto the l1-ball"), shift back.
 * The one copy that fusion weights, bandit arms and the optimisers' simplex sampling all use.
 */
export function projectFlooredSimplex(values: ArrayLike<number>, floor: number): number[] {
  const m = values.length
  const mass = 1 - m * floor
  if (mass < -1e-12) throw new RangeError(`floor ${floor} too large for ${m} weights`)
  const shifted = Array.from(values, (v) => v - floor)
  const sorted = [...shifted].sort((a, b) => b - a)
  let cumulative = 0
  let threshold = 0
  for (let j = 0; j < m; j++) {
    cumulative += sorted[j]
    const candidate = (cumulative - mass) / (j + 1)
    if (sorted[j] - candidate > 0) threshold = candidate
  }
  const out = shifted.map((v) => Math.max(v - threshold, 0) + floor)
  // Remove the rounding residue so the weights sum to 1 to the last bit the checks care about.
  const residue = 1 - out.reduce((a, b) => a + b, 0)
  let largest = 0
  for (let i = 1; i < m; i++) if (out[i] > out[largest]) largest = i
  out[largest] += residue
  return out
}
