/**
 * What the importance scorer reads of a dataset and the signal columns it derives: the vocabulary
 * shared by the datasets (generation, import, the leakage audit) and the engine
 * (src/engine/importance), defined here so that data needs nothing from the engine above it.
 */

/** The four signals, in the order of every columnar array and weight vector. */
export const SIGNALS = ['decay', 'surprise', 'relevance', 'habituation'] as const
export type Signal = (typeof SIGNALS)[number]

/** What the scorer needs of one turn. Times are epoch milliseconds; nothing here reads a clock. */
export interface TurnInput {
  readonly timeMs: number
  readonly text: string
  /** The turn's prediction error in [0, 1], as measured upstream (e.g. 1 - p(turn | context)). */
  readonly surprise: number
  /** The query the turn is scored against (the question the agent is answering). */
  readonly query: string
}

export interface ImportanceInput {
  /** Ages are measured from here, never from the wall clock. */
  readonly referenceTimeMs: number
  readonly turns: readonly TurnInput[]
}

/** The four signals as parallel columns (one entry per turn), plus what budgets need. */
export interface SignalColumns {
  readonly n: number
  readonly decay: Float64Array
  readonly surprise: Float64Array
  readonly relevance: Float64Array
  readonly habituation: Float64Array
  readonly ageHours: Float64Array
  readonly tokens: Float64Array
}

export const MS_PER_HOUR = 3_600_000
