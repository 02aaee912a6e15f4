import {cpus, loadavg} from 'node:os'
import {InputError} from '../util/errors.js'
import {hashString} from '../util/rng.js'
import {compareScorers, judgedMean, type ScorerComparison} from './compare.js'
import {numDocs, numQueries} from './dataset.js'
import {scoreDataset, type LambdaMartModel, type LambdaMartParams} from './lambdamart.js'
import {NdcgEvaluator, PRIMARY_CUTOFF} from './ndcg.js'
import {
  PEER_QUALITY_THREADS,
  PEER_TIMING_THREADS,
  peerSettings,
  runXgboostPeer,
  type PeerRun,
  type PeerSettings,
} from './peer.js'
import {SPLIT_NAMES, type SplitFiles, type SplitName, type Splits} from './splits.js'
import {formatMetric, signed, table} from './table.js'

/** LambdaMART against the peer on one split: both scoring conventions, and the paired interval. */
interface PeerSplitComparison {
  /** Mean NDCG@10 over judged queries (kt's convention) and over all queries with an unjudged query scoring 1 (XGBoost's and LightGBM's). */
  kt: {judged: number; all_unjudged_as_1: number}
  peer: {judged: number; all_unjudged_as_1: number}
  /** kt minus the peer over the judged queries, paired bootstrap. */
  delta: ScorerComparison
}

export interface PeerReport {
  peer: string
  settings: PeerSettings
  /** XGBoost's nthread in the runs whose scores are compared (PEER_QUALITY_THREADS). */
  threads: number
  /** kt's gradient truncation (0 = every pair, which is what XGBoost 1.7's rank:ndcg uses). */
  kt_truncation: number
  splits: Partial<Record<SplitName, PeerSplitComparison>>
  /**
   * The one-thread run's NDCG@10 on the first scored split (it is trained for the timing anyway):
   * not what kt is compared with, shown because XGBoost's scores change with its thread count.
   */
  one_thread?: {split: SplitName; judged: number; all_unjudged_as_1: number}
  /** Training times: they vary from run to run (everything else here is deterministic). */
  timing: PeerTiming
}

/** One peer run's training time, ms. */
interface PeerRunTime {
  threads: number
  omp_wait_policy: string
  train_ms: number
  /** CPU time of all of the peer's threads. */
  train_cpu_ms: number
}

/**
 * Training time of kt (one thread, this process) against the peer run two ways: with one thread
 * (the CPU-fair comparison: the same work on the same single core; the one the issue's <= 2x target
 * is judged on, since kt's trainer is single-threaded and CPU time is what other processes on a
 * shared machine do not inflate) and with XGBoost's default threads (its wall time as users run it,
 * the run whose scores are compared).
 */
interface PeerTiming {
  /** kt's training, which in `kt rerank train` includes scoring every given split after each tree (the learning curve). */
  kt_train_ms: number
  kt_train_cpu_ms: number
  peer_one_thread: PeerRunTime
  peer_default_threads: PeerRunTime
  /**
   * kt CPU / the one-thread peer's CPU. Informative only: kt's time here includes scoring every
   * split after each tree, on whatever data was given; the target (100 trees on MQ2008)
   * is judged by `kt bench rerank`, which times training alone.
   */
  cpu_ratio_one_thread: number
  /** kt wall / the default-thread peer's wall. */
  wall_ratio_default_threads: number
  /** One-minute load average and cores when measured. */
  load_average: number
  cores: number
}

/** Mean of per-query values over every query, an unjudged query counting 1 (XGBoost's and LightGBM's convention). */
export function meanUnjudgedAsOne(judged: Float64Array, totalQueries: number): number {
  let sum = totalQueries - judged.length
  for (const v of judged) sum += v
  return sum / totalQueries
}

/** A peer run's training time in ms. */
function runTime(run: PeerRun): PeerRunTime {
  return {
    threads: run.threads,
    omp_wait_policy: run.omp_wait_policy,
    train_ms: run.train_s * 1000,
    train_cpu_ms: run.train_cpu_s * 1000,
  }
}

/**
 * Runs the peer on every evaluated split with PEER_QUALITY_THREADS and pairs its per-query NDCG@10
 * with LambdaMART's; then trains it once more with one thread for the CPU-fair timing.
 */
