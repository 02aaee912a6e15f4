/**
 * The study loop: ask the optimiser, record the trial, evaluate (here or on worker threads), record
 * the result the moment it is known, tell the optimiser. Resume replays the stored history through
 * a freshly built optimiser before asking anything new:
 *
 * - trials are replayed in their original ask order, and each stored result is told at the point
 *   it was originally told (after `asks_before` asks), so the optimiser (seeded, drawing randomness
 *   only in ask) reaches exactly the state it had; every replayed ask is checked against the stored
 *   trial (same configuration, same budget), so a changed optimiser cannot silently mix histories;
 * - finished trials are never evaluated again; trials that were running when the process died are
 *   evaluated now, under their original ids.
 */
import {configKeys, type Config} from '../space/index.js'
import type {ObjectiveSpec} from './objectives.js'
import type {Objective, Optimizer, Trial, TrialResult} from '../search/types.js'
import {InputError} from '../util/errors.js'
import {evaluateHere, type EvalJob, type Outcome} from './evaluate.js'
import {WorkerPool} from './pool.js'
import type {StudyStore, TrialRow} from './store.js'

export interface RunLimits {
  /** Stop asking after this many trials (all trials, failed ones included). */
  readonly maxTrials?: number
  /** Stop asking once this much budget is consumed, in units of the maximum budget (continuation accounting). */
  readonly maxBudget?: number
}

export interface RunOptions extends RunLimits {
  readonly store: StudyStore
  readonly study: string
  readonly seed: number
  readonly optimizer: Optimizer
  /** The objective, built in this thread (used for its fidelity, and for evaluation when workers <= 1). */
  readonly objective: Objective
  /** How worker threads rebuild the objective (required when workers > 1). */
  readonly objectiveSpec?: ObjectiveSpec
  /** Values of parameters taken out of the search (--fix). */
  readonly fixed?: Config
  readonly workers?: number
  readonly timeoutMs?: number
  /** Passed to every evaluation as ctx.artifactsDir (files a trial keeps beside the study). */
  readonly artifactsDir?: string
  /** Aborting stops asking and returns at once; running trials stay 'running' for resume. */
  readonly signal?: AbortSignal
  /** Called after each trial is stored. */
  readonly onTrial?: (trial: Trial, outcome: Outcome) => void
  readonly now?: () => string
}

export interface RunSummary {
  readonly asked: number
  /** Trials finished in the store (before and during this run). */
  readonly finished: number
  readonly ok: number
  readonly failed: number
  /** Finished trials taken from the store instead of evaluated. */
  readonly replayed: number
  /** Trials that were running when a previous process stopped, evaluated again now. */
  readonly rerun: number
  /** Trials evaluated by this run. */
  readonly evaluated: number
  /** Budget consumed, in units of the maximum budget (continuation accounting). */
  readonly budgetUsed: number
  readonly stoppedBy: 'done' | 'trials' | 'budget' | 'aborted'
}

function isoNow(): string {
  return new Date().toISOString()
}

/** Canonical JSON of a configuration (keys sorted), for replay checks. */
function configJson(config: Record<string, unknown>): string {
  return JSON.stringify(Object.keys(config).sort().map((k) => [k, config[k]]))
}

export function resultOf(row: TrialRow): TrialResult {
  return row.status === 'ok' ? {status: 'ok', loss: row.loss ?? undefined, values: row.values ?? undefined} : {status: 'failed'}
}

