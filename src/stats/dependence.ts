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
  for (let start = 0; start < n; ) {
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
