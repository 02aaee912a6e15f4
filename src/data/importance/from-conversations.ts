import {basename} from 'node:path'
import {InputError} from '../../util/errors.js'
import {TfIdfModel, cosine} from '../text/tfidf.js'
import type {MemoryDataset, Turn} from '../conversations/types.js'
import {SCORED_CATEGORIES} from '../conversations/types.js'
import {DATASET_FORMAT_VERSION, parseDataset, type Dataset, type DatasetTurn} from './dataset.js'

/**
 * Importance labels for a real conversation from its benchmark questions: a turn matters as much
 * as the questions that need it. truth = 1 - exp(-c), with c the number of scored questions
 * (LoCoMo categories 1-4) that cite the turn as evidence: 0 for an uncited turn, 0.63 for one
 * citation, 0.86 for two, saturating towards 1.
 *
 * The signals must not see those questions, or they would leak the label:
 * - surprise is novelty, 1 - the highest TF-IDF cosine to the NOVELTY_WINDOW previous turns (a
 *   prediction-error proxy: how little the recent context predicted this turn);
 * - the query a turn is scored against is the next turn of its session (the previous one for a
 *   session's last turn): whether the conversation takes the turn up.
 */
const NOVELTY_WINDOW = 10

export interface ConversationImportOptions {
  readonly conversation?: string
  readonly id?: string
}

export function importanceFromConversation(data: MemoryDataset, o: ConversationImportOptions = {}): Dataset {
  const ids = data.conversations.map((c) => c.id)
  const conv =
    o.conversation === undefined ? data.conversations[0] : data.conversations.find((c) => c.id === o.conversation)
  if (!conv)
    throw new InputError(`${data.source}: conversation`, `one of ${ids.join(', ')}`, JSON.stringify(o.conversation))
  const citations = new Map<string, number>()
  for (const q of data.questions)
    if (q.conversation === conv.id && SCORED_CATEGORIES.includes(q.category))
      for (const e of new Set(q.evidence)) citations.set(e, (citations.get(e) ?? 0) + 1)

  const turns = conv.turns.filter((t): t is Turn & {time: number} => t.time !== null && t.text.trim() !== '')
  if (turns.length < 2)
    throw new InputError(`${data.source}: ${conv.id}`, 'at least two dated turns with text', String(turns.length))
  const model = new TfIdfModel(turns.map((t) => t.text))
  const vectors = turns.map((t) => model.vectorize(t.text))
  const queries: Array<{id: string; text: string}> = []
  const rows: DatasetTurn[] = turns.map((t, i) => {
    let surprise = 1
    for (let j = Math.max(0, i - NOVELTY_WINDOW); j < i; j++)
      surprise = Math.min(surprise, 1 - cosine(vectors[i], vectors[j]))
    const next =
      turns[i + 1]?.session === t.session ? turns[i + 1] : turns[i - 1]?.session === t.session ? turns[i - 1] : t
    const queryId = `q${queries.length + 1}`
    queries.push({id: queryId, text: next.text})
    return {
      id: t.id,
      time: iso(t.time),
      text: t.text,
      surprise: round(surprise),
      query: queryId,
      truth: round(1 - Math.exp(-(citations.get(t.id) ?? 0))),
    }
  })
  const latest = Math.max(...turns.map((t) => t.time))
  return parseDataset(
    {
      kt_dataset: DATASET_FORMAT_VERSION,
      id: o.id ?? `${conv.id}-importance`,
      description: `Real conversation ${conv.id} from ${basename(data.source)}: truth = 1 - exp(-citations by scored questions); surprise = novelty against the previous ${NOVELTY_WINDOW} turns; query = the adjacent turn of the session.`,
      reference_time: iso(latest),
      generator: null,
      queries,
      turns: rows,
    } satisfies Dataset,
    data.source,
  )
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z')
}

/** Four decimals, as in the synthetic fixtures. */
function round(x: number): number {
  return Math.round(x * 1e4) / 1e4
}
