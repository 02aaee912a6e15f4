/**
 * The study `kt bench workers` runs (src/bench/workers.ts) and `kt bench bohb-overhead` replays in
 * one process (src/search/overhead.ts): BOHB on counting_ones with this seed, at these worker
 * process counts, this many trials per process. One table, read by both benches and the command's
 * flag defaults. Kept free of imports so that the command's --help loads nothing heavy.
 *
 * trialsPerProcess: a worker's first few dozen trials run on code V8 has not optimised yet (its
 * optimiser copy, the pg client, the runner): measured 03:35-03:38 on 2026-12-02 in one sitting
 * (load 3.7-5.2), alternating, worker CPU per trial was 7.0-8.1 ms over 40 trials per process and
 * 5.4-5.9 ms over 160, and the share of ideal at 4 / 8 processes 75.6-84.2 / 60.7-62.9% against
 * 85.3-89.5 / 73.5-75.9%. A study long enough to need many machines runs at the steady-state rate,
 * which 160 trials (about 9 s per configuration) approaches; the whole window is still counted,
 * warm-up and the end included.
 */
export const WORKERS_WORKLOAD = {seed: 42, trialsPerProcess: 160, processes: [1, 2, 4, 8]} as const
