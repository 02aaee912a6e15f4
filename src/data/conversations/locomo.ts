import {InputError, describeValue} from '../../util/errors.js'
import {parseLocomoDate, parseTime} from './dates.js'
import {normaliseEvidence} from './evidence.js'
import {formatJsonPath, locate, type JsonPath} from './json-locate.js'
import {
  categoryFromCode,
  countWarning,
  type Conversation,
  type LoadWarnings,
  type MemoryDataset,
  type Question,
  type Session,
  type Turn,
} from './types.js'

/** `session_<N>` keys of a LoCoMo conversation object. */
const SESSION_KEY = /^session_(\d+)$/
const SESSION_DATE_SUFFIX = '_date_time'
/** How many unresolved evidence strings a dataset keeps as examples for the report. */
const MAX_WARNING_EXAMPLES = 10

/**
 * Reads LoCoMo JSON as published (a list of samples; see ../shared/locomo/README.md). Malformed
 * evidence ids are repaired where possible and counted where not; structural problems (a missing
 * id, a text that is not a string, an unparseable session date) throw a one-line InputError that
 * names the file, the line and the field.
 */
export function parseLocomo(file: string, text: string, data: unknown): MemoryDataset {
  const fail = (path: JsonPath, expected: string, got: unknown): never => {
    throw new InputError(
      `${locate(file, text, path)}: ${formatJsonPath(path) || '(top level)'}`,
      expected,
      describeValue(got),
    )
  }
  const samples = Array.isArray(data)
    ? data
    : isObject(data) && 'conversation' in data
      ? [data]
      : fail([], 'a LoCoMo list of samples', data)
  const warnings: LoadWarnings = {}
  const examples: string[] = []
  const conversations: Conversation[] = []
  const questions: Question[] = []
  const sampleIds = new Set<string>()
  samples.forEach((sample: unknown, s: number) => {
    if (!isObject(sample)) fail([s], 'a sample object', sample)
    const sampleObj = sample as Record<string, unknown>
    const id = sampleObj.sample_id
    if (typeof id !== 'string' || id.trim() === '') fail([s, 'sample_id'], 'a non-empty string', id)
    if (sampleIds.has(id as string)) fail([s, 'sample_id'], 'a sample_id not used before', id)
    sampleIds.add(id as string)
    const conversation = readConversation(id as string, sampleObj.conversation, [s, 'conversation'], fail, warnings)
    conversations.push(conversation)
    const turnIds = new Set(conversation.turns.map((t) => t.id))
    const qa = sampleObj.qa ?? []
    if (!Array.isArray(qa)) fail([s, 'qa'], 'a list of questions', qa)
    ;(qa as unknown[]).forEach((q, i) => {
      const question = readQuestion(id as string, q, i, [s, 'qa', i], fail, turnIds, warnings, examples)
      questions.push(question)
    })
  })
  return {source: file, format: 'locomo', conversations, questions, warnings, warningExamples: examples}
}

type Fail = (path: JsonPath, expected: string, got: unknown) => never

