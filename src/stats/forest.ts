/**
 * Random-forest regression (Breiman 2001) on features in the unit cube: bootstrap samples, CART
 * trees grown on squared error. The settings mirror what Optuna's FanovaImportanceEvaluator fits
 * (scikit-learn RandomForestRegressor with n_estimators 64, max_depth 64, min_samples_split 2,
 * min_samples_leaf 1, every feature considered at each split), so importances are comparable.
 */
import {Rng} from '../util/rng.js'

/** Optuna's FanovaImportanceEvaluator defaults (optuna/importance/_fanova/_evaluator.py). */
export const FOREST_TREES = 64
const FOREST_MAX_DEPTH = 64
const FOREST_MIN_SAMPLES_SPLIT = 2
const FOREST_MIN_SAMPLES_LEAF = 1

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

/**
 * Grows one CART regression tree on the rows `idx` (with repeats, from the bootstrap). Each
 * feature's order is sorted once per tree and split stably at every node (the classic presorted
 * CART), so growing costs O(n d depth) instead of a sort per node and feature.
 */
function growTree(
  x: readonly Float64Array[],
  y: Float64Array,
  idx: Int32Array,
  o: Required<Omit<ForestOptions, 'seed' | 'trees'>>,
  rowOrder?: readonly Int32Array[],
): RegressionTree {
  const d = x[0]?.length ?? 0
  const n = idx.length
  const feature: number[] = []
  const threshold: number[] = []
  const left: number[] = []
  const right: number[] = []
  const value: number[] = []
  const newNode = (): number => {
    feature.push(-1)
    threshold.push(0)
    left.push(-1)
    right.push(-1)
    value.push(0)
    return feature.length - 1
  }
  // sample positions 0..n-1 (a bootstrap repeats rows); per feature, the positions in value order
  const xv = Array.from({length: d}, (_, f) => Float64Array.from(idx, (r) => x[r][f]))
  const yv = Float64Array.from(idx, (r) => y[r])
  const sorted = rowOrder
    ? bootstrapOrder(idx, x.length, rowOrder)
    : xv.map((col) => Int32Array.from({length: n}, (_, i) => i).sort((a, b) => col[a] - col[b]))
  const goesLeft = new Uint8Array(n)
  const scratch = new Int32Array(n)
  // a node owns the range [lo, hi) of every feature's sorted array
  const stack: Array<{node: number; lo: number; hi: number; depth: number}> = [
    {node: newNode(), lo: 0, hi: n, depth: 0},
  ]
  while (stack.length > 0) {
    const {node, lo, hi, depth} = stack.pop()!
    const m = hi - lo
    let sum = 0
    let sumSq = 0
    const any = sorted[0] ?? Int32Array.from({length: n}, (_, i) => i)
    for (let i = lo; i < hi; i++) {
      const v = yv[any[i]]
      sum += v
      sumSq += v * v
    }
    value[node] = sum / m
    const sse = sumSq - (sum * sum) / m
    if (d === 0 || m < o.minSamplesSplit || depth >= o.maxDepth || sse <= 1e-12 * Math.max(1, sumSq)) continue
    let bestGain = 0
    let bestFeature = -1
    let bestThreshold = 0
    let bestCount = 0
    for (let f = 0; f < d; f++) {
      const order = sorted[f]
      const col = xv[f]
      let leftSum = 0
      for (let i = lo; i < hi - 1; i++) {
        leftSum += yv[order[i]]
        const leftN = i - lo + 1
        const xi = col[order[i]]
        const xn = col[order[i + 1]]
        if (xn <= xi) continue
        if (leftN < o.minSamplesLeaf || m - leftN < o.minSamplesLeaf) continue
        const rightSum = sum - leftSum
        // SSE reduction = leftSum²/nL + rightSum²/nR - sum²/n
        const gain = (leftSum * leftSum) / leftN + (rightSum * rightSum) / (m - leftN) - (sum * sum) / m
        if (gain > bestGain + 1e-12) {
          bestGain = gain
          bestFeature = f
          bestThreshold = (xi + xn) / 2
          bestCount = leftN
        }
      }
    }
    if (bestFeature < 0) continue
    const splitCol = xv[bestFeature]
    for (let i = lo; i < hi; i++) {
      const pos = sorted[bestFeature][i]
      goesLeft[pos] = splitCol[pos] <= bestThreshold ? 1 : 0
    }
    // stable partition of every feature's range: left part first, order kept
    for (let f = 0; f < d; f++) {
      const order = sorted[f]
      let l = lo
      let r = 0
      for (let i = lo; i < hi; i++) {
        const pos = order[i]
        if (goesLeft[pos]) order[l++] = pos
        else scratch[r++] = pos
      }
      order.set(scratch.subarray(0, r), l)
    }
    feature[node] = bestFeature
    threshold[node] = bestThreshold
    const ln = newNode()
    const rn = newNode()
    left[node] = ln
    right[node] = rn
    stack.push(
      {node: ln, lo, hi: lo + bestCount, depth: depth + 1},
      {node: rn, lo: lo + bestCount, hi, depth: depth + 1},
    )
  }
  return {
    feature: Int32Array.from(feature),
    threshold: Float64Array.from(threshold),
    left: Int32Array.from(left),
    right: Int32Array.from(right),
    value: Float64Array.from(value),
  }
}

