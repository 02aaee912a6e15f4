import {stemmer} from 'stemmer'

/**
 * Tokenisation shared by every text signal: lower-case alphanumeric runs (a possessive "'s" is
 * dropped), English stop words removed, Porter stems (Porter 1980, via the `stemmer` package).
 */

/**
 * Stop words of retrieval (BM25, vectors, entities): the Snowball English stop list
 * (snowball.tartarus.org/algorithms/english/stop.txt) without its negations, which can decide a
 * memory question ("not", "no"), plus chat fillers. Not the importance signals' list
 * (data/text/tokenize.ts IMPORTANCE_STOP_WORDS): each engine's scores and reports are fixed by its own.
 */
export const RETRIEVAL_STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself ' +
    'it its itself they them their theirs themselves what which who whom this that these those am is are was were be ' +
    'been being have has had having do does did doing would should could ought a an the and but if or because as until ' +
    'while of at by for with about against between into through during before after above below to from up down in out ' +
    'on off over under again further then once here there when where why how all any both each few more most other some ' +
    'such only own same so than too very can will just s t d ll m re ve y don shouldn now im ive youre thats its ' +
    'oh hey hi yeah yes wow really thanks thank ok okay um uh also'
  ).split(/\s+/),
)

const WORD = /[a-z0-9]+/g
const POSSESSIVE = /['\u2019]s\b/g
const APOSTROPHE = /['\u2019]/g

/** Lower-case words of a text (possessives and apostrophes removed), stop words kept. */
export function words(text: string): string[] {
  return text.toLowerCase().replace(POSSESSIVE, '').replace(APOSTROPHE, '').match(WORD) ?? []
}

const stemCache = new Map<string, string>()
/** Bound on the stem cache so a long-running process cannot grow it without limit. */
const STEM_CACHE_LIMIT = 200_000

/** Porter stem of a lower-case word, cached (stemming dominates tokenisation time). */
export function stem(word: string): string {
  let s = stemCache.get(word)
  if (s === undefined) {
    s = stemmer(word)
    if (stemCache.size >= STEM_CACHE_LIMIT) stemCache.clear()
    stemCache.set(word, s)
  }
  return s
}

/** Content terms of a text: stems of its words that are not stop words. */
export function terms(text: string): string[] {
  const out: string[] = []
  for (const w of words(text)) if (!RETRIEVAL_STOP_WORDS.has(w)) out.push(stem(w))
  return out
}
