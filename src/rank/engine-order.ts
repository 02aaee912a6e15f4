import {InputError} from '../util/errors.js'
import {numFeatures, numQueries, type LtrDataset} from './dataset.js'

/**
 * How the engine's own order (the ranking with no reranker at all) is known for a data file, so that
 * a reranker is deployed only if it beats it:
 * - `score`: the logged engine score (kt feature logs: `engine_score` on every line, which
 *   `kt rerank log` writes); the default when the file has it.
 * - `file`: each query's lines are listed in the engine's order, first = top.
 * - `feature:NAME`: the feature column NAME is the engine's score, larger first (e.g. a LETOR file's
 *   BM25 column).
 * A LETOR or libsvm file has none of these by itself: the order is then unknown, and deploying
 * needs one of them named, or --force (see src/rank/README.md).
 */
export type EngineOrder = {kind: 'score'} | {kind: 'file'} | {kind: 'feature'; name: string}

export const ENGINE_ORDER_CHOICES = 'score, file or feature:NAME'

/** Parses --engine-order; InputError naming the flag otherwise. */
export function parseEngineOrder(text: string): EngineOrder {
  if (text === 'score' || text === 'file') return {kind: text}
  const m = /^feature:(.+)$/.exec(text)
  if (m) return {kind: 'feature', name: m[1]}
  throw new InputError('--engine-order', ENGINE_ORDER_CHOICES, JSON.stringify(text))
}

export function describeEngineOrder(order: EngineOrder): string {
  return order.kind === 'score'
    ? 'the logged engine_score'
    : order.kind === 'file'
      ? 'the file order of each query'
      : `feature ${order.name} (larger first)`
}

/** The order used when none is named: the logged engine score when the file has one, else unknown. */
export function defaultEngineOrder(data: LtrDataset): EngineOrder | undefined {
  return data.engineScores !== undefined ? {kind: 'score'} : undefined
}

/**
 * Scores whose descending order is the engine's order of each query (ties only where the engine
 * itself tied). InputError naming the file when the order asked for is not in it.
 */
export function engineOrderScores(data: LtrDataset, order: EngineOrder): Float64Array {
  if (order.kind === 'score') {
    if (!data.engineScores)
      throw new InputError(
        `${data.source} field engine_score`,
        'the logged engine score on every line (for --engine-order score; kt rerank log writes it)',
        'none',
      )
    return data.engineScores
  }
  if (order.kind === 'file') {
    const scores = new Float64Array(data.labels.length)
    for (let q = 0; q < numQueries(data); q++) {
      const end = data.queryOffsets[q + 1]
      for (let d = data.queryOffsets[q]; d < end; d++) scores[d] = end - d // first line scores highest
    }
    return scores
  }
  const column = data.featureNames.indexOf(order.name)
  if (column < 0)
    throw new InputError(
      `--engine-order feature:${order.name}`,
      `a feature column of ${data.source} (${data.featureNames.slice(0, 8).join(', ')}${data.featureNames.length > 8 ? ', ...' : ''})`,
      'no such column',
    )
  const width = numFeatures(data)
  return Float64Array.from({length: data.labels.length}, (_, d) => data.features[d * width + column])
}
