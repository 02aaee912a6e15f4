import {z} from 'zod'
import {InputError} from '../util/errors.js'
import {readJson, writeFileAtomic} from '../util/fs.js'
import type {LambdaMartModel, LambdaMartParams} from './lambdamart.js'
import type {NdcgReport} from './ndcg.js'
import type {RegressionTree} from './tree.js'

/**
 * The saved reranker: a JSON file with the trees, the feature columns they read, the training
 * parameters and the NDCG measured on each split at training time (the registry compares the
 * validation NDCG@10 before deploying). Thresholds and leaf values are JSON numbers, which
 * round-trip float64 exactly, so a loaded model scores exactly like the trained one.
 */

export const MODEL_FORMAT = 'kt-lambdamart'
export const MODEL_VERSION = 1

const finite = z.number().finite()
const savedModelSchema = z.object({
  format: z.literal(MODEL_FORMAT),
  version: z.literal(MODEL_VERSION),
  feature_names: z.array(z.string()).min(1),
  /**
   * The engine's candidates per query of the feature log the model was trained on (`kt rerank log
   * --pool`), when the log records it. Query-level columns (`@qmax`, `@qrank`) are computed over
   * this pool, so `kt eval --reranker` serves such a model with exactly this pool.
   */
  pool: z.number().int().positive().optional(),
  params: z.record(z.unknown()),
  /** Boosting started from weight x this feature (LambdaMartModel.base), when it did. */
  base: z.object({feature: z.string(), weight: finite}).strict().optional(),
  /** NDCG per split ("train", "valid", "test") at training time. */
  metrics: z.record(z.record(finite)),
  /** The data files the model was trained and measured on, by split (train, valid, test). */
  data: z.record(z.string()),
  /**
   * sha256 of each of those files' bytes, same keys (src/rank/provenance.ts): the deploy gate
   * refuses to judge the model on data with the content of its train or valid file. Absent in
   * models saved before it was recorded.
   */
  data_sha256: z.record(z.string().regex(/^[0-9a-f]{64}$/, '64 hex digits')).optional(),
  trees: z.array(
    z.object({
      split_feature: z.array(z.number().int().nonnegative()),
      threshold: z.array(finite),
      left: z.array(z.number().int()),
      right: z.array(z.number().int()),
      gain: z.array(finite),
      leaf_value: z.array(finite).min(1),
    }),
  ),
})
export type SavedModel = z.infer<typeof savedModelSchema>

/** The JSON form of a trained model with its metrics. */
export function toSavedModel(
  model: LambdaMartModel,
  params: Partial<LambdaMartParams> & Record<string, unknown>,
  metrics: Record<string, NdcgReport>,
  data: Record<string, string>,
  pool?: number,
  dataSha256?: Record<string, string>,
): SavedModel {
  return {
    format: MODEL_FORMAT,
    version: MODEL_VERSION,
    feature_names: [...model.featureNames],
    ...(pool === undefined ? {} : {pool}),
    params,
    ...(model.base ? {base: {feature: model.featureNames[model.base.feature], weight: model.base.weight}} : {}),
    metrics,
    data,
    ...(dataSha256 === undefined ? {} : {data_sha256: dataSha256}),
    trees: model.trees.map((tree) => ({
      split_feature: Array.from(tree.splitFeature),
      threshold: Array.from(tree.threshold),
      left: Array.from(tree.left),
      right: Array.from(tree.right),
      gain: Array.from(tree.gain),
      leaf_value: Array.from(tree.leafValue),
    })),
  }
}

/**
 * Whether two saved models score every input alike: the same columns, the same recorded pool and
 * the same trees (metrics, parameters and data paths aside).
 */
export function sameScoringModel(a: SavedModel, b: SavedModel): boolean {
  return (
    JSON.stringify([a.feature_names, a.pool ?? null, a.base ?? null, a.trees]) ===
    JSON.stringify([b.feature_names, b.pool ?? null, b.base ?? null, b.trees])
  )
}

/** The trainer-side model of a saved one. */
export function fromSavedModel(saved: SavedModel): LambdaMartModel {
  return {
    featureNames: saved.feature_names,
    ...(saved.base
      ? {base: {feature: saved.feature_names.indexOf(saved.base.feature), weight: saved.base.weight}}
      : {}),
    trees: saved.trees.map((tree): RegressionTree => ({
      splitFeature: Int32Array.from(tree.split_feature),
      threshold: Float64Array.from(tree.threshold),
      left: Int32Array.from(tree.left),
      right: Int32Array.from(tree.right),
      gain: Float64Array.from(tree.gain),
      leafValue: Float64Array.from(tree.leaf_value),
    })),
  }
}

export function writeModel(path: string, saved: SavedModel): void {
  writeFileAtomic(path, JSON.stringify(saved) + '\n')
}

/** Reads and checks a saved model: schema, then tree structure (see checkTree). */
export function readModel(path: string): SavedModel {
  return checkSavedModel(readJson(path), path)
}

function checkSavedModel(value: unknown, where: string): SavedModel {
  const parsed = savedModelSchema.safeParse(value)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw new InputError(
      `${where} field ${issue.path.join('.') || '(top)'}`,
      `a ${MODEL_FORMAT} v${MODEL_VERSION} model (${issue.message})`,
    )
  }
  const saved = parsed.data
  if (saved.base && !saved.feature_names.includes(saved.base.feature))
    throw new InputError(
      `${where} field base.feature`,
      `one of the model's features (${saved.feature_names.slice(0, 8).join(', ')})`,
      saved.base.feature,
    )
  saved.trees.forEach((tree, t) => checkTree(tree, saved.feature_names.length, `${where} field trees.${t}`))
  return saved
}

/**
 * A tree is well formed when its split arrays have one entry per split, there is one more leaf than
 * splits, features are in range, and every internal node but the root and every leaf is the child of
 * exactly one earlier node (so a walk from the root always ends at a leaf).
 */
function checkTree(tree: SavedModel['trees'][number], width: number, where: string): void {
  const splits = tree.split_feature.length
  for (const key of ['threshold', 'left', 'right', 'gain'] as const) {
    if (tree[key].length !== splits)
      throw new InputError(`${where}.${key}`, `${splits} entries (one per split)`, String(tree[key].length))
  }
  if (tree.leaf_value.length !== splits + 1) {
    throw new InputError(`${where}.leaf_value`, `${splits + 1} entries (splits + 1)`, String(tree.leaf_value.length))
  }
  const internalSeen = new Uint8Array(splits)
  const leafSeen = new Uint8Array(splits + 1)
  for (let i = 0; i < splits; i++) {
    if (tree.split_feature[i] >= width)
      throw new InputError(
        `${where}.split_feature.${i}`,
        `a feature index below ${width}`,
        String(tree.split_feature[i]),
      )
    for (const child of [tree.left[i], tree.right[i]]) {
      const ok =
        child >= 0 ? child > i && child < splits && !internalSeen[child] : ~child <= splits && !leafSeen[~child]
      if (!ok)
        throw new InputError(`${where} node ${i}`, 'children that are later nodes or unused leaves', String(child))
      if (child >= 0) internalSeen[child] = 1
      else leafSeen[~child] = 1
    }
  }
  if (splits > 0 && leafSeen.some((seen) => !seen))
    throw new InputError(where, 'every leaf reachable', 'an orphan leaf')
}
