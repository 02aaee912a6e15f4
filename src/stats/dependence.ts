import {averageRanks} from './correlation.js'

/**
 * Functional dependence of y on x: the share of y's variance that a (possibly non-linear,
 * non-monotone) function of x explains, estimated without fitting a model. Sort by x; if y is a
 * smooth function of x, neighbours have nearly equal y. With the von Neumann (1941) successive-
 * difference estimate of the residual variance:
 *
 *   D = 1 - sum_k (y_(k+1) - y_(k))^2 / (2 * sum_i (y_i - mean y)^2)
 *
 * Tied x values have no order of their own, so the sum uses its expectation over every order of
 * each tie group (otherwise an arbitrary tie-break such as row order could make y look smooth):
 * inside a group of m values, E[sum of the m-1 squared differences] = 2 SS_g (SS_g: the group's
 * sum of squared deviations); across the boundary of adjacent groups g, h,
 * E[(y_a - y_b)^2] = var_g + var_h + (mean_g - mean_h)^2 (population variances). Without ties
 * this is the plain formula.
 *
 * D is about 1 when y = f(x), about 0 when y is independent of x (it can dip slightly below 0),
 * and null when y is constant (the ratio is undefined) or n < 3.
 */
export function functionalDependence(x: ArrayLike<number>, y: ArrayLike<number>): number | null {
  const n = x.length
  if (n !== y.length) throw new RangeError(`functionalDependence: lengths differ (${n} vs ${y.length})`)
  if (n < 3) return null
  const order = Array.from({length: n}, (_, i) => i).sort((a, b) => x[a] - x[b] || a - b)
  let m = 0
  for (let i = 0; i < n; i++) m += y[i]
  m /= n
  let total = 0
  for (let i = 0; i < n; i++) total += (y[i] - m) ** 2
  if (total === 0) return null

  let successive = 0
  let previous: {mean: number; variance: number} | undefined
  for (let start = 0; start < n;) {
    let end = start + 1
    while (end < n && x[order[end]] === x[order[start]]) end++
    let gm = 0
    for (let k = start; k < end; k++) gm += y[order[k]]
    gm /= end - start
    let ss = 0
    for (let k = start; k < end; k++) ss += (y[order[k]] - gm) ** 2
    const group = {mean: gm, variance: ss / (end - start)}
    successive += 2 * ss
    if (previous) successive += previous.variance + group.variance + (previous.mean - group.mean) ** 2
    previous = group
    start = end
  }
  return 1 - successive / (2 * total)
}

/**
 * Smallest tie group the leave-one-out correlation ratio uses: with 2 rows a group's left-out mean
 * is one other row, so two rows that merely happen to share a value (a sparse signal's only two
 * non-zeros falling on a two-row label level) would look like a perfect function of the label.
 */
const LOO_MIN_GROUP = 3

/**
 * How much of y a function of a discrete x predicts, for data where x has ties (labels with few
 * levels): the leave-one-out correlation ratio. Each row of a tie group of at least `minGroup`
 * rows is predicted by the mean of the other rows of its group; the share of variance explained is
 *
 *   1 - sum_g (m_g / (m_g - 1))^2 W_g / ((N / (N - 1))^2 T)
 *
 * (W_g: group g's sum of squared deviations, m_g its size; N, T: rows in such groups and their
 * total sum of squares; both sides leave-one-out, so the closed form is exact). It is 1 for an
 * exact function of x, near 1 for a near-exact one, and about -1/(mean group size) or below for y
 * independent of x: leaving the row out keeps a row from predicting itself, which is what lets a
 * plain correlation ratio (eta^2) reach 1 by chance on small groups. Rows of smaller groups are left
 * out. Null when fewer than two groups qualify or y is constant over their rows.
 *
 * functionalDependence charges a function of a discrete label one squared jump per boundary
 * between label levels (its expectation over tie orders), so with few rows and levels an exact copy
 * of the label can score well below 1 (0.90 with 50 rows); this estimator has no such term.
 */
export function looCorrelationRatio(
  x: ArrayLike<number>,
  y: ArrayLike<number>,
  minGroup = LOO_MIN_GROUP,
): number | null {
  const n = x.length
  if (n !== y.length) throw new RangeError(`looCorrelationRatio: lengths differ (${n} vs ${y.length})`)
  if (!(minGroup >= 2)) throw new RangeError(`looCorrelationRatio: expected minGroup >= 2, got ${minGroup}`)
  const order = Array.from({length: n}, (_, i) => i).sort((a, b) => x[a] - x[b] || a - b)
  const groups: {start: number; end: number; mean: number}[] = []
  let rows = 0
  let sum = 0
  for (let start = 0; start < n;) {
    let end = start + 1
    while (end < n && x[order[end]] === x[order[start]]) end++
    if (end - start >= minGroup) {
      let gs = 0
      for (let k = start; k < end; k++) gs += y[order[k]]
      groups.push({start, end, mean: gs / (end - start)})
      rows += end - start
      sum += gs
    }
    start = end
  }
  if (groups.length < 2) return null
  const mean = sum / rows
  let total = 0
  let residual = 0
  for (const g of groups) {
    const m = g.end - g.start
    let within = 0
    for (let k = g.start; k < g.end; k++) {
      within += (y[order[k]] - g.mean) ** 2
      total += (y[order[k]] - mean) ** 2
    }
    residual += (m / (m - 1)) ** 2 * within
  }
  if (total === 0) return null
  return 1 - residual / ((rows / (rows - 1)) ** 2 * total)
}

/**
 * functionalDependence of y's ranks (average ranks for ties) on x: the same estimator on the
 * rank scale, so a few large gaps between sorted y values (a heavy-tailed label such as a Pareto
 * one: most rows near 0, a few near 1) no longer count as residual variance. A strictly monotone
 * function of x (an exact copy, a rescaling) has ranks 1..n in x order, successive differences of
 * 1 (sum n - 1) and a rank sum of squares of n (n^2 - 1) / 12, so it scores exactly
 * rankCopyDependence(n) = 1 - 6 / (n (n + 1)), whatever the distribution of x; the raw estimator
 * scores an exact copy of 20 Pareto labels about 0.89. Null when y is constant or n < 3.
 */
export function rankDependence(x: ArrayLike<number>, y: ArrayLike<number>): number | null {
  if (x.length !== y.length) throw new RangeError(`rankDependence: lengths differ (${x.length} vs ${y.length})`)
  return functionalDependence(x, averageRanks(y))
}

/** rankDependence of a strictly monotone function of x without ties on n rows: 1 - 6 / (n (n + 1)) (derivation at rankDependence). */
export function rankCopyDependence(n: number): number {
  if (!(Number.isInteger(n) && n >= 3)) throw new RangeError(`rankCopyDependence: expected an integer n >= 3, got ${n}`)
  return 1 - 6 / (n * (n + 1))
}
