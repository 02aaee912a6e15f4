/**
 * Random-forest regression (Breiman 2001) on features in the unit cube: bootstrap samples, CART
 * trees grown on squared error. The settings mirror what Optuna's FanovaImportanceEvaluator fits
 * (scikit-learn RandomForestRegressor with n_estimators 64, max_depth 64, min_samples_split 2,
 * min_samples_leaf 1, every feature considered at each split), so importances are comparable.
 */
import {Rng} from '../util/rng.js'

/** Optuna's FanovaImportanceEvaluator defaults (optuna/importance/_fanova/_evaluator.py). */
export const FOREST_TREES = 64
export const FOREST_MAX_DEPTH = 64
export const FOREST_MIN_SAMPLES_SPLIT = 2
export const FOREST_MIN_SAMPLES_LEAF = 1

export interface ForestOptions {
  readonly trees?: number
  readonly maxDepth?: number
  readonly minSamplesSplit?: number
  readonly minSamplesLeaf?: number
  readonly seed?: number
}

/**
 * One regression tree as flat arrays. Node i is a leaf when feature[i] < 0; otherwise points with
 * x[feature] <= threshold go to left[i], the others to right[i].
 */
export interface RegressionTree {
  readonly feature: Int32Array
  readonly threshold: Float64Array
  readonly left: Int32Array
  readonly right: Int32Array
  readonly value: Float64Array
}

/** Grows one CART regression tree on the rows `idx` (with repeats, from the bootstrap). */
export function growTree(x: readonly Float64Array[], y: Float64Array, idx: Int32Array, o: Required<Omit<ForestOptions, 'seed' | 'trees'>>): RegressionTree {
  const d = x[0]?.length ?? 0
  const feature: number[] = []
  const threshold: number[] = []
  const left: number[] = []
  const right: number[] = []
  const value: number[] = []
  const order = new Int32Array(idx.length)
  const newNode = (): number => {
    feature.push(-1)
    threshold.push(0)
    left.push(-1)
    right.push(-1)
    value.push(0)
    return feature.length - 1
  }
  // explicit stack instead of recursion: depth can reach 64
  const stack: Array<{node: number; rows: Int32Array; depth: number}> = [{node: newNode(), rows: idx, depth: 0}]
  while (stack.length > 0) {
    const {node, rows, depth} = stack.pop()!
    const n = rows.length
    let sum = 0
    let sumSq = 0
    for (let i = 0; i < n; i++) {
      const v = y[rows[i]]
      sum += v
      sumSq += v * v
    }
    value[node] = sum / n
    const sse = sumSq - (sum * sum) / n
    if (n < o.minSamplesSplit || depth >= o.maxDepth || sse <= 1e-12 * Math.max(1, sumSq)) continue
    let bestGain = 0
    let bestFeature = -1
    let bestThreshold = 0
    const sorted = order.subarray(0, n)
    for (let f = 0; f < d; f++) {
      sorted.set(rows)
      sorted.sort((a, b) => x[a][f] - x[b][f])
      let leftSum = 0
      let leftN = 0
      for (let i = 0; i < n - 1; i++) {
        const v = y[sorted[i]]
        leftSum += v
        leftN++
        const xi = x[sorted[i]][f]
        const xn = x[sorted[i + 1]][f]
        if (xn <= xi) continue
        if (leftN < o.minSamplesLeaf || n - leftN < o.minSamplesLeaf) continue
        const rightSum = sum - leftSum
        // SSE reduction = leftSum²/nL + rightSum²/nR - sum²/n
        const gain = (leftSum * leftSum) / leftN + (rightSum * rightSum) / (n - leftN) - (sum * sum) / n
        if (gain > bestGain + 1e-12) {
          bestGain = gain
          bestFeature = f
          bestThreshold = (xi + xn) / 2
        }
      }
    }
    if (bestFeature < 0) continue
    const l: number[] = []
    const r: number[] = []
    for (let i = 0; i < n; i++) (x[rows[i]][bestFeature] <= bestThreshold ? l : r).push(rows[i])
    feature[node] = bestFeature
    threshold[node] = bestThreshold
    const ln = newNode()
    const rn = newNode()
    left[node] = ln
    right[node] = rn
    stack.push({node: ln, rows: Int32Array.from(l), depth: depth + 1}, {node: rn, rows: Int32Array.from(r), depth: depth + 1})
  }
  return {feature: Int32Array.from(feature), threshold: Float64Array.from(threshold), left: Int32Array.from(left), right: Int32Array.from(right), value: Float64Array.from(value)}
}

/** Fits a forest: each tree on a bootstrap sample (n draws with replacement) of the rows. */
export function fitForest(x: readonly Float64Array[], y: Float64Array, options: ForestOptions = {}): RegressionTree[] {
  if (x.length !== y.length || x.length === 0) throw new Error('fitForest needs as many targets as rows, and at least one row')
  const o = {
    maxDepth: options.maxDepth ?? FOREST_MAX_DEPTH,
    minSamplesSplit: options.minSamplesSplit ?? FOREST_MIN_SAMPLES_SPLIT,
    minSamplesLeaf: options.minSamplesLeaf ?? FOREST_MIN_SAMPLES_LEAF,
  }
  const rng = new Rng(options.seed ?? 42)
  const n = x.length
  return Array.from({length: options.trees ?? FOREST_TREES}, () => {
    const idx = new Int32Array(n)
    for (let i = 0; i < n; i++) idx[i] = Math.floor(rng.next() * n)
    return growTree(x, y, idx, o)
  })
}

export function predictTree(t: RegressionTree, row: ArrayLike<number>): number {
  let i = 0
  while (t.feature[i] >= 0) i = row[t.feature[i]] <= t.threshold[i] ? t.left[i] : t.right[i]
  return t.value[i]
}

export function predictForest(forest: readonly RegressionTree[], row: ArrayLike<number>): number {
  let s = 0
  for (const t of forest) s += predictTree(t, row)
  return s / forest.length
}
