/**
 * "Did you mean": the closest known word to a mistyped one, by Damerau-Levenshtein distance
 * (optimal string alignment: insertions, deletions, substitutions and swaps of two neighbours
 * each cost 1; Damerau 1964), the edit model of most typing slips.
 */

/** Edit distance with adjacent transpositions (optimal string alignment). */
export function damerauLevenshtein(a: string, b: string): number {
  const n = a.length
  const m = b.length
  if (n === 0) return m
  if (m === 0) return n
  // three rolling rows: i-2, i-1, i
  let prev2 = new Array<number>(m + 1).fill(0)
  let prev = Array.from({length: m + 1}, (_, j) => j)
  let row = new Array<number>(m + 1).fill(0)
  for (let i = 1; i <= n; i++) {
    row[0] = i
    for (let j = 1; j <= m; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let d = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2] + 1)
      row[j] = d
    }
    ;[prev2, prev, row] = [prev, row, prev2]
  }
  return prev[m]
}

/**
 * Largest distance still offered as a suggestion: a third of the typed word's length (at least 1,
 * at most 3), so "retreival" finds "retrieval" but "xyz" is not turned into "run".
 */
function maxSuggestionDistance(word: string): number {
  return Math.max(1, Math.min(3, Math.floor(word.length / 3)))
}

/** The known word closest to `word` within maxSuggestionDistance (case-insensitive; ties: the first listed), or undefined. */
export function closest(word: string, known: Iterable<string>): string | undefined {
  const w = word.toLowerCase()
  let best: string | undefined
  let bestDistance = maxSuggestionDistance(word) + 1
  for (const k of known) {
    const d = damerauLevenshtein(w, k.toLowerCase())
    if (d < bestDistance) {
      best = k
      bestDistance = d
    }
  }
  return best
}

/** ` (did you mean "X"?)` or an empty string. */
export function didYouMean(word: string, known: Iterable<string>): string {
  const k = closest(word, known)
  return k === undefined || k === word ? '' : ` (did you mean "${k}"?)`
}
