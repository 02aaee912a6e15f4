/**
 * Pareto dominance, the non-dominated front, and the 2-D hypervolume indicator
 * (Zitzler & Thiele 1998, "Multiobjective optimization using evolutionary algorithms - a
 * comparative case study": the "size of the space covered").
 */

/** Whether larger ('max') or smaller ('min') values of an objective are better. */
export type Sense = 'max' | 'min'

export interface Objective<T> {
  value: (item: T) => number
  sense: Sense
}

/** Throws unless the vector has one value per objective and no NaN. */
function checkPoint(point: ArrayLike<number>, senses: ArrayLike<Sense>, where: string): void {
  if (point.length !== senses.length) {
    throw new RangeError(`${where}: expected ${senses.length} objective values, got ${point.length}`)
  }
  for (let j = 0; j < point.length; j++) {
    if (Number.isNaN(point[j])) throw new RangeError(`${where}: objective ${j} is NaN`)
  }
}

/**
 * True if a Pareto-dominates b: a is at least as good in every objective and strictly better in
 * at least one. Equal points do not dominate each other.
 */
export function dominates(a: ArrayLike<number>, b: ArrayLike<number>, senses: ArrayLike<Sense>): boolean {
  checkPoint(a, senses, 'dominates')
  checkPoint(b, senses, 'dominates')
  let strictlyBetter = false
  for (let j = 0; j < senses.length; j++) {
    const better = senses[j] === 'max' ? a[j] - b[j] : b[j] - a[j]
    if (better < 0) return false
    if (better > 0) strictlyBetter = true
  }
  return strictlyBetter
}

/**
 * Indices (ascending, so in input order) of the items no other item dominates. Equal points are all
 * kept. O(n^2 m) in general, O(n log n) for two objectives. Throws RangeError on a NaN objective.
 */
export function paretoFront<T>(items: ReadonlyArray<T>, objectives: ReadonlyArray<Objective<T>>): number[] {
  const senses = objectives.map((o) => o.sense)
  const points = items.map((item, i) => {
    const point = objectives.map((o) => o.value(item))
    checkPoint(point, senses, `paretoFront: item ${i}`)
    return point
  })
  if (objectives.length === 2) return paretoFront2d(points, senses)
  const front: number[] = []
  for (let i = 0; i < points.length; i++) {
    let dominated = false
    for (let j = 0; j < points.length && !dominated; j++) {
      if (j !== i && dominates(points[j], points[i], senses)) dominated = true
    }
    if (!dominated) front.push(i)
  }
  return front
}

/**
 * The two-objective case in O(n log n) (Kung, Luccio & Preparata 1975): sorted by the first
 * objective (best first), a point is on the front when its second objective beats every point
 * with a strictly better first one and is the best among those with the same first one. Same
 * result as the pairwise check, equal points all kept.
 */
function paretoFront2d(points: ReadonlyArray<readonly number[]>, senses: ReadonlyArray<Sense>): number[] {
  // as minimisation
  const a = points.map((p) => (senses[0] === 'max' ? -p[0] : p[0]))
  const b = points.map((p) => (senses[1] === 'max' ? -p[1] : p[1]))
  const order = points.map((_, i) => i).sort((i, j) => a[i] - a[j] || b[i] - b[j])
  const front: number[] = []
  let bestBefore = Infinity
  let seen = false
  for (let k = 0; k < order.length;) {
    let end = k
    while (end < order.length && a[order[end]] === a[order[k]]) end++
    const groupMin = b[order[k]]
    for (let m = k; m < end; m++) {
      const i = order[m]
      if (b[i] === groupMin && (!seen || b[i] < bestBefore)) front.push(i)
    }
    bestBefore = Math.min(bestBefore, groupMin)
    seen = true
    k = end
  }
  return front.sort((x, y) => x - y)
}

/**
 * Hypervolume of a 2-D point set: the area of the region dominated by the points and bounded by
 * the reference point, i.e. the union of the rectangles spanned by each point and the reference.
 * Points that do not strictly beat the reference in both objectives add nothing. Adding a point
 * never decreases it. O(n log n) sweep.
 */
export function hypervolume2d(
  points: ReadonlyArray<readonly [number, number]>,
  reference: readonly [number, number],
  senses: readonly [Sense, Sense],
): number {
  checkPoint(reference, senses, 'hypervolume2d: reference')
  // Map both objectives to "larger is better", measured as the gain over the reference.
  const sign = senses.map((s) => (s === 'max' ? 1 : -1))
  const gains: Array<[number, number]> = []
  points.forEach((p, i) => {
    checkPoint(p, senses, `hypervolume2d: point ${i}`)
    const gx = sign[0] * (p[0] - reference[0])
    const gy = sign[1] * (p[1] - reference[1])
    if (gx > 0 && gy > 0) gains.push([gx, gy])
  })
  // Sweep from the largest x gain down: each point adds the strip above the best y seen so far.
  gains.sort((a, b) => b[0] - a[0] || b[1] - a[1])
  let area = 0
  let bestY = 0
  for (const [gx, gy] of gains) {
    if (gy > bestY) {
      area += gx * (gy - bestY)
      bestY = gy
    }
  }
  return area
}
