/**
 * The incumbent rule of hpbandster (and the benchmark contract): walking through evaluations in
 * order, one becomes the incumbent if its budget is larger than the incumbent's, or equal with a
 * lower observed loss; never if its budget is smaller. Failed evaluations are skipped.
 */
export interface Evaluated {
  readonly budget: number
  readonly loss?: number | null
  readonly status: 'ok' | 'failed' | 'running'
}

/** Whether evaluation e, coming after the incumbent inc (undefined: none yet), becomes the incumbent. */
export function replacesIncumbent(e: Evaluated, inc: Evaluated | undefined): boolean {
  if (e.status !== 'ok' || typeof e.loss !== 'number' || !Number.isFinite(e.loss)) return false
  return !inc || e.budget > inc.budget || (e.budget === inc.budget && e.loss < (inc.loss as number))
}

/** Index of the incumbent after each evaluation (-1 while there is none). */
export function incumbentTrace(evaluations: readonly Evaluated[]): Int32Array {
  const trace = new Int32Array(evaluations.length)
  let best = -1
  evaluations.forEach((e, i) => {
    if (replacesIncumbent(e, best >= 0 ? evaluations[best] : undefined)) best = i
    trace[i] = best
  })
  return trace
}

/** The incumbent over all evaluations, or undefined. */
export function incumbent<T extends Evaluated>(evaluations: readonly T[]): T | undefined {
  if (evaluations.length === 0) return undefined
  const i = incumbentTrace(evaluations)[evaluations.length - 1]
  return i >= 0 ? evaluations[i] : undefined
}
