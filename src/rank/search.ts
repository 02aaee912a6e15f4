import {join} from 'node:path'
import {candidateFeatures, DEFAULT_CANDIDATE_POOL, type CandidateRow} from '../engine/retrieval/features.js'
import type {RetrievalEngine} from '../engine/retrieval/engine.js'
import type {Config} from '../space/types.js'
import {InputError} from '../util/errors.js'
import {engineReranker, type EngineReranker} from './apply.js'
import {readModel} from './model.js'
import {loadDeployed, REGISTRY_INDEX} from './registry.js'

/**
 * The query-time path of the learned reranker: the engine ranks, the model reorders the engine's
 * top `pool` candidates, and the best k are returned. The engine (src/engine) knows nothing of the
 * reranker; this module sits above it (data -> engine -> rank/eval -> report).
 */

/** A reranked result list: turn indices, their ids and the model's scores, best first. */
export interface RerankedResult {
  readonly turns: number[]
  readonly ids: string[]
  readonly scores: number[]
}

/** The top k of a query's candidate rows reordered by the model (k <= rows.length keeps k). */
export function rerankCandidates(reranker: EngineReranker, rows: readonly CandidateRow[], k: number): RerankedResult {
  const top = reranker.rerank(rows).slice(0, k)
  return {turns: top.map((x) => x.row.turn), ids: top.map((x) => x.row.id), scores: top.map((x) => x.score)}
}

/**
 * The engine's top `pool` candidates for `query` (with their feature rows), reordered by the
 * reranker; the best k. The pool must hold at least k candidates' worth of depth: a k deeper than
 * the pool would have to mix model scores with engine scores, so it is refused.
 */
export function rerankedSearch(
  engine: RetrievalEngine,
  reranker: EngineReranker,
  query: string,
  config: Config,
  k: number,
  pool: number = DEFAULT_CANDIDATE_POOL,
): RerankedResult {
  if (!(k <= pool)) throw new RangeError(`rerankedSearch: expected k <= pool, got k ${k} and pool ${pool}`)
  return rerankCandidates(reranker, candidateFeatures(engine, query, config, pool), k)
}

/** Where a loaded reranker came from. */
export interface LoadedReranker {
  readonly reranker: EngineReranker
  /** The model file read. */
  readonly file: string
  /** The registry version, when loaded as `deployed`. */
  readonly version?: string
  readonly trees: number
  readonly featureNames: readonly string[]
  /** The candidate pool the model's training log was written with, when the model records it. */
  readonly pool?: number
}

/** The `--reranker` value that means "the registry's current version". */
const DEPLOYED_RERANKER = 'deployed'

/**
 * Loads a reranker for the engine: `spec` is a model file written by `kt rerank train --save`, or
 * DEPLOYED_RERANKER for the current version of the registry in `registryDir`. A malformed file or a
 * model whose feature_names the engine cannot supply is a one-line InputError naming the file.
 */
export function loadReranker(spec: string, registryDir: string): LoadedReranker {
  if (spec === DEPLOYED_RERANKER) {
    const deployed = loadDeployed(registryDir)
    if (!deployed)
      throw new InputError(join(registryDir, REGISTRY_INDEX), 'a deployed reranker (kt rerank deploy MODEL)', 'none')
    return {
      reranker: engineReranker(deployed.saved, deployed.file),
      file: deployed.file,
      version: deployed.version.id,
      trees: deployed.saved.trees.length,
      featureNames: deployed.saved.feature_names,
      ...(deployed.saved.pool === undefined ? {} : {pool: deployed.saved.pool}),
    }
  }
  const saved = readModel(spec)
  return {
    reranker: engineReranker(saved, spec),
    file: spec,
    trees: saved.trees.length,
    featureNames: saved.feature_names,
    ...(saved.pool === undefined ? {} : {pool: saved.pool}),
  }
}
