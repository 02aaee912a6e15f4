/**
 * The confidence level of intervals as reports print it ("95%", "80%", "97.5%"), always read from
 * the intervals themselves (each records the plan's bootstrap.confidence), never typed in.
 */
export function confidenceLabel(confidence: number): string {
  return `${Number((100 * confidence).toFixed(1))}%`
}

/**
 * The one confidence level a set of intervals shares, as a label; "mixed levels" when they differ
 * (a report edited by hand; kt gives every interval of a run the plan's level).
 */
export function sharedConfidenceLabel(intervals: ReadonlyArray<{readonly confidence: number}>): string {
  const levels = [...new Set(intervals.map((i) => i.confidence))]
  return levels.length === 1 ? confidenceLabel(levels[0]) : 'mixed levels'
}
