/**
 * Hyperband's budget levels and brackets (Li et al. 2018; as scheduled in hpbandster's BOHB
 * master, hpbandster/optimizers/bohb.py), computed without floating-point surprises: the number of
 * levels by exact integer comparison instead of int(log(min/max)/log(eta)) (which can land on
 * 3.9999... and lose a level), each level by one correctly rounded division, and the number of
 * configurations per rung by integer division.
 */
import {InputError} from '../util/errors.js'
import type {Fidelity} from './types.js'

/** Hyperband's default reduction factor (Falkner et al. 2018, section 4; hpbandster default). */
export const DEFAULT_ETA = 3

/** Relative slack when comparing budgets, so that 729 / 3^4 = 9 counts as reaching min = 9. */
const BUDGET_RELATIVE_SLACK = 1e-12

export interface Bracket {
  /** Hyperband iteration number (0, 1, 2, ...). */
  readonly iteration: number
  /** s: the bracket runs s + 1 rungs. */
  readonly s: number
  /** Configurations per rung. */
  readonly counts: readonly number[]
  /** Budget per rung. */
  readonly budgets: readonly number[]
}

/** Throws a one-line error unless the fidelity is usable. */
export function checkFidelity(f: Fidelity, where = 'fidelity'): void {
  if (!(f.min > 0) || !Number.isFinite(f.min))
    throw new InputError(`${where}: min budget`, 'a positive number', String(f.min))
  if (!(f.max >= f.min) || !Number.isFinite(f.max))
    throw new InputError(`${where}: max budget`, `a number >= min budget ${f.min}`, String(f.max))
  if (!(f.eta >= 2) || !Number.isInteger(f.eta)) throw new InputError(`${where}: eta`, 'an integer >= 2', String(f.eta))
}

/** eta^k as an exact integer (eta and k are small integers). */
function integerPower(eta: number, k: number): number {
  let p = 1
  for (let i = 0; i < k; i++) p *= eta
  return p
}

/** s_max: the largest s with max / eta^s >= min. hpbandster's max_SH_iter is s_max + 1. */
export function maxBracketIndex(f: Fidelity): number {
  checkFidelity(f)
  let s = 0
  while (f.max / integerPower(f.eta, s + 1) >= f.min * (1 - BUDGET_RELATIVE_SLACK)) s++
  return s
}

/**
 * The budget levels, smallest first: max / eta^(s_max - k) for k = 0..s_max. Exact integers
 * whenever max is divisible (9, 27, 81, 243, 729 for min 9, max 729, eta 3).
 */
export function budgetLevels(f: Fidelity): number[] {
  const sMax = maxBracketIndex(f)
  const levels: number[] = []
  for (let k = 0; k <= sMax; k++) levels.push(f.max / integerPower(f.eta, sMax - k))
  return levels
}

/**
 * The bracket Hyperband runs at a given iteration: s = s_max - (iteration mod (s_max + 1)),
 * n0 = floor((s_max + 1) / (s + 1)) * eta^s configurations at budget max / eta^s, keeping
 * max(floor(n0 / eta^i), 1) at rung i (hpbandster's BOHB.get_next_iteration).
 */
export function bracketAt(f: Fidelity, iteration: number): Bracket {
  const sMax = maxBracketIndex(f)
  const levels = budgetLevels(f)
  const s = sMax - (iteration % (sMax + 1))
  const n0 = Math.floor((sMax + 1) / (s + 1)) * integerPower(f.eta, s)
  const counts: number[] = []
  for (let i = 0; i <= s; i++) counts.push(Math.max(Math.floor(n0 / integerPower(f.eta, i)), 1))
  return {iteration, s, counts, budgets: levels.slice(sMax - s)}
}
