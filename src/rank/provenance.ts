import {createHash} from 'node:crypto'
import {existsSync, readFileSync} from 'node:fs'
import {resolve} from 'node:path'
import {numFeatures, numQueries, type LtrDataset} from './dataset.js'
import {snakeKeys} from '../util/json-keys.js'
import type {LambdaMartModel} from './lambdamart.js'
import {toSavedModel, writeModel, type SavedModel} from './model.js'
import type {NdcgReport} from './ndcg.js'
import {readLtrFile} from './parse.js'

/**
 * Which data a saved model has seen, so the deploy gate can judge it on data it has not: a model's
 * figures on its training file, and on the validation file that early stopping (the best prefix of
 * trees) and `kt rerank tune` (the best configuration) chose it on, are biased upward; judged there,
 * a model of pure noise looks better than the engine (src/rank/README.md, "Deploy gate").
 *
 * `kt rerank train --save` and `kt rerank tune --save` record each data file's path (`data`) and
 * the sha256 of its bytes (`data_sha256`, same keys). The gate refuses data whose content is that
 * of the training or validation file (a copy under another name included), or, for a model saved
 * before the hashes were recorded, whose resolved path is one of theirs; and, while those files
 * still exist unchanged, data sharing any judged query with them (queryFingerprints).
 */

/** The splits a model was fitted (train) or selected (valid: early stopping, tuning) on. */
const SEEN_SPLITS = ['train', 'valid'] as const
export type SeenSplit = (typeof SEEN_SPLITS)[number]

/** sha256 of a file's bytes, in hex. */
export function fileSha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex')
}

/**
 * Saves a trained model with its settings (snake_case keys), metrics, the data files it was trained,
 * selected and measured on, and their sha256 (`data_sha256`: the deploy gate refuses to judge it on them).
 */
export function saveTrainedModel(
  path: string,
  model: LambdaMartModel,
  params: object,
  metrics: Record<string, NdcgReport>,
  files: Readonly<Record<string, string | undefined>>,
  pool: number | undefined,
): void {
  const data = Object.fromEntries(Object.entries(files).filter(([, file]) => file !== undefined)) as Record<
    string,
    string
  >
  const hashes = Object.fromEntries(Object.entries(data).map(([split, file]) => [split, fileSha256(file)]))
  writeModel(path, toSavedModel(model, snakeKeys(params) as Record<string, unknown>, metrics, data, pool, hashes))
}

/** How a gate file was found to be data the model saw. */
export interface SeenUse {
  readonly split: SeenSplit
  /** `content`: the same sha256 as the recorded file; `path`: the same file (a model without hashes). */
  readonly by: 'content' | 'path'
}

/**
 * Whether the file at `path` (its bytes hashing to `sha256`, when known) is data `model` was trained
 * or selected on; undefined when it is not, as far as the model's record tells.
 */
export function seenUse(model: SavedModel, path: string, sha256: string | undefined): SeenUse | undefined {
  for (const split of SEEN_SPLITS) {
    const recorded = model.data_sha256?.[split]
    if (recorded !== undefined && sha256 !== undefined && recorded === sha256) return {split, by: 'content'}
    const file = model.data[split]
    if (file !== undefined && resolve(file) === resolve(path)) return {split, by: 'path'}
  }
  return undefined
}

/** "the training file" / "the validation file early stopping and kt rerank tune selected it on". */
export function describeSeen(split: SeenSplit): string {
  return split === 'train'
    ? 'its training file'
    : 'its validation file (early stopping or kt rerank tune selected it on that data)'
}

/**
 * Fingerprint of each judged query (one with a relevant document) of `data`: the sha256 of its
 * documents, each as its label and its non-zero features by name, the documents sorted, so the same
 * query found in another file of the same form matches whatever the line order, the query id or
 * the sparse LETOR file's width. Unjudged queries count in no NDCG mean and are left out.
 */
function queryFingerprints(data: LtrDataset): Map<string, string> {
  const width = numFeatures(data)
  const out = new Map<string, string>()
  for (let q = 0; q < numQueries(data); q++) {
    const rows: string[] = []
    let judged = false
    for (let d = data.queryOffsets[q]; d < data.queryOffsets[q + 1]; d++) {
      if (data.labels[d] > 0) judged = true
      const values: string[] = []
      for (let f = 0; f < width; f++) {
        const v = data.features[d * width + f]
        if (v !== 0) values.push(`${data.featureNames[f]}=${v}`)
      }
      rows.push(`${data.labels[d]}|${values.join(',')}`)
    }
    if (judged) out.set(createHash('sha256').update(rows.sort().join('\n')).digest('hex'), data.queryIds[q])
  }
  return out
}

/** Judged queries of a gate file that are also in a file the model saw. */
export interface SeenOverlap {
  readonly split: SeenSplit
  readonly file: string
  readonly shared: number
  /** Judged queries of the gate data. */
  readonly of: number
  /** One shared query's id in the gate data. */
  readonly example: string
}

/**
 * The first of the model's train and valid files (when it still exists with the recorded content)
 * that shares judged queries with `gate`: a held-out file joined from several, or a subset of the
 * validation file, which the file-level hash does not catch. `unchecked` lists recorded files that
 * could not be compared (gone, or changed since training).
 */
export function seenOverlap(model: SavedModel, gate: LtrDataset): {overlap?: SeenOverlap; unchecked: string[]} {
  const unchecked: string[] = []
  const mine = queryFingerprints(gate)
  for (const split of SEEN_SPLITS) {
    const file = model.data[split]
    if (file === undefined) continue
    if (
      !existsSync(file) ||
      (model.data_sha256?.[split] !== undefined && fileSha256(file) !== model.data_sha256[split])
    ) {
      unchecked.push(file)
      continue
    }
    let shared = 0
    let example = ''
    for (const key of queryFingerprints(readLtrFile(file)).keys()) {
      const qid = mine.get(key)
      if (qid !== undefined) {
        if (shared === 0) example = qid
        shared++
      }
    }
    if (shared > 0) return {overlap: {split, file, shared, of: mine.size, example}, unchecked}
  }
  return {unchecked}
}
