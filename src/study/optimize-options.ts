/** What optimizeStudy (optimize.ts) is given, what it fills as it goes, and what it returns. */
import type {Config} from '../space/index.js'
import type {Objective, Optimizer, Trial} from '../search/types.js'
import type {Outcome} from './evaluate.js'
import type {ObjectiveSpec} from './objectives.js'
import type {RunLimits, StudyProgress} from './replica.js'
import type {CoordinationStats, StudyStorage} from './storage.js'

export interface RunOptions extends RunLimits {
  readonly storage: StudyStorage
  readonly study: string
  readonly seed: number
  /** Builds a fresh optimiser (the process's replica; rebuilt from the store after a lost connection). */
  readonly createOptimizer: () => Optimizer
  /** The objective, built in this thread (used for its fidelity, and for evaluation when not on threads). */
  readonly objective: Objective
  /** How worker threads rebuild the objective (required when workers > 1 or threads is set). */
  readonly objectiveSpec?: ObjectiveSpec
  /** Values of parameters taken out of the search (--fix). */
  readonly fixed?: Config
  /** In-process concurrency: trials this process evaluates at once. */
  readonly workers?: number
  /** Evaluate on worker threads even with one slot (keeps heartbeats going during a CPU-bound trial). */
  readonly threads?: boolean
  /** Passed to every evaluation as ctx.artifactsDir (files a trial keeps beside the study). */
  readonly artifactsDir?: string
  readonly timeoutMs?: number
  /** A running trial whose heartbeat is older than this is taken over (ms). */
  readonly graceMs?: number
  /** Aborting stops asking and returns at once; this process's running trials are released for others. */
  readonly signal?: AbortSignal
  /** Called after each trial this process evaluated is stored. */
  /** Called as each trial is recorded; `progress` is the study's trials asked and budget used so far (all processes). */
  readonly onTrial?: (trial: Trial, outcome: Outcome, progress: StudyProgress) => void
  /** One-line notices (a lost database connection, its return). */
  readonly log?: (line: string) => void
  /** Start working at this time (ms since the epoch), once connected and warmed up: benchmarks start many processes together. */
  readonly startAt?: number
  readonly now?: () => string
  /** Filled as the run goes: where this process's time went (kt bench workers). */
  readonly timing?: WorkerTiming
}

/** Where one worker process's time went, summed over its slots (ms), from its start of work. */
export interface WorkerTiming {
  /** Wall time from the start of work to the end. */
  wallMs: number
  /** Process CPU (all threads) over that time. */
  cpuMs: number
  /**
   * Locked sections run, and the time slots spent in them (queueing, lock wait and work) until the
   * trial handed out could begin: on PostgreSQL the commit's fsync then overlaps the evaluation.
   */
  sections: number
  sectionMs: number
  /** Wall time in the optimiser copy (replay, tell, ask), in or out of sections; about its CPU on an idle machine. */
  optimizerMs: number
  /** Slots evaluating trials (checkpoint fetch included). */
  evaluateMs: number
  /** Slots waiting for a change (nothing to hand out). */
  waitMs: number
  evaluated: number
  /** How late this process began work after options.startAt (warm-up not done in time), ms. */
  lateMs?: number
  /** When its last evaluation ended (ms since the epoch). */
  lastEvaluatedAt?: number
  /** The storage's counters (round trips, lock wait and hold), when it keeps them. */
  coordination?: CoordinationStats
}

export function newWorkerTiming(): WorkerTiming {
  return {wallMs: 0, cpuMs: 0, sections: 0, sectionMs: 0, optimizerMs: 0, evaluateMs: 0, waitMs: 0, evaluated: 0}
}

export interface RunSummary {
  readonly asked: number
  /** Trials finished in the store (before and during this run, by any worker). */
  readonly finished: number
  readonly ok: number
  readonly failed: number
  /** Finished trials taken from the store instead of evaluated when this process joined. */
  readonly replayed: number
  /** Trials of stopped workers (or interrupted runs) this process took over and evaluated again. */
  readonly rerun: number
  /** Trials evaluated by this process. */
  readonly evaluated: number
  /** Budget consumed, in units of the maximum budget (continuation accounting). */
  readonly budgetUsed: number
  readonly stoppedBy: 'done' | 'trials' | 'budget' | 'aborted'
}

/** Fills the timing's totals from the start of work (not the connection's set-up): CPU, wall time and the storage's counters. */
export function closeWorkerTiming(
  timing: WorkerTiming,
  cpu0: NodeJS.CpuUsage,
  wall0: number,
  coordination0: CoordinationStats | undefined,
  coordination1: CoordinationStats | undefined,
): void {
  const c0 = coordination0 ?? {roundTrips: 0, lockWaitMs: 0, lockHeldMs: 0, durableMs: 0}
  const c1 = coordination1
  timing.coordination = c1 && {
    roundTrips: c1.roundTrips - c0.roundTrips,
    lockWaitMs: c1.lockWaitMs - c0.lockWaitMs,
    lockHeldMs: c1.lockHeldMs - c0.lockHeldMs,
    durableMs: (c1.durableMs ?? 0) - (c0.durableMs ?? 0),
  }
  const cpu = process.cpuUsage(cpu0)
  timing.cpuMs = (cpu.user + cpu.system) / 1000
  timing.wallMs = performance.now() - wall0
}
