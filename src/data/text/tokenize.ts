/**
 * Text normalisation shared by the importance signals: lower-case word tokens, with a small
 * English stop list so that function words do not make every turn look alike.
 */
const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu

/**
 * Stop words of the importance signals: a short subset of the SMART stop list (Salton 1971),
 * negations included, since novelty and overlap are about topics. Not retrieval's list
 * (engine/retrieval/tokenize.ts RETRIEVAL_STOP_WORDS): each engine's scores and reports are fixed by its own.
 */
const IMPORTANCE_STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a an and are as at be but by do does for from had has have he her his i if in into is it its me my no not of on or ' +
    'our she so that the their them then there these they this to was we were what when where which who will with you your ' +
    'ok okay yes yeah just also about can could would should did been being am'
  ).split(' '),
)

function tokenize(text: string): string[] {
  return (text.toLowerCase().match(WORD) ?? []).map((t) => t.replace(/['’]s$/, ''))
}

/** Content tokens: tokens without stop words. */
export function contentTokens(text: string): string[] {
  return tokenize(text).filter((t) => !IMPORTANCE_STOP_WORDS.has(t))
}

/**
 * Token count used for budgets: about four characters per token, the rule of thumb that OpenAI
 * documents for English text with its tokenizers; at least one token for a non-empty text.
 */
const CHARS_PER_TOKEN = 4

export function estimateTokens(text: string): number {
  return text.length === 0 ? 0 : Math.max(1, Math.ceil(text.length / CHARS_PER_TOKEN))
}
