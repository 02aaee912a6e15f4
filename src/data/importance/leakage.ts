import {functionalDependence, looCorrelationRatio} from '../../stats/dependence.js'
import {spearman} from '../../stats/correlation.js'
import {SIGNALS, type Signal, type SignalColumns} from './input.js'

/**
 * A signal whose variance is this much explained by a function of the label is treated as
 * derived from the label: it would score well in any study because it *is* the answer.
 */
export const LEAKAGE_DEPENDENCE_THRESHOLD = 0.95

export type LeakageVerdict = 'ok' | 'leak' | 'constant'

export interface SignalAudit {
  readonly signal: Signal
  readonly verdict: LeakageVerdict
  /** Share of the signal's variance explained by a function of the label (null: constant signal). */
  readonly dependence: number | null
  readonly spearman: number | null
  readonly reason: string
}

/**
 * Share of a signal's variance a function of the label explains: the larger of the successive-
 * difference estimate (functionalDependence; any label) and the leave-one-out correlation ratio
 * over the label's tie groups (looCorrelationRatio; labels with few distinct values, where the
 * first charges every jump between levels and so misses exact copies of small samples). Null when
 * neither is defined (a constant signal).
 */
export function labelDependence(truth: ArrayLike<number>, values: ArrayLike<number>): number | null {
  const smooth = functionalDependence(truth, values)
  const grouped = looCorrelationRatio(truth, values)
  if (smooth === null) return grouped === null ? null : Math.max(grouped, 0)
  return grouped === null ? smooth : Math.max(smooth, grouped)
}

/** Flags each signal that is (nearly) a function of the label, and each constant signal. */
export function auditLeakage(columns: SignalColumns, truth: ArrayLike<number>): SignalAudit[] {
  return SIGNALS.map((signal) => {
    const values = columns[signal]
    const dependence = labelDependence(truth, values)
    const rho = spearman(values, truth)
    if (dependence === null)
      return {signal, verdict: 'constant', dependence, spearman: rho, reason: 'constant signal: it cannot rank turns, and its correlation is undefined'}
    if (dependence >= LEAKAGE_DEPENDENCE_THRESHOLD)
      return {signal, verdict: 'leak', dependence, spearman: rho,
        reason: `${fmt(dependence)} of its variance is a function of the label (threshold ${LEAKAGE_DEPENDENCE_THRESHOLD}): it is probably computed from the label`}
    return {signal, verdict: 'ok', dependence, spearman: rho, reason: `${fmt(dependence)} of its variance is explained by the label`}
  })
}

function fmt(x: number): string {
  return `${(x * 100).toFixed(1)}%`
}
