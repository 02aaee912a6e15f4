import {spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join, resolve} from 'node:path'
import {DEFAULT_PLAN_FILE} from '../../phases/plan.js'
import {performance} from 'node:perf_hooks'
import {packageRoot} from '../util/paths.js'
import {median} from '../stats/summary.js'

/** Wall-time targets of the foundation issue. */
const TARGET_RUN_MS = 2000
const TARGET_HELP_MS = 200

export interface CliBench {
  runs: number
  kt_run_ms: {median: number; min: number; max: number}
  /** The same run without the plan's retrieval study (the foundation's seven phases on the three fixtures). */
  kt_run_without_retrieval_ms: {median: number; min: number; max: number}
  kt_help_ms: {median: number; min: number; max: number}
  target_run_ms: number
  target_help_ms: number
  run_meets_target: boolean
  help_meets_target: boolean
}

/** Exit codes of a finished `kt run`: 0 pass, 1 an acceptance criterion failed. */
const RUN_FINISHED = [0, 1] as const

/** Times whole `kt run` and `kt --help` processes (wall clock, as a user sees them). */
export function benchCli(runs: number): CliBench {
  const bin = join(packageRoot, 'bin', 'kt.js')
  const dir = mkdtempSync(join(tmpdir(), 'kt-bench-'))
  // kt run exits 1 when the study's verdict is FAIL (the default plan's is): a finished run all the same.
  const time = (args: string[], finished: readonly number[] = [0]) => {
    const t0 = performance.now()
    const r = spawnSync(process.execPath, [bin, ...args], {
      encoding: 'utf8',
      env: {...process.env, KT_NO_PROGRESS: '1'},
    })
    const ms = performance.now() - t0
    if (r.status === null || !finished.includes(r.status))
      throw new Error(`kt ${args.join(' ')} failed: ${r.stderr.split('\n')[0]}`)
    return ms
  }
  try {
    const stats = (xs: number[]) => ({median: median(xs), min: Math.min(...xs), max: Math.max(...xs)})
    const run = stats(
      Array.from({length: runs}, () => time(['run', '--out', join(dir, 'run'), '--json'], RUN_FINISHED)),
    )
    const plan = JSON.parse(readFileSync(DEFAULT_PLAN_FILE, 'utf8')) as Record<string, unknown> & {
      datasets: {tune: string; holdout: string[]; imported: string[]}
    }
    delete plan.retrieval
    const abs = (p: string) => resolve(dirname(DEFAULT_PLAN_FILE), p)
    plan.datasets = {
      tune: abs(plan.datasets.tune),
      holdout: plan.datasets.holdout.map(abs),
      imported: plan.datasets.imported.map(abs),
    }
    const planFile = join(dir, 'plan-without-retrieval.json')
    writeFileSync(planFile, JSON.stringify(plan))
    const foundation = stats(
      Array.from({length: runs}, () =>
        time(['run', '--plan', planFile, '--out', join(dir, 'foundation'), '--json'], RUN_FINISHED),
      ),
    )
    const help = stats(Array.from({length: runs}, () => time(['--help'])))
    return {
      runs,
      kt_run_ms: run,
      kt_run_without_retrieval_ms: foundation,
      kt_help_ms: help,
      target_run_ms: TARGET_RUN_MS,
      target_help_ms: TARGET_HELP_MS,
      run_meets_target: run.median < TARGET_RUN_MS,
      help_meets_target: help.median < TARGET_HELP_MS,
    }
  } finally {
    rmSync(dir, {recursive: true, force: true})
  }
}
