/**
 * THE deploy gate: one check for every profile kind (importance, retrieval, routed, engine). A
 * profile goes live only when its run validated it and it passed, no leakage finding is flagged
 * and it records what it measured; otherwise deploying needs --force with a reason, and the
 * forced deploy is recorded in the target's history.
 */
import {AcceptanceError, InputError} from '../util/errors.js'
import {safeText, type Profile} from './profile.js'

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
    const list = leaks
      .map(
        (l) =>
          `${l.signal} on ${l.dataset}${l.dependence === null ? '' : ` (${(100 * l.dependence).toFixed(1)}% of its variance a function of the label)`}`,
      )
      .join(', ')
    return {passed: false, reason: `its run's leakage audit flagged ${list}: the study's numbers cannot be trusted`}
  }
  const v = p.validation
  if (v.verdict === 'fail') {
    const failed = v.criteria
      .filter((c) => !c.passed)
      .map(
        (c) =>
          `${c.id}${c.dataset ? ` on ${c.dataset}` : ''} (${c.metric} ${c.value === null ? 'undefined' : fmt(c.value)}, needs ${c.op} ${fmt(c.threshold)})`,
      )
    return {passed: false, reason: `its run failed validation: ${failed.join(', ')}`}
  }
  if (v.verdict === 'not-validated')
    return {passed: false, reason: `it has no validation${v.note ? ` (${v.note})` : ''}`}
  if (Object.keys(p.metrics).length === 0)
    return {passed: false, reason: 'it records no metrics (nothing says what it measured)'}
  return {passed: true, reason: null}
}

/** What a refusal tells the user to do to go past the gate (kt deploy's flags). */
const FORCE_HINT = 'to deploy it anyway: --force --reason "why"'

/**
 * The gate's refusal (exit 1, as a failed acceptance criterion): `kt deploy` and everything else
 * that puts a profile in front of live traffic (`kt online init --profile`, the service's
 * POST /tenants) say the same line. `gate` is the gate's reason alone.
 */
export class GateRefusedError extends AcceptanceError {
  readonly code = 'gate_refused'

  constructor(
    file: string,
    profile: Profile,
    readonly gate: string,
    hint: string = FORCE_HINT,
  ) {
    super(`deploy refused: ${file} (${profile.kind} profile ${profile.name}): ${gate}; ${hint}`)
  }
}

export interface GateOptions {
  /** Go past a refusal; needs `reason`. */
  readonly force?: boolean
  /** Why a refused profile is used anyway: one line, recorded by the caller (a target's history, a tenant's init record). */
  readonly reason?: string
  /** What the refusal says to do instead (default FORCE_HINT). */
  readonly hint?: string
}

/**
 * Applies the gate to a profile read from `file`: a refused profile throws GateRefusedError unless
 * forced with a reason (InputError naming --reason otherwise, or for a reason that is not one safe
 * line). Returns the verdict, whose reason is what --force overrode (null when it passed).
 */
export function passGate(profile: Profile, file: string, options: GateOptions = {}): GateVerdict {
  const gate = deployGate(profile)
  if (!gate.passed) {
    if (!options.force) throw new GateRefusedError(file, profile, gate.reason!, options.hint)
    if (!options.reason || !options.reason.trim())
      throw new InputError(
        '--reason',
        "why a profile the gate refuses is used anyway with --force (recorded: a target's history, a tenant's init record)",
        'nothing',
      )
  }
  if (options.reason !== undefined && !safeText.safeParse(options.reason).success)
    throw new InputError(
      '--reason',
      'one line of text without control characters (at most 2000)',
      JSON.stringify(options.reason).slice(0, 40),
    )
  return gate
}

function fmt(x: number): string {
  return String(Number(x.toPrecision(4)))
}
