/**
 * A study read in pages and summarised as it streams: `kt study show` and `kt study export` use
 * memory that does not grow with the trial count (a 100,000-trial study held as TrialRows took
 * hundreds of MB).
 */
import {replacesIncumbent} from '../search/incumbent.js'
import type {TrialRow} from './model.js'
import type {StudyStorage} from './storage.js'

/** Trials a page holds: large enough that a query's cost is spread, small enough that a page is a few MB. */
export const TRIAL_PAGE_SIZE = 2000

/** Every trial of a study, by id, in pages of `size` (without checkpoints). */
export async function* trialPages(
  storage: Pick<StudyStorage, 'trialPage'>,
  study: string,
  size = TRIAL_PAGE_SIZE,
): AsyncGenerator<TrialRow[]> {
  let after = -1
  for (;;) {
    const page = await storage.trialPage(study, after, size)
    if (page.length > 0) yield page
    if (page.length < size) return
    after = page[page.length - 1].id
  }
}

export interface BudgetRow {
  budget: number
  ok: number
  failed: number
  running: number
  best_loss: number | null
}

/**
 * Counts, trials per budget, the incumbent (hpbandster's rule, src/search/incumbent.ts) and the
 * best `top` successful trials at the largest budget, from trials added in id order; what a
 * grid's coverage needs (configuration ids) only when asked to keep it.
 */
export class TrialTally {
  trials = 0
  ok = 0
  failed = 0
  running = 0
  best: TrialRow | undefined
  private readonly byBudget = new Map<number, BudgetRow>()
  private readonly finishedConfigIds: string[] | undefined
  private readonly topAtMax: TrialRow[] = []
  private maxOkBudget = -Infinity

  constructor(private readonly options: {top?: number; keepConfigIds?: boolean} = {}) {
    this.finishedConfigIds = options.keepConfigIds ? [] : undefined
  }

  add(t: TrialRow): void {
    this.trials++
    this[t.status]++
    let row = this.byBudget.get(t.budget)
    if (!row) this.byBudget.set(t.budget, (row = {budget: t.budget, ok: 0, failed: 0, running: 0, best_loss: null}))
    row[t.status]++
    if (t.status === 'ok' && t.loss !== null && (row.best_loss === null || t.loss < row.best_loss))
      row.best_loss = t.loss
    if (replacesIncumbent(t, this.best)) this.best = t
    if (t.status !== 'running') this.finishedConfigIds?.push(t.configId)
    if (t.status === 'ok') this.offerTop(t)
  }

  addAll(trials: Iterable<TrialRow>): this {
    for (const t of trials) this.add(t)
    return this
  }

  /** Trials per budget, smallest budget first. */
  budgets(): BudgetRow[] {
    return [...this.byBudget.values()].sort((a, b) => a.budget - b.budget)
  }

  /** Configuration ids of the finished trials (constructed with keepConfigIds). */
  configIds(): readonly string[] {
    return this.finishedConfigIds ?? []
  }

  /** The largest budget of a successful trial (-Infinity without one). */
  get maxBudget(): number {
    return this.maxOkBudget
  }

  /** The best `top` successful trials at the largest budget, by loss then id. */
  top(): TrialRow[] {
    return [...this.topAtMax]
  }

  private offerTop(t: TrialRow): void {
    if (t.budget < this.maxOkBudget) return
    if (t.budget > this.maxOkBudget) {
      this.maxOkBudget = t.budget
      this.topAtMax.length = 0
    }
    const n = this.options.top ?? 0
    const rank = (x: TrialRow): number => x.loss ?? Infinity
    const list = this.topAtMax
    let i = list.length
    while (i > 0 && (rank(list[i - 1]) > rank(t) || (rank(list[i - 1]) === rank(t) && list[i - 1].id > t.id))) i--
    if (i >= n) return
    list.splice(i, 0, t)
    if (list.length > n) list.pop()
  }
}
