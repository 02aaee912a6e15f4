/**
 * THE deploy gate: one check for every profile kind (importance, retrieval, routed, engine). A
 * profile goes live only when its run validated it and it passed, no leakage finding is flagged
 * and it records what it measured; otherwise deploying needs --force with a reason, and the
 * forced deploy is recorded in the target's history.
 */
import type {Profile} from './profile.js'

export interface GateVerdict {
  /** True when the profile may be deployed without --force. */
  readonly passed: boolean
  /** Why it may not (one line), or null. */
  readonly reason: string | null
}

/** The gate's decision on a profile (first reason that applies). */
export function deployGate(p: Profile): GateVerdict {
  const leaks = p.leakage.filter((l) => l.flagged)
  if (leaks.length > 0) {
    const list = leaks.map((l) => `${l.signal} on ${l.dataset}${l.dependence === null ? '' : ` (${(100 * l.dependence).toFixed(1)}% of its variance a function of the label)`}`).join(', ')
    return {passed: false, reason: `its run's leakage audit flagged ${list}: the study's numbers cannot be trusted`}
  }
  const v = p.validation
  if (v.verdict === 'fail') {
    const failed = v.criteria.filter((c) => !c.passed).map((c) => `${c.id}${c.dataset ? ` on ${c.dataset}` : ''} (${c.metric} ${c.value === null ? 'undefined' : fmt(c.value)}, needs ${c.op} ${fmt(c.threshold)})`)
    return {passed: false, reason: `its run failed validation: ${failed.join(', ')}`}
  }
  if (v.verdict === 'not-validated') return {passed: false, reason: `it has no validation${v.note ? ` (${v.note})` : ''}`}
  if (Object.keys(p.metrics).length === 0) return {passed: false, reason: 'it records no metrics (nothing says what it measured)'}
  return {passed: true, reason: null}
}

function fmt(x: number): string {
  return String(Number(x.toPrecision(4)))
}
