/**
 * Held-out data for retrieval tuning: the conversations split into a tuning part and a held-out
 * part, so a tuned configuration's quality can be read on questions the search never saw. Whole
 * conversations are split (not questions), because questions about one conversation share its
 * turns and would leak through them.
 */
import type {MemoryDataset} from './types.js'
import {InputError, describeValue} from '../../util/errors.js'
import {Rng} from '../../util/rng.js'
import {restrictConversations} from './queries.js'

/** How to split: a seeded share of conversations for tuning, or explicit id lists. */
export type SplitSpec =
  | {readonly kind: 'conversations'; readonly tune_share: number; readonly seed: number}
  | {readonly kind: 'ids'; readonly train: readonly string[]; readonly holdout: readonly string[]}

export type SplitPart = 'train' | 'holdout'

/**
 * `--split conversations:0.5` (the share of conversations tuned on; the rest is held out), with
 * the seed that shuffles them.
 */
export function parseSplit(text: string, seed: number, where = '--split'): SplitSpec {
  const m = /^conversations:([0-9.]+)$/.exec(text.trim())
  const share = m ? Number(m[1]) : NaN
  if (!m || !(share > 0 && share < 1))
    throw new InputError(
      where,
      'conversations:SHARE with SHARE strictly between 0 and 1 (the share tuned on)',
      describeValue(text),
    )
  return {kind: 'conversations', tune_share: share, seed}
}

/** `--train IDS --holdout IDS` (comma-separated conversation ids). */
export function idSplit(train: string, holdout: string): SplitSpec {
  const list = (s: string, flag: string): string[] => {
    const ids = s
      .split(',')
      .map((x) => x.trim())
      .filter((x) => x.length > 0)
    if (ids.length === 0) throw new InputError(flag, 'comma-separated conversation ids', describeValue(s))
    return ids
  }
  const spec = {kind: 'ids' as const, train: list(train, '--train'), holdout: list(holdout, '--holdout')}
  const overlap = spec.train.find((id) => spec.holdout.includes(id))
  if (overlap !== undefined)
    throw new InputError(
      '--holdout',
      'conversations not also in --train (validating on tuning data proves nothing)',
      describeValue(overlap),
    )
  return spec
}

/** The conversation ids of each part (tuning ids in dataset order). */
export function splitIds(
  dataset: MemoryDataset,
  spec: SplitSpec,
  where = '--split',
): {train: string[]; holdout: string[]} {
  if (spec.kind === 'ids') return {train: [...spec.train], holdout: [...spec.holdout]}
  const ids = dataset.conversations.map((c) => c.id)
  const nTrain = Math.round(spec.tune_share * ids.length)
  if (nTrain < 1 || nTrain > ids.length - 1)
    throw new InputError(
      where,
      `a share that leaves at least one conversation on each side (${ids.length} conversations in ${dataset.source})`,
      String(spec.tune_share),
    )
  const shuffled = new Rng(spec.seed).fork('split/conversations').shuffle([...ids])
  const train = new Set(shuffled.slice(0, nTrain))
  return {train: ids.filter((id) => train.has(id)), holdout: ids.filter((id) => !train.has(id))}
}

/** One part of a dataset under a split (unknown ids: a one-line error naming the flag). */
export function splitDataset(dataset: MemoryDataset, spec: SplitSpec, part: SplitPart): MemoryDataset {
  const ids = splitIds(dataset, spec)
  return restrictConversations(
    dataset,
    part === 'train' ? ids.train : ids.holdout,
    part === 'train' ? '--train' : '--holdout',
  )
}

/** One line describing the split, for reports. */
export function describeSplit(dataset: MemoryDataset, spec: SplitSpec): string {
  const ids = splitIds(dataset, spec)
  const how = spec.kind === 'conversations' ? `share ${spec.tune_share} tuned on, seed ${spec.seed}` : 'explicit ids'
  return `tuning on ${ids.train.length} conversation(s) (${ids.train.join(', ')}), held out ${ids.holdout.length} (${ids.holdout.join(', ')}); ${how}`
}
