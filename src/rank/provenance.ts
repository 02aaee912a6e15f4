import {createHash} from 'node:crypto'
import {readFileSync} from 'node:fs'
import {resolve} from 'node:path'
import type {SavedModel} from './model.js'

/**
 * Which data a saved model has seen, so the deploy gate can judge it on data it has not: a model's
 * figures on its training file, and on the validation file that early stopping (the best prefix of
 * trees) and `kt rerank tune` (the best configuration) chose it on, are biased upward; judged there,
 * a model of pure noise looks better than the engine (src/rank/README.md, "Deploy gate").
 *
 * `kt rerank train --save` and `kt rerank tune --save` record each data file's path (`data`) and
 * the sha256 of its bytes (`data_sha256`, same keys). The gate refuses data whose content is that
 * of the training or validation file (a copy under another name included), or, for a model saved
 * before the hashes were recorded, whose resolved path is one of theirs.
 */

/** The splits a model was fitted (train) or selected (valid: early stopping, tuning) on. */
export const SEEN_SPLITS = ['train', 'valid'] as const
export type SeenSplit = (typeof SEEN_SPLITS)[number]

/** sha256 of a file's bytes, in hex. */
export function fileSha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex')
}

/** The `data_sha256` record of the data files a model was trained and measured on. */
export function dataSha256(files: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [split, path] of Object.entries(files)) if (path !== undefined) out[split] = fileSha256(path)
  return out
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
  return split === 'train' ? 'its training file' : 'its validation file (early stopping or kt rerank tune selected it on that data)'
}
