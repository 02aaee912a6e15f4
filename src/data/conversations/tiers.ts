import {Rng} from '../../util/rng.js'
import type {EvalQuery} from './queries.js'

/**
 * Fidelity tiers for multi-fidelity search: nested, seeded, category-stratified subsets of the
 * scored queries. Fractions 1/9, 1/3, 1 and relative budgets 1, 3, 9 follow Hyperband's
 * reduction factor eta = 3 (Li et al. 2018), so a successive-halving rung maps onto a tier.
 */
export const FIDELITY_TIER_SPECS = [
  {name: 'low', fraction: 1 / 9, budget: 1},
  {name: 'medium', fraction: 1 / 3, budget: 3},
  {name: 'high', fraction: 1, budget: 9},
] as const
export type TierName = (typeof FIDELITY_TIER_SPECS)[number]['name']

export interface FidelityTier {
  readonly name: TierName
  /** Relative cost (1, 3, 9): the budget a multi-fidelity optimiser asks for. */
  readonly budget: number
  /** Ids of the queries in this tier (each tier contains the tiers below it). */
  readonly queryIds: readonly string[]
}

/**
 * The tiers of a query set. Within each category the queries are shuffled once with a seeded
 * generator and every tier takes a prefix (at least one query per category), so tiers are nested
 * and keep the category mix.
 */
export function fidelityTiers(queries: readonly EvalQuery[], seed: number): FidelityTier[] {
  return questionTiers(queries, seed, FIDELITY_TIER_SPECS) as FidelityTier[]
}

/** A fidelity tier of any name: a question subset with a share of the questions. */
export interface TierSpec {
  readonly name: string
  readonly budget: number
  /** Share of the questions in (0, 1]. */
  readonly fraction: number
}

/**
 * Nested, seeded, category-stratified question subsets for any tier list (e.g. an engine file's
 * tiers, with fraction = budget / largest budget). Within each category the queries are shuffled
 * once and every tier takes a prefix (at least one query per category).
 */
export function questionTiers(
  queries: readonly EvalQuery[],
  seed: number,
  specs: readonly TierSpec[],
): Array<{name: string; budget: number; queryIds: string[]}> {
  const rng = new Rng(seed)
  const byCategory = new Map<string, string[]>()
  for (const q of queries) {
    const list = byCategory.get(q.category) ?? []
    list.push(q.id)
    byCategory.set(q.category, list)
  }
  const shuffled = [...byCategory.keys()].sort().map((c) => rng.fork(c).shuffle([...(byCategory.get(c) as string[])]))
  const order = new Map(queries.map((q, i) => [q.id, i]))
  return specs.map((spec) => {
    const ids = shuffled.flatMap((list) => list.slice(0, Math.max(1, Math.ceil(spec.fraction * list.length))))
    // Report tiers in dataset order, so evaluation order does not depend on the shuffle.
    ids.sort((a, b) => (order.get(a) as number) - (order.get(b) as number))
    return {name: spec.name, budget: spec.budget, queryIds: ids}
  })
}

/** A budget this close below a tier's still runs at that tier: successive halving computes budgets in floating point. */
const BUDGET_TOLERANCE = 1e-9

/** The tier whose budget is the smallest at least `budget` (an optimiser's budget to a tier); past the largest, the largest. */
export function tierForBudget<T extends {readonly budget: number}>(tiers: readonly T[], budget: number): T {
  return tiers.find((t) => t.budget >= budget - BUDGET_TOLERANCE) ?? tiers[tiers.length - 1]
}
