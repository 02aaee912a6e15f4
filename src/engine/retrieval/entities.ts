import {RETRIEVAL_STOP_WORDS, stem, words} from './tokenize.js'

/**
 * Offline entity extraction by documented rules (no model):
 * - names: capitalised words that the corpus mostly writes capitalised and that occur capitalised
 *   at least once away from the start of a sentence (so "Went" at a sentence start is not a name);
 * - dates: month and weekday names and four-digit years (1900-2099);
 * - numbers: other digit runs;
 * - salient keywords: per turn, the KEYWORDS_PER_TURN rarest content stems that occur in at least
 *   KEYWORD_MIN_DF turns (a keyword in a single turn links nothing) and in at most
 *   KEYWORD_MAX_DF_FRACTION of them (a keyword everywhere says nothing).
 * Entities are keyed `kind:value` with a lower-case value (`name:caroline`, `date:2023`,
 * `num:3`, `kw:adopt`), which is also how query words are looked up.
 */

const KEYWORDS_PER_TURN = 3
const KEYWORD_MIN_DF = 2
const KEYWORD_MAX_DF_FRACTION = 0.05

const MONTH_WORDS: ReadonlySet<string> = new Set(
  'january february march april may june july august september october november december'.split(' '),
)
const WEEKDAY_WORDS: ReadonlySet<string> = new Set(
  'monday tuesday wednesday thursday friday saturday sunday'.split(' '),
)
const YEAR = /^(19|20)\d\d$/
const DIGITS = /^\d+$/
/** A capitalised word with its position; possessives removed. */
const CAPITALISED_WORD = /[A-Za-z][A-Za-z'\u2019]*/g
const SENTENCE_END = /[.!?"\u201c\u201d:;(\n]\s*$/

/** Word runs with their original case (month names count only when capitalised: "May" vs "may"). */
const CASED_WORD = /[A-Za-z0-9]+/g

/** The date or number entity of one word with its original case, if any. */
function ruleEntity(raw: string): string | undefined {
  const w = raw.toLowerCase()
  const capitalised = raw[0] >= 'A' && raw[0] <= 'Z'
  if ((capitalised && (MONTH_WORDS.has(w) || WEEKDAY_WORDS.has(w))) || YEAR.test(w)) return `date:${w}`
  if (DIGITS.test(w)) return `num:${String(Number(w))}`
  return undefined
}

/** Entity keys found in one text by the fixed rules (dates, numbers); names need the corpus. */
function ruleEntities(text: string): string[] {
  const out: string[] = []
  for (const m of text.matchAll(CASED_WORD)) {
    const e = ruleEntity(m[0])
    if (e !== undefined) pushUnique(out, e)
  }
  return out
}

/** Lower-case capitalised words of a text, each flagged if it starts a sentence. */
function capitalisedWords(text: string): Array<{word: string; initial: boolean; capital: boolean}> {
  const out: Array<{word: string; initial: boolean; capital: boolean}> = []
  for (const m of text.matchAll(CAPITALISED_WORD)) {
    const raw = m[0].replace(/['\u2019]s$/, '').replace(/['\u2019]/g, '')
    const before = text.slice(Math.max(0, m.index - 3), m.index)
    out.push({
      word: raw.toLowerCase(),
      initial: m.index === 0 || SENTENCE_END.test(before),
      capital: raw[0] >= 'A' && raw[0] <= 'Z',
    })
  }
  return out
}

/** The corpus's name vocabulary (lower-case), by the capitalisation rule above, plus speakers. */
function nameVocabulary(texts: readonly string[], speakers: readonly string[]): Set<string> {
  const capitalMid = new Map<string, number>()
  const capital = new Map<string, number>()
  const lower = new Map<string, number>()
  for (const text of texts) {
    for (const {word, initial, capital: isCapital} of capitalisedWords(text)) {
      if (isCapital) {
        capital.set(word, (capital.get(word) ?? 0) + 1)
        if (!initial) capitalMid.set(word, (capitalMid.get(word) ?? 0) + 1)
      } else lower.set(word, (lower.get(word) ?? 0) + 1)
    }
  }
  const names = new Set<string>()
  for (const [word, mid] of capitalMid) {
    if (
      mid < 1 ||
      word.length < 2 ||
      RETRIEVAL_STOP_WORDS.has(word) ||
      MONTH_WORDS.has(word) ||
      WEEKDAY_WORDS.has(word)
    )
      continue
    if ((lower.get(word) ?? 0) < (capital.get(word) ?? 0)) names.add(word)
  }
  for (const s of speakers) for (const w of words(s)) if (w.length >= 2 && !RETRIEVAL_STOP_WORDS.has(w)) names.add(w)
  return names
}

/** Name entities of a text given the corpus's name vocabulary. */
function nameEntities(text: string, names: ReadonlySet<string>): string[] {
  const out: string[] = []
  for (const w of words(text)) if (names.has(w)) pushUnique(out, `name:${w}`)
  return out
}

/**
 * Entities of every turn: names, dates, numbers and salient keywords. `termsOf[i]` are the
 * turn's content stems (shared with BM25 so the corpus is tokenised once).
 */
export function extractEntities(
  texts: readonly string[],
  termsOf: readonly (readonly string[])[],
  speakers: readonly string[],
): string[][] {
  const names = nameVocabulary(texts, speakers)
  const df = new Map<string, number>()
  for (const terms of termsOf) for (const t of new Set(terms)) df.set(t, (df.get(t) ?? 0) + 1)
  const maxDf = Math.max(KEYWORD_MIN_DF, Math.floor(KEYWORD_MAX_DF_FRACTION * texts.length))
  const nameStems = new Set([...names].map(stem))
  return texts.map((text, i) => {
    const entities = [...nameEntities(text, names), ...ruleEntities(text)]
    const candidates = [...new Set(termsOf[i])].filter((t) => {
      const f = df.get(t) ?? 0
      return f >= KEYWORD_MIN_DF && f <= maxDf && !nameStems.has(t) && !DIGITS.test(t)
    })
    // Rarest first; ties by the stem itself so extraction is deterministic.
    candidates.sort((a, b) => (df.get(a) as number) - (df.get(b) as number) || (a < b ? -1 : a > b ? 1 : 0))
    for (const t of candidates.slice(0, KEYWORDS_PER_TURN)) entities.push(`kw:${t}`)
    return entities
  })
}

/** Entity keys a query could name: every query word as a name, date or number, and its stem as a keyword. */
export function queryEntityKeys(query: string): string[] {
  const out: string[] = []
  for (const m of query.replace(/['\u2019]s\b/g, '').matchAll(CASED_WORD)) {
    const w = m[0].toLowerCase()
    if (RETRIEVAL_STOP_WORDS.has(w)) continue
    const e = ruleEntity(m[0])
    if (e !== undefined) pushUnique(out, e)
    else {
      pushUnique(out, `name:${w}`)
      pushUnique(out, `kw:${stem(w)}`)
    }
  }
  return out
}

function pushUnique(list: string[], item: string): void {
  if (!list.includes(item)) list.push(item)
}