function readConversation(id: string, raw: unknown, path: JsonPath, fail: Fail, warnings: LoadWarnings): Conversation {
  if (!isObject(raw)) fail(path, 'a conversation object', raw)
  const obj = raw as Record<string, unknown>
  const sessionNumbers = Object.keys(obj)
    .map((k) => SESSION_KEY.exec(k))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b)
  for (const key of Object.keys(obj)) {
    if (key.endsWith(SESSION_DATE_SUFFIX) && !(key.slice(0, -SESSION_DATE_SUFFIX.length) in obj))
      countWarning(warnings, 'session dates without a session')
  }
  const sessions: Session[] = []
  const turns: Turn[] = []
  const seen = new Set<string>()
  for (const n of sessionNumbers) {
    const key = `session_${n}`
    const list = obj[key]
    if (!Array.isArray(list)) fail([...path, key], 'a list of turns', list)
    const dateKey = `${key}${SESSION_DATE_SUFFIX}`
    const rawDate = obj[dateKey]
    let time: number | null = null
    if (rawDate === undefined) countWarning(warnings, 'sessions without a date')
    else {
      const parsed = typeof rawDate === 'string' ? (parseLocomoDate(rawDate) ?? parseTime(rawDate)) : undefined
      if (parsed === undefined) fail([...path, dateKey], 'a date like "1:56 pm on 8 May, 2023"', rawDate)
      time = parsed as number
    }
    if ((list as unknown[]).length === 0) {
      countWarning(warnings, 'empty sessions')
      continue
    }
    sessions.push({id: String(n), time})
    ;(list as unknown[]).forEach((t, j) => {
      const turnPath = [...path, key, j]
      if (!isObject(t)) fail(turnPath, 'a turn object', t)
      const turn = t as Record<string, unknown>
      const diaId = turn.dia_id
      if (typeof diaId !== 'string' || diaId.trim() === '') fail([...turnPath, 'dia_id'], 'a non-empty string', diaId)
      const idText = (diaId as string).trim()
      if (seen.has(idText)) fail([...turnPath, 'dia_id'], 'an id not used before in this conversation', diaId)
      seen.add(idText)
      if (typeof turn.text !== 'string') fail([...turnPath, 'text'], 'a string', turn.text)
      if (typeof turn.speaker !== 'string') fail([...turnPath, 'speaker'], 'a string', turn.speaker)
      const caption =
        typeof turn.blip_caption === 'string' && turn.blip_caption.trim() !== '' ? turn.blip_caption : undefined
      turns.push({
        id: idText,
        session: String(n),
        speaker: turn.speaker as string,
        time,
        text: turn.text as string,
        ...(caption ? {caption} : {}),
      })
    })
  }
  if (turns.length === 0) fail(path, 'at least one session with turns', 'none')
  return {id, sessions, turns}
}

function readQuestion(
  conversation: string,
  raw: unknown,
  index: number,
  path: JsonPath,
  fail: Fail,
  turnIds: ReadonlySet<string>,
  warnings: LoadWarnings,
  examples: string[],
): Question {
  if (!isObject(raw)) fail(path, 'a question object', raw)
  const q = raw as Record<string, unknown>
  if (typeof q.question !== 'string' || q.question.trim() === '')
    fail([...path, 'question'], 'a non-empty string', q.question)
  const category = typeof q.category === 'number' ? categoryFromCode(q.category) : undefined
  if (category === undefined) fail([...path, 'category'], 'a LoCoMo category 1..5', q.category)
  const rawEvidence = q.evidence ?? []
  if (!Array.isArray(rawEvidence)) fail([...path, 'evidence'], 'a list of dia_id strings', rawEvidence)
  const evidence: string[] = []
  ;(rawEvidence as unknown[]).forEach((e, k) => {
    if (typeof e !== 'string') fail([...path, 'evidence', k], 'a dia_id string', e)
    const norm = normaliseEvidence(e as string)
    if (norm.repaired) countWarning(warnings, 'evidence ids repaired')
    for (const bad of norm.unreadable) {
      countWarning(warnings, 'evidence ids unreadable')
      if (examples.length < MAX_WARNING_EXAMPLES)
        examples.push(`${conversation} q${index}: unreadable evidence ${JSON.stringify(bad)}`)
    }
    for (const id of norm.ids) {
      if (!turnIds.has(id)) {
        countWarning(warnings, 'evidence ids naming no turn')
        if (examples.length < MAX_WARNING_EXAMPLES)
          examples.push(`${conversation} q${index}: evidence ${id} names no turn`)
      } else if (!evidence.includes(id)) evidence.push(id)
    }
  })
  const answer = q.answer ?? q.adversarial_answer
  return {
    id: `${conversation}/q${index}`,
    conversation,
    text: q.question as string,
    ...(answer === undefined || answer === null ? {} : {answer: String(answer)}),
    evidence,
    category: category as Question['category'],
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
