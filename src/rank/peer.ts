import {spawnSync} from 'node:child_process'
import {existsSync} from 'node:fs'
import {join} from 'node:path'
import {InputError} from '../util/errors.js'
import {packageRoot} from '../util/paths.js'
import type {LambdaMartParams} from './lambdamart.js'

/**
 * The learning-to-rank peer kt's LambdaMART is held against: XGBoost's rank:ndcg (Debian's
 * python3-xgboost 1.7), run by src/rank/peers/xgboost_rank.py on the same files with the same
 * settings. The peer returns the score of every test document and its training time; kt computes
 * NDCG and the paired interval itself, so both rankers are measured by one piece of code.
 *
 * Threads matter to XGBoost's results, not only its speed: its gradient sums depend on how the rows
 * are split among threads (each thread count is deterministic; figures in src/rank/README.md), so
 * the scores compared come from PEER_QUALITY_THREADS, the run the issue quotes.
 */

/** Debian's interpreter, which has python3-xgboost (a pyenv python3 on PATH may not). */
const PEER_PYTHON = '/usr/bin/python3'
const XGBOOST_PEER_SCRIPT = join(packageRoot, 'src', 'rank', 'peers', 'xgboost_rank.py')
/**
 * Threads of the peer run whose scores are compared: XGBoost's default on the 2-core machine where
 * the reference (0.799 / 0.702, ../shared/ltr/README.md) was measured.
 */
export const PEER_QUALITY_THREADS = 2
/** Threads of the CPU-fair timing run: kt's trainer is single-threaded. */
export const PEER_TIMING_THREADS = 1
/**
 * OpenMP's wait policy for the peer, unless OMP_WAIT_POLICY is set: idle threads sleep instead of
 * spinning, which on a loaded shared machine multiplied the wall time (docs/measurements.md); the
 * scores are the same bit for bit (test/rank/peer.test.ts).
 */
export const PEER_OMP_WAIT_POLICY = 'passive'
/** A peer run longer than this is killed (the MQ2008 fold trains in about a second). */
const PEER_TIMEOUT_MS = 300_000

export interface PeerSettings {
  readonly depth: number
  readonly eta: number
  readonly rounds: number
  readonly min_child_weight: number
  readonly l2: number
}

export interface PeerRun {
  readonly peer: string
  readonly settings: PeerSettings
  /** XGBoost's nthread for this run. */
  readonly threads: number
  /** OpenMP's wait policy the peer ran with. */
  readonly omp_wait_policy: string
  /** Training wall time and CPU time (all of the peer's threads), seconds. */
  readonly train_s: number
  readonly train_cpu_s: number
  /** Score of every document of the scored file, in file order. */
  readonly scores: Float64Array
}

/** XGBoost's names for kt's settings: depth, eta, rounds, min_child_weight (Hessian), lambda (L2). */
export function peerSettings(params: LambdaMartParams): PeerSettings {
  if (!(params.maxDepth > 0))
    throw new InputError(
      '--depth',
      'a depth limit for the peer (XGBoost grows depth-wise; e.g. --depth 6 --leaves 64)',
      String(params.maxDepth),
    )
  return {
    depth: params.maxDepth,
    eta: params.learningRate,
    rounds: params.trees,
    min_child_weight: params.minSumHessianInLeaf,
    l2: params.l2,
  }
}

/** Whether the peer can run here (python3-xgboost installed), with the reason when not. */
export function peerAvailable(): {ok: true} | {ok: false; reason: string} {
  if (!existsSync(PEER_PYTHON)) return {ok: false, reason: `${PEER_PYTHON} not found`}
  const r = spawnSync(PEER_PYTHON, ['-c', 'import xgboost, numpy'], {encoding: 'utf8'})
  return r.status === 0
    ? {ok: true}
    : {ok: false, reason: 'python3-xgboost is not installed (apt-get install python3-xgboost)'}
}

/** Trains the peer with `threads` threads on `trainFile` (LETOR text) and scores every document of `scoreFile`. */
export function runXgboostPeer(
  trainFile: string,
  scoreFile: string,
  settings: PeerSettings,
  threads: number,
  waitPolicy: string = process.env.OMP_WAIT_POLICY ?? PEER_OMP_WAIT_POLICY,
): PeerRun {
  if (!(Number.isInteger(threads) && threads >= 1))
    throw new InputError('peer threads', 'a whole number >= 1', String(threads))
  const available = peerAvailable()
  if (!available.ok) throw new InputError('--peer xgboost', 'python3-xgboost on this machine', available.reason)
  const args = [
    XGBOOST_PEER_SCRIPT,
    trainFile,
    scoreFile,
    '--depth',
    String(settings.depth),
    '--eta',
    String(settings.eta),
    '--rounds',
    String(settings.rounds),
    '--min-child-weight',
    String(settings.min_child_weight),
    '--l2',
    String(settings.l2),
    '--threads',
    String(threads),
  ]
  const r = spawnSync(PEER_PYTHON, args, {
    encoding: 'utf8',
    env: {...process.env, OMP_WAIT_POLICY: waitPolicy},
    timeout: PEER_TIMEOUT_MS,
    maxBuffer: 256 * 1024 * 1024,
  })
  const lastLine = (text: string): string => text.trim().split('\n').pop() ?? ''
  if (r.status !== 0)
    throw new InputError(
      '--peer xgboost',
      'the peer to train and score',
      `exit ${r.status ?? r.signal}: ${lastLine(r.stderr ?? '').slice(0, 200)}`,
    )
  const out = JSON.parse(lastLine(r.stdout)) as {peer: string; train_s: number; train_cpu_s: number; scores: number[]}
  return {
    peer: out.peer,
    settings,
    threads,
    omp_wait_policy: waitPolicy,
    train_s: out.train_s,
    train_cpu_s: out.train_cpu_s,
    scores: Float64Array.from(out.scores),
  }
}
