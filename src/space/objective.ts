/**
 * The objective contract: a function to minimise over a parameter space, at a budget. Optimisers
 * (src/search) ask for configurations and the study runner (src/study) calls `evaluate`; every
 * target implements it, from the benchmark functions to the engine adapters (src/adapters). It
 * lives below both so that the adapters need nothing from the layers above them.
 */
import type {Config, ParamSpace} from './types.js'

/** Budget levels of a multi-fidelity objective. */
export interface Fidelity {
  readonly min: number
  readonly max: number
  /** Reduction factor between budget levels (Hyperband's eta). */
  readonly eta: number
  /** false: a low budget does not rank configurations as the largest does (BOHB then runs every bracket at max). */
  readonly comparable?: boolean
}

/** A lower-budget result the objective can continue from. */
export interface Checkpoint {
  readonly budget: number
  readonly state: unknown
}

/** What the objective learns about the call besides the configuration. */
export interface EvalContext {
  readonly trialId: number
  readonly configId: string
  /** The study seed: objectives derive their noise from it and the configId, never from the clock. */
  readonly seed: number
  /** Present when the trial continues a lower-budget evaluation and the objective supports it. */
  readonly checkpoint?: Checkpoint
  /**
   * A folder this trial may keep files in (an external engine's stdout/stderr), beside the study:
   * `<storage folder>/<study>/trials`. Absent for in-memory studies.
   */
  readonly artifactsDir?: string
}

/** What an objective returns for one evaluation. */
export interface EvalResult {
  readonly loss: number
  /** Minimised objective vector for bi-objective studies, in the order of `Objective.valueNames`. */
  readonly values?: readonly number[]
  /**
   * Any further measurements (quality per query type, latency percentiles). Wall-clock timings,
   * which differ from run to run, are named with TIMING_METRIC_PREFIX so that reproducible
   * outputs can keep them apart (splitTimingMetrics).
   */
  readonly metrics?: Readonly<Record<string, number>>
  /** State a higher-budget evaluation of the same configuration can continue from (JSON). */
  readonly checkpoint?: unknown
}

/** Metrics named with this prefix are wall-clock timings (e.g. `measured_p99_ms`), not results. */
export const TIMING_METRIC_PREFIX = 'measured_'

/** Splits metrics into deterministic ones and wall-clock timings (names with TIMING_METRIC_PREFIX). */
export function splitTimingMetrics(metrics: Readonly<Record<string, number>>): {
  deterministic: Record<string, number>
  timings: Record<string, number>
} {
  const deterministic: Record<string, number> = {}
  const timings: Record<string, number> = {}
  for (const [k, v] of Object.entries(metrics)) (k.startsWith(TIMING_METRIC_PREFIX) ? timings : deterministic)[k] = v
  return {deterministic, timings}
}

/** A function to minimise over a parameter space, at a budget. */
export interface Objective {
  readonly id: string
  readonly space: ParamSpace
  /** Budget levels; absent for single-fidelity objectives (every evaluation at budget 1). */
  readonly fidelity?: Fidelity
  /** True if `evaluate` continues from `ctx.checkpoint` instead of starting over. */
  readonly continuation?: boolean
  /**
   * True if evaluations wait on other processes or servers (external engines): the study runner
   * keeps `workers` evaluations in flight in this thread instead of starting worker threads.
   */
  readonly concurrent?: boolean
  /**
   * True if `evaluate` holds the thread only briefly (the closed-form benchmark functions take
   * microseconds; a `delayMs` sleep awaits a timer). A single evaluation slot then runs in this
   * thread even where worker threads are asked for to keep heartbeats going during a long
   * computation (kt worker): a thread would keep nothing going that this one does not, and would
   * add two thread wake-ups to every trial.
   */
  readonly brief?: boolean
  /** Names of the entries of `EvalResult.values`, when the objective is multi-objective. */
  readonly valueNames?: readonly string[]
  /** Noise-free loss at full budget, for benchmarks (regret). */
  trueLoss?(config: Config): number
  /** The known minimum of `trueLoss`, for benchmarks. */
  readonly optimum?: number
  evaluate(config: Config, budget: number, ctx: EvalContext): EvalResult | Promise<EvalResult>
  /**
   * Releases what the objective holds (processes, connections). Called when a study run ends or is
   * interrupted; evaluations still in flight are cancelled (they stay 'running' for --resume).
   */
  close?(): void | Promise<void>
}
