import type {CurvePoint, LambdaMartParams} from './lambdamart.js'
import {METRIC_DIGITS} from './table.js'

/** A best validation size below this many trees means the model fits (and overfits) fast. */
const FEW_TREES = 10
/** The last share of the grown trees in which a new validation best counts as "still rising". */
const RISING_TAIL = 0.1
/**
 * Train minus validation NDCG@10 at the chosen size above which the model is said to memorise: it
 * ranks the queries it saw that much better than unseen ones (MQ2008 at the peer's settings: train
 * 0.99, test 0.70; LoCoMo engine logs: train 1.000, held out about 0.7).
 */
export const MEMORISING_GAP = 0.15

/** Advice on learning rate, tree count and regularisation from the learning curve (validation only, never test). */
export function trainingAdvice(curve: readonly CurvePoint[], params: LambdaMartParams, chosen: number): string[] {
  const advice: string[] = []
  if (curve.length === 0) return advice
  if (!curve.some((p) => p.ndcg10.valid !== undefined)) {
    advice.push(
      'no --valid split: the tree count and learning rate are unchecked; give one so early stopping picks the size',
    )
    return advice
  }
  let best = 0
  for (let i = 1; i < curve.length; i++) if (curve[i].ndcg10.valid > curve[best].ndcg10.valid) best = i
  const bestTrees = curve[best].trees
  const grown = curve[curve.length - 1].trees
  if (bestTrees === 0) {
    advice.push(
      'no tree improved on the base ranking on the validation split: the model is the base alone, and deploying it changes nothing',
    )
    return advice
  }
  if (bestTrees >= grown * (1 - RISING_TAIL) && grown >= params.trees) {
    advice.push(
      `validation NDCG@10 was still rising at tree ${bestTrees} of ${params.trees}: more --trees (or a higher --learning-rate) may help`,
    )
  }
  if (bestTrees < FEW_TREES) {
    advice.push(
      `the best validation NDCG@10 came after ${bestTrees} trees: the model fits fast; a lower --learning-rate (e.g. ${params.learningRate / 2}) with more trees, and a larger --min-data or --l2, usually generalise better`,
    )
  }
  const at = curve.find((p) => p.trees === Math.max(1, chosen)) ?? curve[best]
  const gap = at.ndcg10.train - at.ndcg10.valid
  if (gap > MEMORISING_GAP) {
    advice.push(
      `train NDCG@10 ${at.ndcg10.train.toFixed(METRIC_DIGITS)} vs validation ${at.ndcg10.valid.toFixed(METRIC_DIGITS)} at ${at.trees} trees: the model memorises; raise --min-data or --l2, lower --leaves or --depth, or try --feature-fraction 0.8 (kt rerank tune searches these)`,
    )
  }
  return advice
}
