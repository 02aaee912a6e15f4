import {InputError, describeValue} from '../../util/errors.js'
import {normaliseEvidence} from './evidence.js'
import {EPOCH_DESCRIPTION, parseTime} from './dates.js'
import {
  QUESTION_CATEGORIES,
  categoryFromCode,
  countWarning,
  type Conversation,
  type LoadWarnings,
  type Question,
  type QuestionCategory,
  type Session,
  type Turn,
} from './types.js'

/** Conversation id used when turn records do not name one. */
const DEFAULT_CONVERSATION = 'default'

/** Fields of a flat turn record (JSONL line or CSV row). */
export const TURN_FIELDS = ['id', 'session', 'speaker', 'time', 'text', 'conversation'] as const
export type TurnField = (typeof TURN_FIELDS)[number]

/**
 * Collects flat turn records (from JSONL or CSV) into conversations, checking each field and
 * naming the file, line and field of the first bad one.
 */
export class TurnCollector {
  private readonly conversations = new Map<
    string,
    {sessions: Map<string, {time: number | null}>; turns: Turn[]; ids: Set<string>}
  >()

  /** `where` is `file:line`. `get` reads a field of the record. */
  add(where: string, get: (field: TurnField) => unknown): void {
    const id = readId(where, 'id', get('id'))
    const session = readId(where, 'session', get('session'))
    const rawConversation = get('conversation')
    const conversation =
      rawConversation === undefined || rawConversation === null || rawConversation === ''
        ? DEFAULT_CONVERSATION
        : readId(where, 'conversation', rawConversation)
    const speaker = get('speaker') ?? ''
    if (typeof speaker !== 'string') throw new InputError(`${where}: speaker`, 'a string', describeValue(speaker))
    const text = get('text')
    if (typeof text !== 'string') throw new InputError(`${where}: text`, 'a string', describeValue(text))
    const rawTime = get('time')
    let time: number | null = null
    if (rawTime !== undefined && rawTime !== null && rawTime !== '') {
      const parsed = parseTime(rawTime)
      if (parsed === undefined)
        throw new InputError(
          `${where}: time`,
          `a date (ISO 8601, "1:56 pm on 8 May, 2023", or ${EPOCH_DESCRIPTION})`,
          describeValue(rawTime),
        )
      time = parsed
    }
    let conv = this.conversations.get(conversation)
    if (!conv) {
      conv = {sessions: new Map(), turns: [], ids: new Set()}
      this.conversations.set(conversation, conv)
    }
    if (conv.ids.has(id))
      throw new InputError(`${where}: id`, 'an id not used before in this conversation', describeValue(id))
    conv.ids.add(id)
    const known = conv.sessions.get(session)
    // A session's time is its earliest turn's time.
    if (!known) conv.sessions.set(session, {time})
    else if (time !== null && (known.time === null || time < known.time)) known.time = time
    conv.turns.push({id, session, speaker, time, text})
  }

  /** Conversations with turns grouped session by session, sessions in order of first appearance. */
  finish(file: string): Conversation[] {
    if (this.conversations.size === 0) throw new InputError(file, 'at least one turn', 'none')
    const out: Conversation[] = []
    for (const [id, conv] of this.conversations) {
      const sessions: Session[] = [...conv.sessions].map(([sid, s]) => ({id: sid, time: s.time}))
      const order = new Map(sessions.map((s, i) => [s.id, i]))
      // Stable sort keeps the file's order of turns within a session.
      const turns = [...conv.turns].sort((a, b) => (order.get(a.session) as number) - (order.get(b.session) as number))
      out.push({id, sessions, turns})
    }
    return out
  }
}

function readId(where: string, field: string, value: unknown): string {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  if (typeof value !== 'string' || value.trim() === '')
    throw new InputError(`${where}: ${field}`, 'a non-empty id', describeValue(value))
  return value.trim()
}

/** Reads a question category given as a LoCoMo code (1..5) or a name ("multi-hop"). */
function readCategory(where: string, value: unknown): QuestionCategory {
  const fromCode =
    typeof value === 'number'
      ? categoryFromCode(value)
      : typeof value === 'string' && /^\d+$/.test(value.trim())
        ? categoryFromCode(Number(value))
        : undefined
  if (fromCode) return fromCode
  if (typeof value === 'string' && (QUESTION_CATEGORIES as readonly string[]).includes(value.trim()))
    return value.trim() as QuestionCategory
  throw new InputError(
    `${where}: category`,
    `a LoCoMo code 1..5 or one of ${QUESTION_CATEGORIES.join(', ')}`,
    describeValue(value),
  )
}

/**
 * Reads one question record `{id?, conversation?, question, answer?, evidence, category}` and
 * resolves its evidence against the conversations' turn ids (repaired ids and ids naming no turn
 * are counted in `warnings`).
 */
export function readQuestionRecord(
  where: string,
  record: Record<string, unknown>,
  index: number,
  turnIds: ReadonlyMap<string, ReadonlySet<string>>,
  warnings: LoadWarnings,
): Question {
  const text = record.question
  if (typeof text !== 'string' || text.trim() === '')
    throw new InputError(`${where}: question`, 'a non-empty string', describeValue(text))
  const conversation =
    record.conversation === undefined ? DEFAULT_CONVERSATION : readId(where, 'conversation', record.conversation)
  const ids = turnIds.get(conversation)
  if (!ids) throw new InputError(`${where}: conversation`, 'a conversation that has turns', describeValue(conversation))
  const category = readCategory(where, record.category)
  const raw = record.evidence ?? []
  const list = typeof raw === 'string' ? [raw] : raw
  if (!Array.isArray(list)) throw new InputError(`${where}: evidence`, 'a list of turn ids', describeValue(raw))
  const evidence: string[] = []
  for (const e of list) {
    if (typeof e !== 'string' && typeof e !== 'number')
      throw new InputError(`${where}: evidence`, 'turn id strings', describeValue(e))
    const idText = String(e).trim()
    // Exact ids first (any id scheme); LoCoMo-style ids are repaired if they do not match as given.
    const candidates = ids.has(idText) ? [idText] : normaliseEvidence(idText).ids
    if (candidates.length === 0 || candidates.some((c) => !ids.has(c)))
      countWarning(warnings, 'evidence ids naming no turn')
    else if (candidates[0] !== idText) countWarning(warnings, 'evidence ids repaired')
    for (const c of candidates) if (ids.has(c) && !evidence.includes(c)) evidence.push(c)
  }
  const id = record.id === undefined ? `${conversation}/q${index}` : readId(where, 'id', record.id)
  const answer = record.answer
  return {
    id,
    conversation,
    text,
    ...(answer === undefined || answer === null ? {} : {answer: String(answer)}),
    evidence,
    category,
  }
}

/** Turn ids per conversation, for resolving evidence. */
export function turnIdsByConversation(conversations: readonly Conversation[]): Map<string, Set<string>> {
  return new Map(conversations.map((c) => [c.id, new Set(c.turns.map((t) => t.id))]))
}
