/**
 * The ask/tell contract every kt optimiser implements, modelled on Optuna's ask-and-tell interface:
 * the optimiser proposes a trial (`ask`), somebody evaluates it, and the result comes back (`tell`).
 * The optimiser never calls the objective itself, so one study loop serves every optimiser, any
 * number of workers, and resumption from a store.
 */
import type {Config} from '../space/index.js'

// the objective contract (Objective, EvalResult, ...) lives in src/space/objective.ts, below the engine adapters that implement it
export type {Checkpoint, EvalContext, EvalResult, Fidelity, Objective} from '../space/objective.js'
export {TIMING_METRIC_PREFIX, splitTimingMetrics} from '../space/objective.js'

/** One evaluation request: a configuration at a budget. */
export interface Trial {
  /** Sequential id within the study (0, 1, 2, ...), in ask order. */
  readonly id: number
  /**
   * The configuration's identity. A configuration promoted to a higher budget keeps its id, so the
   * objective can reuse its lower-budget work and its noise stream stays the same.
   */
  readonly configId: string
  readonly config: Config
  /** Budget in the objective's own units (queries, samples); 1 for single-fidelity objectives. */
  readonly budget: number
  /**
   * Set when this trial continues a lower-budget evaluation of the same configuration: the id of
   * that trial and its budget. The runner passes its checkpoint to the objective.
   */
  readonly continues?: {readonly trialId: number; readonly budget: number}
  /** Optimiser-specific provenance (bracket, rung, model-based pick), kept in the store. */
  readonly info?: Readonly<Record<string, number | string | boolean>>
}

type TrialStatus = 'ok' | 'failed'

/** What is told back about a trial. A failed trial has no loss and is never promoted. */
export interface TrialResult {
  readonly status: TrialStatus
  /** Scalar loss to minimise (required when status is ok). */
  readonly loss?: number
  /**
   * Optional objective vector, every entry minimised (e.g. [-quality, p99_ms]). Optimisers that
   * support several objectives rank by it; others use `loss`.
   */
  readonly values?: readonly number[]
}

/** An optimiser behind the ask/tell contract. */
export interface Optimizer {
  /** Short name: grid, random, bohb, hyperband. */
  readonly name: string
  /**
   * The next trial to evaluate, `'wait'` when nothing can be proposed until pending trials are told
   * (synchronous successive halving), or `'done'` when the optimiser has nothing more to propose
   * (a finished grid).
   */
  ask(): Trial | 'wait' | 'done'
  tell(trialId: number, result: TrialResult): void
  /**
   * What a copy of this optimiser needs to repeat the last ask() without its expensive part (BOHB:
   * its Rng's state after the ask, checked, and which candidate won), as JSON-safe data, or undefined when that ask
   * costs little to repeat. The study store keeps it with the trial (ask_hint), so the worker
   * processes' replicas replay other workers' asks cheaply.
   */
  askHint?(): AskHint | undefined
  /**
   * ask() on a copy told the same history, for a stored trial with this hint and configuration
   * (which may also hold parameters fixed outside the search): returns what ask() returns and leaves the optimiser in the state ask() leaves,
   * bit for bit. A hint that does not reproduce `config` or fails its checks (damaged, or from
   * another version) is ignored and the ask is done in full, so a wrong hint costs time, never exactness.
   */
  replayAsk?(hint: unknown, config: Config): Trial | 'wait' | 'done'
}

/** An optimiser's replay hint (see Optimizer.askHint): plain JSON. */
export type AskHint = Readonly<Record<string, number | string | boolean>>
