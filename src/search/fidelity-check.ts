/**
 * Whether a low budget earns its place (after Hyper-Tune, Li et al. 2022, which weighs each
 * fidelity by how consistently it ranks configurations against the highest one): as results come
 * in, the Spearman correlation between the losses at a budget and at the largest budget, over the
 * configurations seen at both. A budget with at least `minPairs` such configurations and a
 * correlation below `threshold` misranks: brackets no longer start there, and its results no
 * longer feed a model. Failed evaluations do not pair. The check only reads results told, so the
 * same history gives the same decisions (resume and replay stay exact).
 */
import {spearman} from '../stats/correlation.js'

/** Pairs before a budget's correlation is trusted: fewer say little about a ranking. */
const FIDELITY_MIN_PAIRS = 6
/** Rank correlation below which a budget is taken to misrank (Spearman; 0 is no agreement at all). */
const FIDELITY_MIN_CORRELATION = 0.2

export class FidelityCheck {
  /** Loss by budget, by configuration. */
  private readonly losses = new Map<string, Map<number, number>>()

  constructor(
    private readonly maxBudget: number,
    private readonly minPairs = FIDELITY_MIN_PAIRS,
    private readonly threshold = FIDELITY_MIN_CORRELATION,
  ) {}

  record(configId: string, budget: number, loss: number | undefined): void {
    if (loss === undefined || !Number.isFinite(loss)) return
    let byBudget = this.losses.get(configId)
    if (!byBudget) this.losses.set(configId, (byBudget = new Map()))
    byBudget.set(budget, loss)
  }

  /** The correlation of `budget` with the largest budget and the pairs it rests on. */
  correlation(budget: number): {rho: number | null; pairs: number} {
    const low: number[] = []
    const high: number[] = []
    for (const byBudget of this.losses.values()) {
      const a = byBudget.get(budget)
      const b = byBudget.get(this.maxBudget)
      if (a !== undefined && b !== undefined) {
        low.push(a)
        high.push(b)
      }
    }
    return {rho: low.length >= 2 ? spearman(low, high) : null, pairs: low.length}
  }

  /** False once a budget below the largest has enough pairs and ranks below the threshold. */
  trusted(budget: number): boolean {
    if (budget >= this.maxBudget) return true
    const {rho, pairs} = this.correlation(budget)
    return pairs < this.minPairs || rho === null || rho >= this.threshold
  }
}