/** Rows sorted by each feature, once for the whole forest. */
function featureOrders(x: readonly Float64Array[]): Int32Array[] {
  const d = x[0]?.length ?? 0
  return Array.from({length: d}, (_, f) => {
    const keys = Float64Array.from(x, (row) => row[f])
    return Int32Array.from({length: x.length}, (_, i) => i).sort((a, b) => keys[a] - keys[b])
  })
}

/** A bootstrap sample's positions in each feature's order, read off the rows' order in O(n) (a row drawn k times appears k times). */
function bootstrapOrder(idx: Int32Array, rows: number, rowOrder: readonly Int32Array[]): Int32Array[] {
  const count = new Int32Array(rows + 1)
  for (const r of idx) count[r + 1]++
  for (let r = 0; r < rows; r++) count[r + 1] += count[r]
  const start = count.slice()
  const positions = new Int32Array(idx.length)
  idx.forEach((r, p) => (positions[start[r]++] = p))
  return rowOrder.map((order) => {
    const out = new Int32Array(idx.length)
    let k = 0
    for (const r of order) for (let j = count[r]; j < count[r + 1]; j++) out[k++] = positions[j]
    return out
  })
}

/** Fits a forest: each tree on a bootstrap sample (n draws with replacement) of the rows. */
export function fitForest(x: readonly Float64Array[], y: Float64Array, options: ForestOptions = {}): RegressionTree[] {
  if (x.length !== y.length || x.length === 0)
    throw new Error('fitForest needs as many targets as rows, and at least one row')
  const o = {
    maxDepth: options.maxDepth ?? FOREST_MAX_DEPTH,
    minSamplesSplit: options.minSamplesSplit ?? FOREST_MIN_SAMPLES_SPLIT,
    minSamplesLeaf: options.minSamplesLeaf ?? FOREST_MIN_SAMPLES_LEAF,
  }
  const rng = new Rng(options.seed ?? 42)
  const n = x.length
  const orders = featureOrders(x)
  return Array.from({length: options.trees ?? FOREST_TREES}, () => {
    const idx = new Int32Array(n)
    for (let i = 0; i < n; i++) idx[i] = Math.floor(rng.next() * n)
    return growTree(x, y, idx, o, orders)
  })
}

function predictTree(t: RegressionTree, row: ArrayLike<number>): number {
  let i = 0
  while (t.feature[i] >= 0) i = row[t.feature[i]] <= t.threshold[i] ? t.left[i] : t.right[i]
  return t.value[i]
}

export function predictForest(forest: readonly RegressionTree[], row: ArrayLike<number>): number {
  let s = 0
  for (const t of forest) s += predictTree(t, row)
  return s / forest.length
}
