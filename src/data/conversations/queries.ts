import type {MemoryDataset, QuestionCategory} from './types.js'
import {InputError} from '../../util/errors.js'

/** A question retrieval is scored on: it has evidence and is not adversarial. */
export interface EvalQuery {
  readonly id: string
  readonly conversation: string
  readonly text: string
  readonly category: QuestionCategory
  readonly evidence: readonly string[]
}

export interface QuerySelection {
  readonly queries: EvalQuery[]
  /** Questions left out, by reason. */
  readonly skipped: {readonly adversarial: number; readonly no_evidence: number}
}

/**
 * The scored questions of a dataset: adversarial questions (LoCoMo category 5, whose evidence
 * supports no answer) and questions without any evidence turn are skipped and counted.
 */
export function selectScoredQueries(dataset: MemoryDataset): QuerySelection {
  const queries: EvalQuery[] = []
  let adversarial = 0
  let noEvidence = 0
  for (const q of dataset.questions) {
    if (q.category === 'adversarial') adversarial++
    else if (q.evidence.length === 0) noEvidence++
    else
      queries.push({id: q.id, conversation: q.conversation, text: q.text, category: q.category, evidence: q.evidence})
  }
  return {queries, skipped: {adversarial, no_evidence: noEvidence}}
}

/** Conversation ids listed in an error message at most. */
const MAX_LISTED_IDS = 10

/**
 * The dataset restricted to the named conversations and their questions (e.g. a reranker's held-out
 * conversation); an unknown id is an InputError naming `where` and the ids there are.
 */
export function restrictConversations(dataset: MemoryDataset, ids: readonly string[], where: string): MemoryDataset {
  const known = dataset.conversations.map((c) => c.id)
  const listed = known.length > MAX_LISTED_IDS ? `${known.slice(0, MAX_LISTED_IDS).join(', ')}, ...` : known.join(', ')
  for (const id of ids)
    if (!known.includes(id))
      throw new InputError(where, `conversation ids of ${dataset.source} (${listed})`, JSON.stringify(id))
  const wanted = new Set(ids)
  return {
    ...dataset,
    conversations: dataset.conversations.filter((c) => wanted.has(c.id)),
    questions: dataset.questions.filter((q) => wanted.has(q.conversation)),
  }
}
