/**
 * The in-process optimise loop (Optuna's `study.optimize` on in-memory storage): ask, evaluate,
 * tell, one trial at a time, until the optimiser is done or the caller says stop. Every
 * in-process tuner (kt rerank tune, the retrieval tuning of kt eval, the optimiser benchmarks)
 * runs it; studies kept in a storage, with workers and resume, run src/study/optimize.ts, which
 * follows the same 'wait' and incumbent rules.
 */
import type {Evaluated} from './incumbent.js'
import type {Optimizer, Trial, TrialResult} from './types.js'

/** One evaluated trial: what was told, the caller's own record of it, and the optimiser's time. */
export interface LoopStep<V> extends Evaluated {
  readonly trial: Trial
  readonly result: TrialResult
  readonly value: V
  /** Wall time of the ask and of the tell (ms): the optimiser's own cost. */
  readonly askMs: number
  readonly tellMs: number
}

/** What evaluating a trial gives the loop: the result to tell, the caller's record, and optionally the budget the incumbent rule compares. */
export interface Evaluation<V> {
  readonly result: TrialResult
  readonly value: V
  /** The budget the trial counts at for the incumbent (default: trial.budget). */
  readonly budget?: number
}

export interface LoopOptions<V> {
  /** Stop once this many trials were evaluated. */
  readonly maxTrials?: number
  /** Asked before every further trial (after maxTrials): false stops the loop. */
  readonly proceed?: (steps: readonly LoopStep<V>[]) => boolean
  /** Called after every tell, with the steps so far (the last one included). */
  readonly onStep?: (step: LoopStep<V>, steps: readonly LoopStep<V>[]) => void
}

export interface LoopOutcome<V> {
  readonly steps: LoopStep<V>[]
  /** The optimiser answered 'done' (a finished grid, the last bracket) before the loop was stopped. */
  readonly finished: boolean
}

/**
 * Runs the loop. Nothing is ever pending between an ask and its tell here, so an optimiser that
 * answers 'wait' is broken (it waits for results it already has): that throws.
 */
export function optimizeInProcess<V>(
  optimizer: Optimizer,
  evaluate: (trial: Trial) => Evaluation<V>,
  options: LoopOptions<V> = {},
): LoopOutcome<V> {
  const steps: LoopStep<V>[] = []
  for (;;) {
    if (options.maxTrials !== undefined && steps.length >= options.maxTrials) return {steps, finished: false}
    if (options.proceed && !options.proceed(steps)) return {steps, finished: false}
    const t0 = performance.now()
    const trial = optimizer.ask()
    const askMs = performance.now() - t0
    if (trial === 'done') return {steps, finished: true}
    if (trial === 'wait') throw new Error(`${optimizer.name}: the optimiser waits with nothing running`)
    const {result, value, budget} = evaluate(trial)
    const t1 = performance.now()
    optimizer.tell(trial.id, result)
    const tellMs = performance.now() - t1
    const step: LoopStep<V> = {
      trial,
      result,
      value,
      askMs,
      tellMs,
      budget: budget ?? trial.budget,
      status: result.status,
      loss: result.status === 'ok' ? result.loss : undefined,
    }
    steps.push(step)
    options.onStep?.(step, steps)
  }
}
