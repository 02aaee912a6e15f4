import type {BinnedData} from './bins.js'

/**
 * Regression trees grown on gradient/Hessian histograms, leaf-wise (best-first, as LightGBM does)
 * under a leaf budget and an optional depth limit.
 *
 * Split gain is the second-order gain of gradient boosting (Chen & Guestrin 2016, eq. 7, without the
 * constant 1/2): G_L^2/(H_L+l2) + G_R^2/(H_R+l2) - G^2/(H+l2). Leaf values are Newton steps
 * -G/(H+l2) scaled by the learning rate; for LambdaMART this is Burges 2010 eq. (gamma_km =
 * sum y_i / sum w_i), with y the negative lambda gradient and w its second derivative.
 */

export interface TreeParams {
  /** Most leaves per tree (LightGBM `num_leaves`, default 31). */
  maxLeaves: number
  /** Deepest leaf depth, root = 0; 0 or less = no limit (LightGBM `max_depth` -1). */
  maxDepth: number
  /** Fewest documents in a leaf (LightGBM `min_data_in_leaf`, default 20). */
  minDataInLeaf: number
  /** Smallest Hessian sum in a leaf (LightGBM `min_sum_hessian_in_leaf`, default 1e-3). */
  minSumHessianInLeaf: number
  /** L2 penalty on leaf values (LightGBM `lambda_l2`, default 0). */
  l2: number
  /** Shrinkage multiplying every leaf value (LightGBM `learning_rate`). */
  learningRate: number
}

/**
 * A tree in the LightGBM layout: internal nodes 0..splits-1, a child index >= 0 is an internal
 * node, a negative child c is leaf ~c. A tree without splits has one leaf and predicts leafValue[0].
 */
export interface RegressionTree {
  readonly splitFeature: Int32Array
  readonly threshold: Float64Array
  readonly left: Int32Array
  readonly right: Int32Array
  /** Gain of each split, for feature importance. */
  readonly gain: Float64Array
  /** Leaf outputs, learning rate already applied. */
  readonly leafValue: Float64Array
}

/**
 * Gains at or below this are treated as no gain: a split that only rearranges rounding error must
 * not be taken (LightGBM uses kEpsilon = 1e-15 in the same test; histograms of sums of thousands of
 * lambdas carry more rounding noise, hence a larger floor).
 */
const MIN_SPLIT_GAIN = 1e-12

/** Per-bin gradient sum, Hessian sum and count, three slots per bin. */
const SLOTS = 3

interface Split {
  gain: number
  feature: number
  bin: number
  leftG: number
  leftH: number
  leftCount: number
}

interface Leaf {
  begin: number
  end: number
  depth: number
  sumG: number
  sumH: number
  histogram: Float64Array
  split: Split | undefined
  /** Internal node whose child this leaf is, and on which side (-1: the root). */
  parent: number
  isLeft: boolean
}

/** A grown tree plus which leaf each training document landed in (to update scores cheaply). */
export interface GrownTree {
  tree: RegressionTree
  /** Leaf index per training document. */
  leafOfDoc: Int32Array
}

/**
 * Grows one tree on per-document gradients and Hessians. `allowed`, when given, marks the feature
 * columns this tree may split on (feature subsampling); every column otherwise.
 */
export function growTree(
  data: BinnedData,
  grad: Float64Array,
  hess: Float64Array,
  params: TreeParams,
  allowed?: Uint8Array,
): GrownTree {
  const {binning, rows} = data
  const totalBins = binning.offsets[binning.offsets.length - 1]
  const docs = new Int32Array(rows)
  for (let d = 0; d < rows; d++) docs[d] = d

  const splitFeature: number[] = []
  const threshold: number[] = []
  const left: number[] = []
  const right: number[] = []
  const gains: number[] = []

  let sumG = 0
  let sumH = 0
  for (let d = 0; d < rows; d++) {
    sumG += grad[d]
    sumH += hess[d]
  }
  const root: Leaf = {
    begin: 0,
    end: rows,
    depth: 0,
    sumG,
    sumH,
    histogram: new Float64Array(totalBins * SLOTS),
    split: undefined,
    parent: -1,
    isLeft: true,
  }
  buildHistogram(data, docs, root.begin, root.end, grad, hess, root.histogram)
  root.split = findBestSplit(data, root, params, allowed)
  const leaves: Leaf[] = [root]

  while (leaves.length < params.maxLeaves) {
    let chosen = -1
    for (let l = 0; l < leaves.length; l++) {
      const split = leaves[l].split
      if (split && (chosen < 0 || split.gain > leaves[chosen].split!.gain)) chosen = l
    }
    if (chosen < 0) break
    const leaf = leaves[chosen]
    const split = leaf.split!
    const node = splitFeature.length
    splitFeature.push(split.feature)
    threshold.push(binning.upper[split.feature][split.bin])
    gains.push(split.gain)
    left.push(~chosen)
    right.push(~leaves.length)
    if (leaf.parent >= 0) {
      if (leaf.isLeft) left[leaf.parent] = node
      else right[leaf.parent] = node
    }

    const middle = partition(data, docs, leaf.begin, leaf.end, split.feature, split.bin)
    const leftLeaf: Leaf = {
      begin: leaf.begin,
      end: middle,
      depth: leaf.depth + 1,
      sumG: split.leftG,
      sumH: split.leftH,
      histogram: leaf.histogram,
      split: undefined,
      parent: node,
      isLeft: true,
    }
    const rightLeaf: Leaf = {
      begin: middle,
      end: leaf.end,
      depth: leaf.depth + 1,
      sumG: leaf.sumG - split.leftG,
      sumH: leaf.sumH - split.leftH,
      histogram: leaf.histogram,
      split: undefined,
      parent: node,
      isLeft: false,
    }
    // Histogram subtraction: build the smaller child's histogram, derive the larger one from the parent's.
    const [small, large] = middle - leaf.begin <= leaf.end - middle ? [leftLeaf, rightLeaf] : [rightLeaf, leftLeaf]
    const fresh = new Float64Array(totalBins * SLOTS)
    buildHistogram(data, docs, small.begin, small.end, grad, hess, fresh)
    const parentHistogram = leaf.histogram
    for (let i = 0; i < parentHistogram.length; i++) parentHistogram[i] -= fresh[i]
    small.histogram = fresh
    large.histogram = parentHistogram

    leaves[chosen] = leftLeaf
    leaves.push(rightLeaf)
    leftLeaf.split = findBestSplit(data, leftLeaf, params, allowed)
    rightLeaf.split = findBestSplit(data, rightLeaf, params, allowed)
  }

  const leafValue = new Float64Array(leaves.length)
  const leafOfDoc = new Int32Array(rows)
  leaves.forEach((leaf, l) => {
    leafValue[l] = (-leaf.sumG / (leaf.sumH + params.l2)) * params.learningRate
    for (let i = leaf.begin; i < leaf.end; i++) leafOfDoc[docs[i]] = l
  })
  // A leaf with no curvature (all its documents in queries without pairs) gets no update.
  for (let l = 0; l < leafValue.length; l++) if (!Number.isFinite(leafValue[l])) leafValue[l] = 0
  return {
    tree: {
      splitFeature: Int32Array.from(splitFeature),
      threshold: Float64Array.from(threshold),
      left: Int32Array.from(left),
      right: Int32Array.from(right),
      gain: Float64Array.from(gains),
      leafValue,
    },
    leafOfDoc,
  }
}

