/**
 * Functional ANOVA over a random forest (Hutter, Hoos & Leyton-Brown 2014, "An Efficient Approach
 * for Assessing Hyperparameter Importance"): each tree is a piecewise-constant function on the
 * unit cube, so its mean, total variance and the variance of each one-parameter marginal
 * a_j(x_j) = ∫ f(x) dx_{-j} are exact sums over leaves. A parameter's importance is the share of
 * the tree's variance its marginal explains, averaged over the trees — what Optuna's default
 * FanovaImportanceEvaluator reports (before it rescales the shares to sum to 1).
 */
import type {RegressionTree} from './forest.js'

export interface FanovaResult {
  /** Per feature: the mean over trees of V_j / V, the share of variance its main effect explains. */
  readonly main_effect_share: number[]
  /** Per feature: the standard deviation of that share over the trees. */
  readonly main_effect_sd: number[]
  /** The shares rescaled to sum to 1 (Optuna's importances). */
  readonly importance: number[]
  /** Trees with zero variance (constant predictions) are skipped. */
  readonly trees_used: number
}

interface Leaf {
  readonly value: number
  readonly lo: Float64Array
  readonly hi: Float64Array
  readonly volume: number
}

/** The leaves of a tree with their boxes in the unit cube. */
function treeLeaves(t: RegressionTree, d: number): Leaf[] {
  const leaves: Leaf[] = []
  const stack: Array<{node: number; lo: Float64Array; hi: Float64Array}> = [
    {node: 0, lo: new Float64Array(d), hi: new Float64Array(d).fill(1)},
  ]
  while (stack.length > 0) {
    const {node, lo, hi} = stack.pop()!
    const f = t.feature[node]
    if (f < 0) {
      let volume = 1
      for (let k = 0; k < d; k++) volume *= Math.max(0, hi[k] - lo[k])
      if (volume > 0) leaves.push({value: t.value[node], lo, hi, volume})
      continue
    }
    const cut = Math.min(hi[f], Math.max(lo[f], t.threshold[node]))
    const lHi = hi.slice()
    lHi[f] = cut
    const rLo = lo.slice()
    rLo[f] = cut
    stack.push({node: t.left[node], lo, hi: lHi}, {node: t.right[node], lo: rLo, hi})
  }
  return leaves
}

/**
 * One tree's decomposition: its variance V over the unit cube and V_j for every feature. The
 * marginal a_j is constant between consecutive split points of feature j; each leaf adds
 * value × (its volume / its width along j) over its own j-range, accumulated with a difference
 * array so the cost is linear in leaves plus split points.
 */
export function treeVariances(t: RegressionTree, d: number): {total: number; main: number[]} {
  const leaves = treeLeaves(t, d)
  let mean = 0
  for (const l of leaves) mean += l.volume * l.value
  let total = 0
  for (const l of leaves) total += l.volume * (l.value - mean) ** 2
  const main = new Array<number>(d).fill(0)
  for (let j = 0; j < d; j++) {
    const cuts = new Set<number>([0, 1])
    for (const l of leaves) {
      cuts.add(l.lo[j])
      cuts.add(l.hi[j])
    }
    const points = [...cuts].sort((a, b) => a - b)
    const index = new Map(points.map((p, i) => [p, i]))
    const diff = new Float64Array(points.length)
    for (const l of leaves) {
      const width = l.hi[j] - l.lo[j]
      const contribution = (l.value * l.volume) / width
      diff[index.get(l.lo[j])!] += contribution
      diff[index.get(l.hi[j])!] -= contribution
    }
    let level = 0
    let v = 0
    for (let i = 0; i < points.length - 1; i++) {
      level += diff[i]
      v += (points[i + 1] - points[i]) * (level - mean) ** 2
    }
    main[j] = v
  }
  return {total, main}
}

/** fANOVA main-effect shares of every feature, averaged over the forest's trees. */
export function fanova(forest: readonly RegressionTree[], d: number): FanovaResult {
  const shares: number[][] = []
  for (const t of forest) {
    const {total, main} = treeVariances(t, d)
    if (!(total > 0)) continue
    shares.push(main.map((v) => v / total))
  }
  const mean = Array.from({length: d}, (_, j) =>
    shares.length ? shares.reduce((s, r) => s + r[j], 0) / shares.length : 0,
  )
  const sd = Array.from({length: d}, (_, j) =>
    shares.length > 1 ? Math.sqrt(shares.reduce((s, r) => s + (r[j] - mean[j]) ** 2, 0) / (shares.length - 1)) : 0,
  )
  const sum = mean.reduce((s, v) => s + v, 0)
  return {
    main_effect_share: mean,
    main_effect_sd: sd,
    importance: mean.map((v) => (sum > 0 ? v / sum : 0)),
    trees_used: shares.length,
  }
}
