import type {LambdaMartModel} from './lambdamart.js'
import type {RegressionTree} from './tree.js'

/**
 * Packed inference: all trees of a model flattened into typed arrays indexed by node, so scoring a
 * candidate walks plain arrays and allocates nothing.
 *
 *   feature[n]    split feature (0 for a leaf, so the load stays in bounds)
 *   threshold[n]  go left when x[feature] <= threshold; NaN for a leaf
 *   left[n], right[n]  child node indices; right = left + 1 (children are laid out side by side)
 *   value[n]      leaf output (learning rate applied), 0 for internal nodes
 *   depth[t]      longest root-to-leaf path of tree t
 *
 * The walk is branch-free: node = left[node] + !(x <= threshold). A leaf points to itself through
 * left = n - 1 and a NaN threshold (every comparison with NaN is false, so the step adds 1 and lands
 * on n again, whatever x is), which lets a tree be walked a fixed `depth` steps without testing for
 * leaves. Four trees are walked in lock-step so their independent loads overlap (and in scoreAll two
 * candidates at once); random split directions would otherwise mispredict a branch at every level. A NaN feature value goes right,
 * like the trainer's `x <= t ? left : right`.
 *
 * Tree outputs are added in the trainer's order starting from the model's base term (0 without one),
 * with the same comparison on the same float64 thresholds, so packed scores equal the trainer's own
 * prediction bit for bit.
 */

/** Trees walked in lock-step (measured: 4 is where the gain levels off on 2 cores, see `kt bench rerank`). */
const LANES = 4

export class PackedEnsemble {
  readonly feature: Int32Array
  readonly threshold: Float64Array
  readonly left: Int32Array
  readonly right: Int32Array
  readonly value: Float64Array
  /** Root node index of each tree. */
  readonly roots: Int32Array
  /** Depth of each tree (steps from its root to its deepest leaf). */
  readonly depth: Int32Array
  /** Feature count of an input row. */
  readonly width: number
  /** The model's base column (-1: none) and weight: scores start at weight x that column. */
  readonly baseFeature: number
  readonly baseWeight: number

  constructor(model: LambdaMartModel) {
    this.width = model.featureNames.length
    this.baseFeature = model.base ? model.base.feature : -1
    this.baseWeight = model.base ? model.base.weight : 0
    let nodes = 0
    for (const tree of model.trees) nodes += tree.splitFeature.length + tree.leafValue.length
    this.feature = new Int32Array(nodes)
    this.threshold = new Float64Array(nodes)
    this.left = new Int32Array(nodes)
    this.right = new Int32Array(nodes)
    this.value = new Float64Array(nodes)
    this.roots = new Int32Array(model.trees.length)
    this.depth = new Int32Array(model.trees.length)
    let at = 0
    model.trees.forEach((tree, t) => {
      this.roots[t] = at
      const placed = this.place(tree, at)
      this.depth[t] = placed.depth
      at = placed.end
    })
  }

  /**
   * Lays one tree out breadth-first from node `at`: each internal node's two children get two
   * consecutive slots. Returns the next free slot and the tree's depth.
   */
  private place(tree: RegressionTree, at: number): {end: number; depth: number} {
    // Tree child codes: >= 0 internal node, < 0 leaf ~code. The root is internal node 0, or leaf 0.
    const queue: {code: number; slot: number; level: number}[] = [
      {code: tree.splitFeature.length === 0 ? ~0 : 0, slot: at, level: 0},
    ]
    let next = at + 1
    let depth = 0
    for (let head = 0; head < queue.length; head++) {
      const {code, slot, level} = queue[head]
      if (code < 0) {
        this.feature[slot] = 0
        this.threshold[slot] = Number.NaN
        this.left[slot] = slot - 1
        this.right[slot] = slot
        this.value[slot] = tree.leafValue[~code]
        depth = Math.max(depth, level)
        continue
      }
      this.feature[slot] = tree.splitFeature[code]
      this.threshold[slot] = tree.threshold[code]
      this.left[slot] = next
      this.right[slot] = next + 1
      queue.push(
        {code: tree.left[code], slot: next, level: level + 1},
        {code: tree.right[code], slot: next + 1, level: level + 1},
      )
      next += 2
    }
    return {end: next, depth}
  }

  /** Score of the candidate whose features start at rows[offset] (scoreAll's odd last one; tests). */
  score(rows: Float64Array, offset: number): number {
    const {feature, threshold, left, value, roots, depth} = this
    // The base term first, as the trainer starts its scores from it (bit-identical sums).
    let sum = this.baseFeature >= 0 ? this.baseWeight * rows[offset + this.baseFeature] : 0
    for (let t = 0; t < roots.length; t++) {
      let a = roots[t]
      for (let s = 0; s < depth[t]; s++) a = left[a] + +!(rows[offset + feature[a]] <= threshold[a])
      sum += value[a]
    }
    return sum
  }

  /**
   * Scores `count` row-major candidates into `out` (no allocation). Candidates go in pairs, each
   * pair walking the same four trees in lock-step: eight independent chains of loads in flight
   * (less CPU per candidate than one at a time: `kt bench rerank`).
   * Each candidate's tree outputs are still added in tree order, so scores equal score()'s.
   */
  scoreAll(rows: Float64Array, count: number, out: Float64Array): Float64Array {
    const {feature, threshold, left, value, roots, depth, width} = this
    const trees = roots.length
    let d = 0
    for (; d + 2 <= count; d += 2) {
      const o = d * width
      const p = o + width
      let sumO = this.baseFeature >= 0 ? this.baseWeight * rows[o + this.baseFeature] : 0
      let sumP = this.baseFeature >= 0 ? this.baseWeight * rows[p + this.baseFeature] : 0
      let t = 0
      for (; t + LANES <= trees; t += LANES) {
        let a = roots[t]
        let b = roots[t + 1]
        let c = roots[t + 2]
        let e = roots[t + 3]
        let a2 = a
        let b2 = b
        let c2 = c
        let e2 = e
        const steps = Math.max(depth[t], depth[t + 1], depth[t + 2], depth[t + 3])
        for (let s = 0; s < steps; s++) {
          a = left[a] + +!(rows[o + feature[a]] <= threshold[a])
          b = left[b] + +!(rows[o + feature[b]] <= threshold[b])
          c = left[c] + +!(rows[o + feature[c]] <= threshold[c])
          e = left[e] + +!(rows[o + feature[e]] <= threshold[e])
          a2 = left[a2] + +!(rows[p + feature[a2]] <= threshold[a2])
          b2 = left[b2] + +!(rows[p + feature[b2]] <= threshold[b2])
          c2 = left[c2] + +!(rows[p + feature[c2]] <= threshold[c2])
          e2 = left[e2] + +!(rows[p + feature[e2]] <= threshold[e2])
        }
        sumO += value[a]
        sumO += value[b]
        sumO += value[c]
        sumO += value[e]
        sumP += value[a2]
        sumP += value[b2]
        sumP += value[c2]
        sumP += value[e2]
      }
      for (; t < trees; t++) {
        let a = roots[t]
        let a2 = a
        for (let s = 0; s < depth[t]; s++) {
          a = left[a] + +!(rows[o + feature[a]] <= threshold[a])
          a2 = left[a2] + +!(rows[p + feature[a2]] <= threshold[a2])
        }
        sumO += value[a]
        sumP += value[a2]
      }
      out[d] = sumO
      out[d + 1] = sumP
    }
    if (d < count) out[d] = this.score(rows, d * width)
    return out
  }
}
