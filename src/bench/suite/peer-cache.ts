/**
 * Optuna's suite results, cached: Optuna runs take seconds each on this machine, so the table of
 * `kt bench optimizers --suite all` reads them from a committed JSON file that
 * `kt bench optimizers --suite all --refresh-peer` regenerates for the functions and seeds asked
 * for (the other runs in the file are kept): minutes per function and seed set on this machine,
 * TPE with Hyperband on embedded20 and learning_curves the longest (its hundreds of trials).
 */
import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {packageRoot} from '../../util/paths.js'
import {writeFileAtomic} from '../../util/fs.js'
import {optunaProposer, runSuite, type SuiteRun} from './run.js'

/** The committed cache. */
const OPTUNA_CACHE = join(packageRoot, 'src', 'bench', 'suite', 'optuna-suite.json')

/** Optuna's samplers in the suite: TPE, TPE with Hyperband pruning, random (3.1 defaults). */
const OPTUNA_SAMPLERS = ['tpe', 'tpe_hb', 'random'] as const

export interface OptunaCache {
  readonly generated_by: string
  readonly optuna: string
  /** How a crashed evaluation was told to Optuna. */
  readonly failed_as: 'fail' | 'pruned'
  readonly runs: readonly SuiteRun[]
}

export function readOptunaCache(path = OPTUNA_CACHE): OptunaCache {
  return JSON.parse(readFileSync(path, 'utf8')) as OptunaCache
}

/** Runs Optuna on every function, sampler and seed and writes the cache; `progress` hears each run. */
export async function refreshOptunaCache(
  functions: readonly string[],
  seeds: readonly number[],
  path = OPTUNA_CACHE,
  progress: (run: SuiteRun) => void = () => {},
): Promise<OptunaCache> {
  const runs: SuiteRun[] = []
  for (const fn of functions)
    for (const sampler of OPTUNA_SAMPLERS)
      for (const seed of seeds) {
        const run = await runSuite(fn, `optuna-${sampler}`, optunaProposer(sampler, fn, seed, 'fail'), seed)
        runs.push(run)
        progress(run)
      }
  const before = existsSync(path) ? readOptunaCache(path).runs : []
  const cache: OptunaCache = {
    generated_by: `kt bench optimizers --suite all --refresh-peer --function ${functions.join(',')} --seeds ${seeds.join(',')}`,
    optuna: '3.1.0 (Debian python3-optuna)',
    failed_as: 'fail',
    runs: mergeRuns(before, runs, functions, seeds),
  }
  writeFileAtomic(path, `${JSON.stringify(cache)}\n`)
  return cache
}

/** The cached runs with those of the refreshed functions and seeds replaced by the new ones (the others kept). */
export function mergeRuns(
  before: readonly SuiteRun[],
  fresh: readonly SuiteRun[],
  functions: readonly string[],
  seeds: readonly number[],
): SuiteRun[] {
  return [...before.filter((r) => !(functions.includes(r.function) && seeds.includes(r.seed))), ...fresh]
}