/** Adds the gradient, Hessian and count of documents docs[begin..end) into `histogram`. */
function buildHistogram(
  data: BinnedData,
  docs: Int32Array,
  begin: number,
  end: number,
  grad: Float64Array,
  hess: Float64Array,
  histogram: Float64Array,
): void {
  const {bins, width} = data
  const offsets = data.binning.offsets
  for (let i = begin; i < end; i++) {
    const d = docs[i]
    const g = grad[d]
    const h = hess[d]
    const base = d * width
    for (let f = 0; f < width; f++) {
      const slot = (offsets[f] + bins[base + f]) * SLOTS
      histogram[slot] += g
      histogram[slot + 1] += h
      histogram[slot + 2] += 1
    }
  }
}

/** Leaf score term G^2 / (H + l2) of the gain. */
function leafObjective(g: number, h: number, l2: number): number {
  return (g * g) / (h + l2)
}

/** The best admissible split of a leaf, or undefined when none gains or limits forbid it. */
function findBestSplit(
  data: BinnedData,
  leaf: Pick<Leaf, 'begin' | 'end' | 'depth' | 'sumG' | 'sumH' | 'histogram'>,
  params: TreeParams,
  allowed?: Uint8Array,
): Split | undefined {
  const count = leaf.end - leaf.begin
  if (params.maxDepth > 0 && leaf.depth >= params.maxDepth) return undefined
  if (count < 2 * params.minDataInLeaf) return undefined
  const {offsets} = data.binning
  const {histogram, sumG, sumH} = leaf
  const parentObjective = leafObjective(sumG, sumH, params.l2)
  let best: Split | undefined
  for (let f = 0; f < data.width; f++) {
    if (allowed && !allowed[f]) continue
    let g = 0
    let h = 0
    let c = 0
    for (let b = offsets[f]; b < offsets[f + 1] - 1; b++) {
      g += histogram[b * SLOTS]
      h += histogram[b * SLOTS + 1]
      c += histogram[b * SLOTS + 2]
      if (c < params.minDataInLeaf) continue
      if (count - c < params.minDataInLeaf) break
      if (h < params.minSumHessianInLeaf || sumH - h < params.minSumHessianInLeaf) continue
      const gain = leafObjective(g, h, params.l2) + leafObjective(sumG - g, sumH - h, params.l2) - parentObjective
      if (gain > MIN_SPLIT_GAIN && (best === undefined || gain > best.gain)) {
        best = {gain, feature: f, bin: b - offsets[f], leftG: g, leftH: h, leftCount: c}
      }
    }
  }
  return best
}

/** Reorders docs[begin..end) so documents with bin <= `bin` of `feature` come first; returns the boundary. */
function partition(
  data: BinnedData,
  docs: Int32Array,
  begin: number,
  end: number,
  feature: number,
  bin: number,
): number {
  const {bins, width} = data
  let i = begin
  let j = end - 1
  while (i <= j) {
    if (bins[docs[i] * width + feature] <= bin) i++
    else {
      const t = docs[i]
      docs[i] = docs[j]
      docs[j] = t
      j--
    }
  }
  return i
}

/** Output of one tree for the row starting at features[offset]. */
export function predictTree(tree: RegressionTree, features: ArrayLike<number>, offset: number): number {
  if (tree.splitFeature.length === 0) return tree.leafValue[0]
  let node = 0
  while (node >= 0) {
    node = features[offset + tree.splitFeature[node]] <= tree.threshold[node] ? tree.left[node] : tree.right[node]
  }
  return tree.leafValue[~node]
}
