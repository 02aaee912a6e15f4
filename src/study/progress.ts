/**
 * The progress line of a running study: where it stands against its limit (trials or budget),
 * the best loss so far and an estimate of the time left, e.g.
 * `trial 17/40 (43%), best loss -0.7152 (trial 12), ETA 6s`.
 */
import type {Trial} from '../search/types.js'
import type {Outcome} from './evaluate.js'
import type {StudyProgress} from './replica.js'

export class SearchProgress {
  private best: {loss: number; id: number} | undefined
  /** Fraction done and time at the first report: the baseline of the rate (a resumed study starts part-way). */
  private first: {fraction: number; at: number} | undefined

  constructor(
    private readonly limits: {readonly maxTrials?: number; readonly maxBudget?: number},
    private readonly now: () => number = Date.now,
  ) {}

  /** Notes a recorded trial and returns the line to show. */
  update(trial: Trial, outcome: Outcome, progress: StudyProgress): string {
    if (
      outcome.status === 'ok' &&
      outcome.loss !== undefined &&
      (this.best === undefined || outcome.loss < this.best.loss)
    )
      this.best = {loss: outcome.loss, id: trial.id}
    const fraction = this.fraction(progress)
    const at = this.now()
    this.first ??= fraction === undefined ? undefined : {fraction, at}
    const parts: string[] = []
    if (this.limits.maxTrials !== undefined) parts.push(`trial ${progress.asked}/${this.limits.maxTrials}`)
    else if (this.limits.maxBudget !== undefined)
      parts.push(`budget ${progress.budgetUsed.toFixed(2)}/${this.limits.maxBudget}`)
    else parts.push(`trial ${progress.asked}`)
    if (fraction !== undefined) parts[0] += ` (${Math.round(fraction * 100)}%)`
    parts.push(
      this.best ? `best loss ${this.best.loss.toPrecision(5)} (trial ${this.best.id})` : 'no successful trial yet',
    )
    parts.push(`ETA ${this.eta(fraction, at)}`)
    return parts.join(', ')
  }

  private fraction(progress: StudyProgress): number | undefined {
    const {maxTrials, maxBudget} = this.limits
    const byTrials = maxTrials === undefined ? undefined : progress.asked / maxTrials
    const byBudget = maxBudget === undefined ? undefined : progress.budgetUsed / maxBudget
    // the study stops at whichever limit comes first
    const f = Math.max(byTrials ?? -Infinity, byBudget ?? -Infinity)
    return Number.isFinite(f) ? Math.min(1, Math.max(0, f)) : undefined
  }

  private eta(fraction: number | undefined, at: number): string {
    if (fraction === undefined || this.first === undefined || fraction <= this.first.fraction) return '-'
    const seconds = (((at - this.first.at) / (fraction - this.first.fraction)) * (1 - fraction)) / 1000
    return formatDuration(seconds)
  }
}

/** 7s, 3m05s, 2h04m. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds))
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`
}
