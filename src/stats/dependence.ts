/**
 * Functional dependence of y on x: the share of y's variance that a (possibly non-linear,
 * non-monotone) function of x explains, estimated without fitting a model. Sort by x; if y is a
 * smooth function of x, neighbours have nearly equal y. With the von Neumann (1941) successive-
 * difference estimate of the residual variance:
 *
 *   D = 1 - sum_i (y_(i+1) - y_(i))^2 / (2 * sum_i (y_i - mean y)^2)
 *
 * D is about 1 when y = f(x), about 0 when y is independent of x (it can dip slightly below 0),
 * and null when y is constant (the ratio is undefined).
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
  for (let k = 1; k < n; k++) successive += (y[order[k]] - y[order[k - 1]]) ** 2
  return 1 - successive / (2 * total)
}
