import {spawnSync} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join, resolve} from 'node:path'
import {performance} from 'node:perf_hooks'
import {DEFAULT_PLAN_FILE} from '../../phases/plan.js'
import {packageRoot} from '../util/paths.js'
import {readJsonFile} from '../util/json.js'
import {max, median, min} from '../stats/summary.js'

/** Wall-time targets of the foundation issue. */
const TARGET_RUN_MS = 2000
const TARGET_HELP_MS = 200

/** Exit codes of a finished `kt run`: 0 pass, 1 an acceptance criterion failed (the default plan's verdict). */
const RUN_FINISHED = [0, 1] as const

type Spread = {median: number; min: number; max: number}

export interface CliBench {
  runs: number
  kt_run_ms: Spread
  /** The same run without the plan's retrieval study (the foundation's seven phases on the three fixtures). */
  kt_run_without_retrieval_ms: Spread
  kt_help_ms: Spread
  target_run_ms: number
  target_help_ms: number
  run_meets_target: boolean
  help_meets_target: boolean
}

/** The default plan without its retrieval study (dataset paths made absolute), written into `dir`. */
function planWithoutRetrieval(dir: string): string {
  const plan = readJsonFile(DEFAULT_PLAN_FILE) as Record<string, unknown> & {
    datasets: {tune: string; holdout: string[]; imported: string[]}
  }
  delete plan.retrieval
  const abs = (p: string) => resolve(dirname(DEFAULT_PLAN_FILE), p)
  const {tune, holdout, imported} = plan.datasets
  plan.datasets = {tune: abs(tune), holdout: holdout.map(abs), imported: imported.map(abs)}
  const file = join(dir, 'plan-without-retrieval.json')
  writeFileSync(file, JSON.stringify(plan))
  return file
}

/** Times whole `kt run` and `kt --help` processes (wall clock, as a user sees them), `runs` of each. */
export function benchCli(runs: number): CliBench {
  const bin = join(packageRoot, 'bin', 'kt.js')
  const dir = mkdtempSync(join(tmpdir(), 'kt-bench-'))
  const timed = (args: string[], finished: readonly number[] = [0]): Spread => {
    const ms = Array.from({length: runs}, () => {
      const t0 = performance.now()
      const r = spawnSync(process.execPath, [bin, ...args], {
        encoding: 'utf8',
        env: {...process.env, KT_NO_PROGRESS: '1'},
      })
      if (r.status === null || !finished.includes(r.status))
        throw new Error(`kt ${args.join(' ')} failed: ${r.stderr.split('\n')[0]}`)
      return performance.now() - t0
    })
    return {median: median(ms), min: min(ms), max: max(ms)}
  }
  try {
    const run = timed(['run', '--out', join(dir, 'run'), '--json'], RUN_FINISHED)
    const plan = planWithoutRetrieval(dir)
    const foundation = timed(['run', '--plan', plan, '--out', join(dir, 'foundation'), '--json'], RUN_FINISHED)
    const help = timed(['--help'])
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

/** The lines `kt bench cli` prints. */
export function cliBenchLines(r: CliBench): string[] {
  const spread = (s: Spread) => `median ${s.median.toFixed(0)} ms (min ${s.min.toFixed(0)}, max ${s.max.toFixed(0)})`
  const verdict = (target: number, met: boolean) => `; target < ${target} ms: ${met ? 'met' : 'MISSED'}`
  return [
    `kt run: ${spread(r.kt_run_ms)}${verdict(r.target_run_ms, r.run_meets_target)}`,
    `kt run without the plan's retrieval study: ${spread(r.kt_run_without_retrieval_ms)}`,
    `kt --help: ${spread(r.kt_help_ms)}${verdict(r.target_help_ms, r.help_meets_target)}`,
  ]
}
