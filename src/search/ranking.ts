/**
 * Orders observations best first, for BOHB's good/bad split and for successive-halving promotion.
 * Scalar losses sort ascending (failed trials count as +Infinity, as hpbandster records them).
 * When observations carry an objective vector (every entry minimised) the order is the
 * non-dominated sorting of NSGA-II (Deb et al. 2002): front by front, and within a front by
 * crowding distance, largest first, so the good set spreads along the Pareto front (the split
 * MO-TPE uses, Ozaki et al. 2020, with crowding in place of hypervolume contribution).
 */

export interface Ranked {
  readonly loss: number
  readonly values?: readonly number[]
}

/** Indices of `items` from best to worst; ties keep input order. */
export function rankOrder(items: readonly Ranked[]): number[] {
  const multi = items.some((o) => o.values !== undefined && o.values.length > 1)
  if (!multi) return scalarOrder(items)
  return paretoOrder(items)
}

function scalarOrder(items: readonly Ranked[]): number[] {
  const idx = items.map((_, i) => i)
  const key = items.map((o) => (Number.isNaN(o.loss) ? Infinity : o.loss))
  return idx.sort((a, b) => (key[a] < key[b] ? -1 : key[a] > key[b] ? 1 : a - b))
}

function finiteVector(o: Ranked): readonly number[] | undefined {
  if (!Number.isFinite(o.loss) || !o.values) return undefined
  return o.values.every(Number.isFinite) ? o.values : undefined
}

/** True if a is no worse than b everywhere and better somewhere (all minimised). */
function dominatesMin(a: readonly number[], b: readonly number[]): boolean {
  let strictly = false
  for (let j = 0; j < a.length; j++) {
    if (a[j] > b[j]) return false
    if (a[j] < b[j]) strictly = true
  }
  return strictly
}

/** Non-dominated fronts (Deb et al. 2002, fast non-dominated sort), each a list of indices. */
function nondominatedFronts(vectors: readonly (readonly number[])[]): number[][] {
  const n = vectors.length
  const dominatedBy = new Int32Array(n)
  const dominating: number[][] = vectors.map(() => [])
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      if (i !== j && dominatesMin(vectors[i], vectors[j])) dominating[i].push(j)
      else if (i !== j && dominatesMin(vectors[j], vectors[i])) dominatedBy[i]++
    }
  }
  const fronts: number[][] = []
  let current = [...Array(n).keys()].filter((i) => dominatedBy[i] === 0)
  while (current.length > 0) {
    fronts.push(current)
    const next: number[] = []
    for (const i of current) {
      for (const j of dominating[i]) if (--dominatedBy[j] === 0) next.push(j)
    }
    current = next.sort((a, b) => a - b)
  }
  return fronts
}

/** Crowding distance of each member of one front (Deb et al. 2002); boundary points get Infinity. */
function crowdingDistances(vectors: readonly (readonly number[])[], front: readonly number[]): Map<number, number> {
  const distance = new Map<number, number>(front.map((i) => [i, 0]))
  if (front.length === 0) return distance
  const m = vectors[front[0]].length
  for (let j = 0; j < m; j++) {
    const sorted = [...front].sort((a, b) => vectors[a][j] - vectors[b][j] || a - b)
    const low = vectors[sorted[0]][j]
    const high = vectors[sorted[sorted.length - 1]][j]
    distance.set(sorted[0], Infinity)
    distance.set(sorted[sorted.length - 1], Infinity)
    if (high === low) continue
    for (let k = 1; k < sorted.length - 1; k++) {
      const i = sorted[k]
      distance.set(i, distance.get(i)! + (vectors[sorted[k + 1]][j] - vectors[sorted[k - 1]][j]) / (high - low))
    }
  }
  return distance
}

function paretoOrder(items: readonly Ranked[]): number[] {
  const usable: number[] = []
  const failed: number[] = []
  items.forEach((o, i) => (finiteVector(o) ? usable : failed).push(i))
  const vectors = usable.map((i) => items[i].values!)
  const order: number[] = []
  for (const front of nondominatedFronts(vectors)) {
    const crowd = crowdingDistances(vectors, front)
    const sorted = [...front].sort((a, b) => {
      const ca = crowd.get(a)!
      const cb = crowd.get(b)!
      return ca > cb ? -1 : ca < cb ? 1 : a - b
    })
    for (const k of sorted) order.push(usable[k])
  }
  return order.concat(failed)
}
