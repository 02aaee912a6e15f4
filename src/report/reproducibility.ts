import type {PhaseResults} from './types.js'

/** Whether a run's report.json (outside `timing`) is a function of its inputs and seed alone, and why not when it is not. */
export interface Reproducibility {
  readonly reproducible: boolean
  /** Why not (null when it is). */
  readonly reason: string | null
}

/**
 * A run is reproducible (the same seed and inputs give a byte-identical report.json, timing
 * aside) unless a number above the timing section was measured on the clock. The one such case:
 * a plan whose retrieval study tunes an external engine with `evaluate.latency: "measured"` (the
 * default for engine files): its P99 is kt's wall time per search, and the Pareto front, the
 * profiles chosen from it and their held-out verdicts follow it. kt's own engine and engines that
 * declare `latency: "cost_model"` take P99 from counted work, which repeats exactly.
 */
export function reproducibility(phases: Partial<PhaseResults>): Reproducibility {
  const engine = phases.search?.retrieval?.engine
  if (engine?.latency === 'measured')
    return {
      reproducible: false,
      reason: `the retrieval study's P99 latency is wall time measured on the clock for the external engine ${engine.name} (${engine.file}: evaluate.latency "measured"), and the Pareto front, the retrieval profiles chosen from it and their verdicts depend on it, so the same seed can give a different report; declare a deterministic cost (evaluate.latency "cost_model") for a byte-identical one`,
    }
  return {reproducible: true, reason: null}
}
