import type {MemoryDataset, QuestionCategory} from '../data/conversations/types.js'

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
    else queries.push({id: q.id, conversation: q.conversation, text: q.text, category: q.category, evidence: q.evidence})
  }
  return {queries, skipped: {adversarial, no_evidence: noEvidence}}
}