export async function runStudy(options: RunOptions): Promise<RunSummary> {
  const {store, study, optimizer, objective} = options
  const now = options.now ?? isoNow
  const fidelityMax = objective.fidelity?.max ?? 1
  const fullConfig = (config: Config): Config => {
    const merged: Config = {...options.fixed, ...config}
    const ordered: Config = {}
    for (const key of configKeys(objective.space)) if (key in merged) ordered[key] = merged[key]
    for (const key of Object.keys(merged)) if (!(key in ordered)) ordered[key] = merged[key]
    return ordered
  }

  // ---- replay ----
  const rows = store.trials(study)
  const finishedRows = rows.filter((r) => r.status !== 'running').sort((a, b) => (a.tellSeq ?? 0) - (b.tellSeq ?? 0))
  const asked = new Map<number, Trial>()
  const results = new Map<number, TrialRow>()
  let askCount = 0
  const replayAsk = (): void => {
    const stored = rows[askCount]
    const trial = optimizer.ask()
    if (typeof trial === 'string' || trial.id !== stored.id || trial.budget !== stored.budget || configJson(trial.config) !== configJson(stripFixed(stored.config, options.fixed))) {
      const got = typeof trial === 'string' ? `'${trial}'` : `trial ${trial.id} at budget ${trial.budget}`
      throw new InputError(`${store.path}: study ${study} trial ${stored.id}`, 'the trial this optimiser proposes on replay (same version, seed and options)', got)
    }
    asked.set(trial.id, trial)
    askCount++
  }
  rows.forEach((r, i) => {
    if (r.id !== i) throw new InputError(`${store.path}: study ${study}`, 'trial ids 0, 1, 2, ... without gaps', `trial ${r.id} at position ${i}`)
  })
  for (const row of finishedRows) {
    const before = row.asksBefore ?? row.id + 1
    if (before > rows.length || before <= row.id) throw new InputError(`${store.path}: study ${study} trial ${row.id}`, 'a consistent ask/tell history', `asks_before ${before}`)
    while (askCount < before) replayAsk()
    optimizer.tell(row.id, resultOf(row))
    results.set(row.id, row)
  }
  while (askCount < rows.length) replayAsk()
  let tellSeq = finishedRows.reduce((m, r) => Math.max(m, (r.tellSeq ?? -1) + 1), 0)

  // ---- accounting ----
  let budgetUsed = 0
  const maxReached = new Map<string, number>()
  const costOf = (trial: Trial): number => {
    const reached = maxReached.get(trial.configId) ?? 0
    const paid = objective.continuation ? Math.max(0, trial.budget - reached) : trial.budget
    maxReached.set(trial.configId, Math.max(reached, trial.budget))
    return paid / fidelityMax
  }
  for (const row of rows) budgetUsed += costOf(asked.get(row.id)!)

  const checkpoints = new Map<number, unknown>()
  for (const row of rows) if (row.status === 'ok' && row.checkpoint !== null) checkpoints.set(row.id, row.checkpoint)

  const workers = Math.max(1, options.workers ?? 1)
  // objectives that wait on other processes run `workers` evaluations at once in this thread
  const pool = workers > 1 && !objective.concurrent ? new WorkerPool(requireSpec(options.objectiveSpec), workers, options.timeoutMs, now) : undefined
  const inFlight = new Map<number, Promise<{trial: Trial; outcome: Outcome}>>()
  let evaluated = 0
  const pendingRerun = rows.filter((r) => r.status === 'running').map((r) => asked.get(r.id)!)
  const rerun = pendingRerun.length

  const dispatch = (trial: Trial): void => {
    const checkpointState = trial.continues && objective.continuation ? checkpoints.get(trial.continues.trialId) : undefined
    const job: EvalJob = {
      trialId: trial.id,
      config: fullConfig(trial.config),
      budget: trial.budget,
      ctx: {
        trialId: trial.id,
        configId: trial.configId,
        seed: options.seed,
        ...(options.artifactsDir ? {artifactsDir: options.artifactsDir} : {}),
        checkpoint: checkpointState !== undefined ? {budget: trial.continues!.budget, state: checkpointState} : undefined,
      },
    }
    store.recordAsk(study, {...trial, config: job.config, continues: trial.continues}, now())
    const running = pool ? pool.evaluate(job) : evaluateHere(objective, job, options.timeoutMs, now)
    inFlight.set(trial.id, running.then((outcome) => ({trial, outcome})))
  }

  let stoppedBy: RunSummary['stoppedBy'] = 'done'
  const aborted = options.signal ? abortPromise(options.signal) : undefined
  try {
    for (;;) {
      stoppedBy = 'done'
      if (options.signal?.aborted) {
        stoppedBy = 'aborted'
        break
      }
      while (inFlight.size < workers && pendingRerun.length > 0) dispatch(pendingRerun.shift()!)
      while (inFlight.size < workers) {
        if (options.maxTrials !== undefined && askCount >= options.maxTrials) {
          stoppedBy = 'trials'
          break
        }
        if (options.maxBudget !== undefined && budgetUsed >= options.maxBudget - 1e-12) {
          stoppedBy = 'budget'
          break
        }
        const trial = optimizer.ask()
        if (trial === 'wait') break
        if (trial === 'done') {
          stoppedBy = 'done'
          break
        }
        askCount++
        asked.set(trial.id, trial)
        budgetUsed += costOf(trial)
        dispatch(trial)
      }
      if (inFlight.size === 0) break
      const racers: Array<Promise<{trial: Trial; outcome: Outcome} | 'aborted'>> = [...inFlight.values()]
      if (aborted) racers.push(aborted)
      const next = await Promise.race(racers)
      if (next === 'aborted') {
        stoppedBy = 'aborted'
        break
      }
      const {trial, outcome} = next
      inFlight.delete(trial.id)
      evaluated++
      // Persist first: once stored, a crash can no longer lose or repeat this trial.
      store.recordResult(study, trial.id, {...outcome, tellSeq, asksBefore: askCount})
      tellSeq++
      if (outcome.status === 'ok' && outcome.checkpoint !== undefined) checkpoints.set(trial.id, outcome.checkpoint)
      optimizer.tell(trial.id, outcome.status === 'ok' ? {status: 'ok', loss: outcome.loss, values: outcome.values} : {status: 'failed'})
      options.onTrial?.(trial, outcome)
    }
  } finally {
    await pool?.close()
  }
  const final = store.trials(study)
  const ok = final.filter((r) => r.status === 'ok').length
  const failed = final.filter((r) => r.status === 'failed').length
  if (stoppedBy === 'done' && final.some((r) => r.status === 'running')) stoppedBy = 'aborted'
  return {asked: askCount, finished: ok + failed, ok, failed, replayed: results.size, rerun, evaluated, budgetUsed, stoppedBy}
}

function stripFixed(config: Record<string, unknown>, fixed: Config | undefined): Record<string, unknown> {
  if (!fixed) return config
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(config)) if (!(k in fixed)) out[k] = v
  return out
}

function requireSpec(spec: ObjectiveSpec | undefined): ObjectiveSpec {
  if (!spec) throw new InputError('--workers', 'an objective that worker threads can rebuild (a benchmark name or a module)', 'an in-process objective')
  return spec
}

function abortPromise(signal: AbortSignal): Promise<'aborted'> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve('aborted')
    else signal.addEventListener('abort', () => resolve('aborted'), {once: true})
  })
}
