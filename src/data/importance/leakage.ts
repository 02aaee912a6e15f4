import {functionalDependence, looCorrelationRatio, rankCopyDependence, rankDependence} from '../../stats/dependence.js'
import {spearman} from '../../stats/correlation.js'
import {SIGNALS, type Signal, type SignalColumns} from './input.js'

/**
 * A signal whose variance is this much explained by a function of the label is treated as
 * derived from the label: it would score well in any study because it *is* the answer.
 */
export const LEAKAGE_DEPENDENCE_THRESHOLD = 0.95

/** Fewest rows dependence can be estimated on at all (functionalDependence needs 3). */
const DEPENDENCE_MIN_ROWS = 3

/**
 * Fewest rows on which the audit can flag an exact copy of the label whatever the label's
 * distribution: the smallest n whose rank dependence of a copy, rankCopyDependence(n) =
 * 1 - 6 / (n (n + 1)), reaches LEAKAGE_DEPENDENCE_THRESHOLD (11 at 0.95). Below it a signal the
 * audit does not flag gets the verdict 'too-few-rows', never 'ok'.
 */
export const LEAKAGE_MIN_ROWS = minRowsToFlagACopy(LEAKAGE_DEPENDENCE_THRESHOLD)

function minRowsToFlagACopy(threshold: number): number {
  let n = DEPENDENCE_MIN_ROWS
  while (rankCopyDependence(n) < threshold) n++
  return n
}

/** ok: not a function of the label; leak: it (nearly) is; constant: it cannot rank; too-few-rows: the audit cannot tell on so few rows. */
type LeakageVerdict = 'ok' | 'leak' | 'constant' | 'too-few-rows'

export interface SignalAudit {
  readonly signal: Signal
  readonly verdict: LeakageVerdict
  /** Share of the signal's variance explained by a function of the label (null: constant signal, or fewer than 3 rows). */
  readonly dependence: number | null
  readonly spearman: number | null
  readonly reason: string
}

/**
 * Share of a signal's variance a function of the label explains: the largest of
 * - the successive-difference estimate (functionalDependence; any label),
 * - the same on the signal's ranks (rankDependence; a heavy-tailed label, where the raw estimate
 *   charges the few big gaps between sorted labels as residual and misses an exact copy of 20-30
 *   Pareto labels; a monotone copy scores 1 - 6 / (n (n + 1)) on ranks at any n), and
 * - the leave-one-out correlation ratio over the label's tie groups (looCorrelationRatio; labels
 *   with few distinct values, where the first two charge every jump between levels).
 * Each is near 0 (it can dip below) for a signal independent of the label, and the largest keeps the false-alarm rate
 * low (test/stats/dependence.test.ts measures it). Null when none is defined (a constant signal,
 * or fewer than 3 rows).
 */
export function labelDependence(truth: ArrayLike<number>, values: ArrayLike<number>): number | null {
  const estimates = [
    functionalDependence(truth, values),
    rankDependence(truth, values),
    looCorrelationRatio(truth, values),
  ].filter((e): e is number => e !== null)
  return estimates.length === 0 ? null : Math.max(...estimates)
}

/** Flags each signal that is (nearly) a function of the label, each constant signal, and says when there are too few rows to tell. */
export function auditLeakage(columns: SignalColumns, truth: ArrayLike<number>): SignalAudit[] {
  return SIGNALS.map((signal) => {
    const values = columns[signal]
    const n = values.length
    const rho = spearman(values, truth)
    if (isConstant(values))
      return {
        signal,
        verdict: 'constant',
        dependence: null,
        spearman: rho,
        reason: 'constant signal: it cannot rank turns, and its correlation is undefined',
      }
    const dependence = labelDependence(truth, values)
    if (dependence !== null && dependence >= LEAKAGE_DEPENDENCE_THRESHOLD)
      return {
        signal,
        verdict: 'leak',
        dependence,
        spearman: rho,
        reason: `${fmt(dependence)} of its variance is a function of the label (threshold ${LEAKAGE_DEPENDENCE_THRESHOLD}): it is probably computed from the label`,
      }
    if (n < LEAKAGE_MIN_ROWS)
      return {
        signal,
        verdict: 'too-few-rows',
        dependence,
        spearman: rho,
        reason:
          n < DEPENDENCE_MIN_ROWS
            ? `${n} row(s): dependence on the label is undefined below ${DEPENDENCE_MIN_ROWS} rows, so the audit cannot tell whether this signal is computed from the label`
            : `${n} rows: even an exact copy of the label may explain only ${fmt(rankCopyDependence(n))} on ranks (1 - 6/(n(n+1))), below the threshold ${LEAKAGE_DEPENDENCE_THRESHOLD}; the audit needs ${LEAKAGE_MIN_ROWS} rows to tell whether this signal is computed from the label`,
      }
    return {
      signal,
      verdict: 'ok',
      dependence,
      spearman: rho,
      reason: `${fmt(dependence ?? 0)} of its variance is explained by the label`,
    }
  })
}

function isConstant(values: ArrayLike<number>): boolean {
  for (let i = 1; i < values.length; i++) if (values[i] !== values[0]) return false
  return true
}

function fmt(x: number): string {
  return `${(x * 100).toFixed(1)}%`
}
