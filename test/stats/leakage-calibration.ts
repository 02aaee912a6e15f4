/**
 * One-off measurement behind the leakage audit's numbers in the issue-10 report (not a test: run
 * `npx tsx test/stats/leakage-calibration.ts 10000`): per sample size, how many of DRAWS seeded
 * draws are flagged (dependence >= 0.95) for exact / near-exact / non-monotone copies of a LoCoMo-
 * shaped label (75% zeros), and for signals independent of it. 'copyOld' is the successive-
 * difference estimator alone (the audit before issue 10).
 */
import {functionalDependence, looCorrelationRatio} from '../../src/stats/dependence.js'
import {Rng} from '../../src/util/rng.js'
const T = 0.95
const draws = Number(process.argv[2] ?? 2000)
function label(rng: Rng, n: number): Float64Array {
  // LoCoMo-import shape: mostly 0, a few levels
  return Float64Array.from({length: n}, () => {
    const u = rng.next()
    return u < 0.75 ? 0 : u < 0.88 ? 1 / 3 : u < 0.96 ? 2 / 3 : 1
  })
}
const dep = (x: Float64Array, y: Float64Array) =>
  Math.max(functionalDependence(x, y) ?? -Infinity, looCorrelationRatio(x, y) ?? -Infinity)
for (const n of [20, 50, 100, 300]) {
  const rng = new Rng(7 + n)
  const c = {copy: 0, copyOld: 0, near: 0, sq: 0, indepU: 0, indepLabel: 0, sparse: 0, sparse2: 0, binary: 0}
  for (let d = 0; d < draws; d++) {
    const x = label(rng, n)
    if (dep(x, x) >= T) c.copy++
    if ((functionalDependence(x, x) ?? 0) >= T) c.copyOld++
    if (
      dep(
        x,
        x.map((v) => v + rng.normal(0, 0.02)),
      ) >= T
    )
      c.near++
    if (
      dep(
        x,
        x.map((v) => (v - 0.5) ** 2),
      ) >= T
    )
      c.sq++
    if (
      dep(
        x,
        Float64Array.from({length: n}, () => rng.next()),
      ) >= T
    )
      c.indepU++
    if (dep(x, label(rng, n)) >= T) c.indepLabel++
    const sp = new Float64Array(n)
    sp[Math.floor(rng.next() * n)] = 1
    if (dep(x, sp) >= T) c.sparse++
    const sp2 = new Float64Array(n)
    for (let k = 0; k < 3; k++) sp2[Math.floor(rng.next() * n)] = 1
    if (dep(x, sp2) >= T) c.sparse2++
    if (
      dep(
        x,
        Float64Array.from({length: n}, () => (rng.next() < 0.5 ? 1 : 0)),
      ) >= T
    )
      c.binary++
  }
  console.log(n, JSON.stringify(c))
}