export function comparePeer(
  data: Splits,
  options: {files: SplitFiles; params: LambdaMartParams; seed: number; peer?: string},
  model: LambdaMartModel,
  ktTime: {wall: number; cpu: number},
  present: readonly SplitName[],
): PeerReport {
  const settings = peerSettings(options.params)
  const splits: PeerReport['splits'] = {}
  let peerName: string = options.peer!
  let defaultRun: PeerRun | undefined
  const scored = present.filter((name) => name !== 'train')
  for (const name of scored) {
    const split = data[name]!
    const run = runXgboostPeer(options.files.train, options.files[name]!, settings, PEER_QUALITY_THREADS)
    if (run.scores.length !== numDocs(split))
      throw new InputError(options.files[name]!, `${numDocs(split)} scores from the peer`, String(run.scores.length))
    peerName = run.peer
    defaultRun ??= run
    const evaluator = new NdcgEvaluator(split, [PRIMARY_CUTOFF])
    const own = evaluator.perQuery(scoreDataset(model, split), PRIMARY_CUTOFF)
    const theirs = evaluator.perQuery(run.scores, PRIMARY_CUTOFF)
    splits[name] = {
      kt: {judged: judgedMean(own), all_unjudged_as_1: meanUnjudgedAsOne(own, numQueries(split))},
      peer: {judged: judgedMean(theirs), all_unjudged_as_1: meanUnjudgedAsOne(theirs, numQueries(split))},
      delta: compareScorers('xgboost', own, theirs, hashString(`${options.seed}/peer/${name}`)),
    }
  }
  // With only a training file the peer still trains (scoring the training file) so both timings exist.
  const scoreFile = options.files[scored[0] ?? 'train']!
  defaultRun ??= runXgboostPeer(options.files.train, scoreFile, settings, PEER_QUALITY_THREADS)
  const oneThread = runXgboostPeer(options.files.train, scoreFile, settings, PEER_TIMING_THREADS)
  let oneThreadNdcg: PeerReport['one_thread']
  if (scored.length > 0) {
    const split = data[scored[0]]!
    const perQuery = new NdcgEvaluator(split, [PRIMARY_CUTOFF]).perQuery(oneThread.scores, PRIMARY_CUTOFF)
    oneThreadNdcg = {
      split: scored[0],
      judged: judgedMean(perQuery),
      all_unjudged_as_1: meanUnjudgedAsOne(perQuery, numQueries(split)),
    }
  }
  const cpuRatio = ktTime.cpu / (oneThread.train_cpu_s * 1000)
  return {
    peer: peerName,
    settings,
    threads: PEER_QUALITY_THREADS,
    kt_truncation: options.params.truncation,
    splits,
    ...(oneThreadNdcg ? {one_thread: oneThreadNdcg} : {}),
    timing: {
      kt_train_ms: ktTime.wall,
      kt_train_cpu_ms: ktTime.cpu,
      peer_one_thread: runTime(oneThread),
      peer_default_threads: runTime(defaultRun),
      cpu_ratio_one_thread: cpuRatio,
      wall_ratio_default_threads: ktTime.wall / (defaultRun.train_s * 1000),
      load_average: loadavg()[0],
      cores: cpus().length,
    },
  }
}

/** The peer's timing lines: the judged one-thread CPU ratio, then XGBoost's default-thread wall time. */
export function formatPeerTiming(p: PeerReport): string[] {
  const t = p.timing
  const ms = (x: number): string => x.toFixed(0)
  const one = t.peer_one_thread
  const dflt = t.peer_default_threads
  return [
    `- ${p.peer}, ${one.threads} thread: ${ms(one.train_cpu_ms)} ms of CPU (${ms(one.train_ms)} ms wall). kt / ${p.peer} CPU time: ${t.cpu_ratio_one_thread.toFixed(2)}x (one thread each: the same core, and CPU time is not inflated by other processes competing for the cores). Not judged here: kt's time includes scoring every split after each tree, and small data is dominated by fixed costs; the issue's target (100 trees on MQ2008) is judged by \`kt bench rerank\`, which times training alone.`,
    `- ${p.peer}, ${dflt.threads} threads (its default here; the run compared above; OpenMP wait policy ${dflt.omp_wait_policy}): ${ms(dflt.train_ms)} ms wall (${ms(dflt.train_cpu_ms)} ms of CPU). kt wall / ${p.peer} wall: ${t.wall_ratio_default_threads.toFixed(2)}x (not judged: kt uses one thread, and wall time counts waits for a core).`,
    `- kt's time includes scoring every given split after each tree (the learning curve); \`kt bench rerank\` times training alone. Load average ${t.load_average.toFixed(2)} on ${t.cores} cores.`,
  ]
}

/** The peer section of the human report (quality only; its timing is in the report's last section). */
export function formatPeer(p: PeerReport): string {
  const s = p.settings
  const lines = [
    `LambdaMART against ${p.peer} rank:ndcg with the same settings (depth ${s.depth}, eta ${s.eta}, ${s.rounds} rounds, min_child_weight ${s.min_child_weight}, lambda ${s.l2}; XGBoost on ${p.threads} threads, its default on the 2-core machine of the issue's reference: its scores depend on the thread count), NDCG@${PRIMARY_CUTOFF}:`,
  ]
  const rows = SPLIT_NAMES.filter((n) => p.splits[n]).map((n) => {
    const c = p.splits[n]!
    return [
      `${n} (${c.delta.queries} judged q)`,
      formatMetric(c.kt.judged),
      formatMetric(c.peer.judged),
      formatMetric(c.kt.all_unjudged_as_1),
      formatMetric(c.peer.all_unjudged_as_1),
      signed(c.delta.delta),
      `[${signed(c.delta.low)}, ${signed(c.delta.high)}]`,
    ]
  })
  const first = p.splits.test ?? p.splits.valid
  if (first)
    lines.push(
      table(
        [
          'split',
          'kt judged',
          'peer judged',
          'kt all (unjudged=1)',
          'peer all (unjudged=1)',
          'kt - peer (judged)',
          `${Math.round(100 * first.delta.confidence)}% paired interval`,
        ],
        rows,
        1,
      ),
    )
  else lines.push('(no --valid or --test split: nothing to compare; timing only)')
  if (p.one_thread)
    lines.push(
      `${p.peer} on ${PEER_TIMING_THREADS} thread (the run timed for the CPU ratio, not compared): ${p.one_thread.split} ${formatMetric(p.one_thread.judged)} judged, ${formatMetric(p.one_thread.all_unjudged_as_1)} over all queries; its sums, and so its scores, depend on the thread count.`,
    )
  if (p.kt_truncation > 0)
    lines.push(
      `Note: kt's gradients are truncated at NDCG@${p.kt_truncation}; the peer uses every pair. --truncation 0 makes the settings the same.`,
    )
  return lines.join('\n')
}
