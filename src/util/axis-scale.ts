/**
 * When an axis goes logarithmic. A linear axis over values that span several decades squeezes all
 * but the largest into one corner (the LoCoMo front: every front point near 0.06 ms against one
 * trial at 2.3 ms), so:
 * - more than LOG_SPAN_RATIO (two decades) between the smallest and largest positive value: log;
 * - or more than SKEW_SPAN_RATIO (one decade) with the median in the lowest SKEW_MEDIAN_SHARE of
 *   the linear range: a few outliers would otherwise flatten the rest, so log as well.
 * Zero or negative values cannot go on a log axis: linear then.
 */
const LOG_SPAN_RATIO = 100
const SKEW_SPAN_RATIO = 10
const SKEW_MEDIAN_SHARE = 0.1

export function useLogScale(values: ReadonlyArray<number | null | undefined>): boolean {
  // one pass for the range; the median (a sort) only when the span leaves the rule undecided (the dashboard calls this on 10,000-trial columns)
  let n = 0
  let lo = Infinity
  let hi = -Infinity
  for (const x of values) {
    if (typeof x !== 'number' || !Number.isFinite(x)) continue
    n++
    if (x < lo) lo = x
    if (x > hi) hi = x
  }
  if (n < 2 || lo <= 0) return false
  if (hi / lo > LOG_SPAN_RATIO) return true
  if (!(hi / lo > SKEW_SPAN_RATIO)) return false
  const v = new Float64Array(n)
  let k = 0
  for (const x of values) if (typeof x === 'number' && Number.isFinite(x)) v[k++] = x
  v.sort()
  const median = v[Math.floor((n - 1) / 2)]
  return (median - lo) / (hi - lo) < SKEW_MEDIAN_SHARE
}

/** Pixels a log axis extends past the data at each end (instead of rounding out to whole decades, which can leave most of the axis empty). */
const LOG_AXIS_PADDING_PX = 14

/** A vega-lite scale for these values: log by the rule above (a linear one without zero, so the data fill the axis). */
export function axisScale(
  values: ReadonlyArray<number | null | undefined>,
): {type: 'log'; nice: false; padding: number} | {type: 'linear'; zero: false} {
  return useLogScale(values) ? {type: 'log', nice: false, padding: LOG_AXIS_PADDING_PX} : {type: 'linear', zero: false}
}

/** The axis title's note on the scale, so a reader knows when it is logarithmic. */
export function scaleNote(scale: {type: string}): string {
  return scale.type === 'log' ? ', log scale' : ''
}
