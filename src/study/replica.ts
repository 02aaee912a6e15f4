/**
 * A worker process's copy of the optimiser, kept equal to one optimiser told the store's history
 * in its serial order (asks by trial id, tells by tell_seq, each after the asks before it). Replay
 * checks every replayed ask against the stored trial (same id, configuration and budget), so a
 * changed optimiser or seed cannot silently mix histories.
 */
import type {Config} from '../space/index.js'
import type {Optimizer, Trial, TrialResult} from '../search/types.js'
import {InputError} from '../util/errors.js'
import type {TrialRow} from './model.js'
import type {SessionCheck} from './storage.js'

/** The study's stopping rules (either or both). */
export interface RunLimits {
  /** Stop asking after this many trials (all trials, failed ones included). */
  readonly maxTrials?: number
  /** Stop asking once this much budget is consumed, in units of the maximum budget (continuation accounting). */
  readonly maxBudget?: number
}

/** Whether a replayed ask's configuration is the stored one without its fixed parameters (key order aside). */
function sameSearchedValues(config: Config, stored: Record<string, unknown>, fixed: Config | undefined): boolean {
  let searched = 0
  for (const k in stored) {
    if (fixed && k in fixed) continue
    searched++
    if (config[k] !== stored[k]) return false
  }
  return searched === Object.keys(config).length
}

function resultOf(row: TrialRow): TrialResult {
  return row.status === 'ok'
    ? {status: 'ok', loss: row.loss ?? undefined, values: row.values ?? undefined}
    : {status: 'failed'}
}

/** How far a study has got: trials asked and budget used (units of the maximum budget). */
export interface StudyProgress {
  readonly asked: number
  readonly budgetUsed: number
}

/** The process's copy of the optimiser, kept equal to one optimiser told the store's history in order. */
export class Replica {
  readonly asked = new Map<number, Trial>()
  askCount = 0
  tellSeq = 0
  budgetUsed = 0
  /** The connection everything replayed here was read on (a new one means a rebuild: SessionCheck). */
  readonly session: SessionCheck = {}
  private readonly maxReached = new Map<string, number>()

  constructor(
    readonly optimizer: Optimizer,
    private readonly where: string,
    private readonly fixed: Config | undefined,
    private readonly continuation: boolean,
    private readonly fidelityMax: number,
  ) {}

  private costOf(trial: Trial): number {
    const reached = this.maxReached.get(trial.configId) ?? 0
    const paid = this.continuation ? Math.max(0, trial.budget - reached) : trial.budget
    this.maxReached.set(trial.configId, Math.max(reached, trial.budget))
    return paid / this.fidelityMax
  }

  private noteAsk(trial: Trial): void {
    this.asked.set(trial.id, trial)
    this.askCount++
    this.budgetUsed += this.costOf(trial)
  }

  /** Replays rows the replica has not seen (new asks by id; new tells in tell order, each after its asks). */
  apply(rows: readonly TrialRow[]): number {
    const newAsks = rows.filter((r) => r.id >= this.askCount)
    newAsks.forEach((r, i) => {
      if (r.id !== this.askCount + i)
        throw new InputError(
          this.where,
          'trial ids 0, 1, 2, ... without gaps',
          `trial ${r.id} at position ${this.askCount + i}`,
        )
    })
    const end = this.askCount + newAsks.length
    const base = this.askCount
    const replayAsk = (): void => {
      const stored = newAsks[this.askCount - base]
      // the asker's hint lets this copy skip the ask's expensive part (BOHB: the KDE scoring); rows without one replay in full
      const trial =
        stored.askHint !== null && stored.askHint !== undefined && this.optimizer.replayAsk
          ? this.optimizer.replayAsk(stored.askHint, stored.config)
          : this.optimizer.ask()
      if (
        typeof trial === 'string' ||
        trial.id !== stored.id ||
        trial.budget !== stored.budget ||
        !sameSearchedValues(trial.config, stored.config, this.fixed)
      ) {
        const got = typeof trial === 'string' ? `'${trial}'` : `trial ${trial.id} at budget ${trial.budget}`
        throw new InputError(
          `${this.where} trial ${stored.id}`,
          'the trial this optimiser proposes on replay (same version, seed and options)',
          got,
        )
      }
      this.noteAsk(trial)
    }
    const tells = rows
      .filter((r) => r.status !== 'running' && r.tellSeq !== null && r.tellSeq >= this.tellSeq)
      .sort((a, b) => a.tellSeq! - b.tellSeq!)
    for (const row of tells) {
      const before = row.asksBefore ?? row.id + 1
      if (before > end || before <= row.id)
        throw new InputError(`${this.where} trial ${row.id}`, 'a consistent ask/tell history', `asks_before ${before}`)
      while (this.askCount < before) replayAsk()
      this.optimizer.tell(row.id, resultOf(row))
      this.tellSeq = row.tellSeq! + 1
    }
    while (this.askCount < end) replayAsk()
    return tells.length
  }

  /** The stopping rule that holds now, if any. */
  limit(limits: RunLimits): 'trials' | 'budget' | undefined {
    if (limits.maxTrials !== undefined && this.askCount >= limits.maxTrials) return 'trials'
    if (limits.maxBudget !== undefined && this.budgetUsed >= limits.maxBudget - 1e-12) return 'budget'
    return undefined
  }

  ask(): Trial | 'wait' | 'done' {
    const trial = this.optimizer.ask()
    if (typeof trial !== 'string') this.noteAsk(trial)
    return trial
  }
}

/** Same trial, same work: an evaluation begun for `a` stands for one of `b`. */
export function sameTrial(a: Trial, b: Trial): boolean {
  return (
    a.id === b.id &&
    a.budget === b.budget &&
    a.configId === b.configId &&
    a.continues?.trialId === b.continues?.trialId &&
    sameSearchedValues(a.config, b.config, undefined)
  )
}
