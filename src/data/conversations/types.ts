/**
 * Conversational memory data as kt uses it, whatever the input format (LoCoMo JSON, JSONL turns,
 * CSV): conversations made of sessions of turns, plus questions with gold evidence turn ids.
 */

/** One utterance. `time` is milliseconds since the Unix epoch (UTC), or null when unknown. */
export interface Turn {
  readonly id: string
  readonly session: string
  readonly speaker: string
  readonly time: number | null
  readonly text: string
  /** Caption of an image the speaker shared with this turn (LoCoMo's `blip_caption`), if any. */
  readonly caption?: string
}

/** A session, in conversation order. `time` as for turns. */
export interface Session {
  readonly id: string
  readonly time: number | null
}

export interface Conversation {
  readonly id: string
  /** Sessions in conversation order. */
  readonly sessions: readonly Session[]
  /** Turns in conversation order (session by session). */
  readonly turns: readonly Turn[]
}

/**
 * Question categories as the LoCoMo paper and code number them: 1 multi-hop, 2 temporal,
 * 3 open-domain, 4 single-hop, 5 adversarial (see ../shared/locomo/README.md).
 */
export const QUESTION_CATEGORIES = ['multi-hop', 'temporal', 'open-domain', 'single-hop', 'adversarial'] as const
export type QuestionCategory = (typeof QUESTION_CATEGORIES)[number]

/** The categories retrieval is scored on (adversarial questions have no evidence to find). */
export const SCORED_CATEGORIES: readonly QuestionCategory[] = ['single-hop', 'multi-hop', 'temporal', 'open-domain']

/** LoCoMo's numeric category code (1..5) to its name. */
export function categoryFromCode(code: number): QuestionCategory | undefined {
  return Number.isInteger(code) && code >= 1 && code <= QUESTION_CATEGORIES.length
    ? QUESTION_CATEGORIES[code - 1]
    : undefined
}

export interface Question {
  /** Unique within the dataset, e.g. `conv-26/q12`. */
  readonly id: string
  readonly conversation: string
  readonly text: string
  readonly answer?: string
  /** Normalised turn ids, each present in the conversation. */
  readonly evidence: readonly string[]
  readonly category: QuestionCategory
}

/** Things skipped or repaired while loading, counted by kind (never silently dropped). */
export type LoadWarnings = Record<string, number>

export interface MemoryDataset {
  readonly source: string
  readonly format: 'locomo' | 'jsonl' | 'csv'
  readonly conversations: readonly Conversation[]
  readonly questions: readonly Question[]
  readonly warnings: LoadWarnings
  /** A few examples of what could not be normalised, for the report. */
  readonly warningExamples: readonly string[]
}

/** Adds one to a named warning counter. */
export function countWarning(warnings: LoadWarnings, kind: string, by = 1): void {
  warnings[kind] = (warnings[kind] ?? 0) + by
}
