/**
 * The study `kt bench workers` runs (workers.ts) and `kt bench bohb-overhead` replays in one
 * process (bohb-overhead.ts): BOHB on counting_ones with this seed, at these worker process
 * counts, this many trials per process. One table, read by both benches and the command's flag
 * defaults; kept free of imports so that the command's --help loads nothing heavy.
 *
 * trialsPerProcess: a worker's first few dozen trials run on code V8 has not optimised yet, so a
 * short study measures start-up rather than the steady-state rate a long study runs at (the
 * 40-against-160 comparison: docs/measurements.md, "Steady state: 160 trials per process").
 */
export const WORKERS_WORKLOAD = {seed: 42, trialsPerProcess: 160, processes: [1, 2, 4, 8]} as const
