/**
 * `kt bench optimizers --suite all`: kt's optimisers run on the broader suite, set beside Optuna's
 * cached runs (peer-cache.ts), one row per (function, checkpoint): median [IQR] regret of each,
 * whether kt is ahead of every Optuna sampler, and its ratio to the best of them.
 */
import {median, quantile} from '../../stats/summary.js'
import type {OptimizerName, OptimizerSettings} from '../../search/optimizers.js'
import {ktProposer, runSuite, SUITE_CHECKPOINTS, type SuiteRun} from './run.js'

interface SuiteCell {
  readonly function: string
  readonly checkpoint: number
  /** Median regret by optimiser (kt's, then optuna-<sampler>). */
  readonly medians: Readonly<Record<string, number | null>>
  readonly iqr: Readonly<Record<string, readonly [number, number] | null>>
  /** kt's median below every Optuna sampler's. */
  readonly ahead: boolean
  /** kt's median over the best Optuna median (Infinity when that is 0 and kt's is not). */
  readonly ratio: number
}

export interface SuiteReport {
  readonly optimizer: string
  readonly seeds: readonly number[]
  readonly cells: readonly SuiteCell[]
  /** Cells where kt is ahead of every Optuna sampler. */
  readonly ahead: number
  /** Cells where kt's median is more than 1.5x the best Optuna median. */
  readonly behind_1_5x: number
}

/** Runs a kt optimiser on every function and seed of the suite. */
async function runKtSuite(
  name: OptimizerName,
  functions: readonly string[],
  seeds: readonly number[],
  settings: OptimizerSettings = {},
  label: string = name,
): Promise<SuiteRun[]> {
  const runs: SuiteRun[] = []
  for (const fn of functions)
    for (const seed of seeds) runs.push(await runSuite(fn, label, ktProposer(name, fn, seed, settings), seed))
  return runs
}

function stats(values: readonly (number | null)[]): {median: number | null; iqr: [number, number] | null} {
  const xs = values.filter((v): v is number => v !== null && Number.isFinite(v))
  if (xs.length === 0) return {median: null, iqr: null}
  return {median: median(xs), iqr: [quantile(xs, 0.25), quantile(xs, 0.75)]}
}

/** The (function, checkpoint) cells of kt's runs against the peers' runs on the same seeds. */
export function suiteReport(
  kt: readonly SuiteRun[],
  peers: readonly SuiteRun[],
  seeds: readonly number[],
): SuiteReport {
  const optimizer = kt[0]?.optimizer ?? 'kt'
  const seedSet = new Set(seeds)
  const functions = [...new Set(kt.map((r) => r.function))]
  const peerNames = [...new Set(peers.map((r) => r.optimizer))]
  const cells: SuiteCell[] = []
  for (const fn of functions)
    SUITE_CHECKPOINTS.forEach((checkpoint, k) => {
      const medians: Record<string, number | null> = {}
      const iqr: Record<string, readonly [number, number] | null> = {}
      for (const name of [optimizer, ...peerNames]) {
        const runs = (name === optimizer ? kt : peers).filter(
          (r) => r.function === fn && r.optimizer === name && seedSet.has(r.seed),
        )
        if (runs.length === 0) continue
        const s = stats(runs.map((r) => r.regret[k]))
        medians[name] = s.median
        iqr[name] = s.iqr
      }
      const mine = medians[optimizer] ?? Infinity
      const others = peerNames.filter((p) => p in medians).map((p) => medians[p] ?? Infinity)
      const best = others.length > 0 ? Math.min(...others) : Infinity
      cells.push({
        function: fn,
        checkpoint,
        medians,
        iqr,
        ahead: others.length > 0 && others.every((o) => mine < o),
        ratio: best > 0 ? mine / best : mine > 0 ? Infinity : 1,
      })
    })
  return {
    optimizer,
    seeds,
    cells,
    ahead: cells.filter((c) => c.ahead).length,
    behind_1_5x: cells.filter((c) => c.ratio > 1.5).length,
  }
}

const fmt = (x: number | null | undefined): string => (x === null || x === undefined ? 'n/a' : x.toPrecision(3))

/** A Markdown table of the report, one row per cell, and a closing line with the counts. */
export function suiteTable(report: SuiteReport): string {
  const names = [...new Set(report.cells.flatMap((c) => Object.keys(c.medians)))]
  const head = `| function | @b_max | ${names.map((n) => `${n} median [IQR]`).join(' | ')} | ahead of all | ratio to best peer |`
  const rule = `|${' --- |'.repeat(names.length + 4)}`
  const rows = report.cells.map((c) => {
    const cols = names.map((n) => {
      const q = c.iqr[n]
      return q ? `${fmt(c.medians[n])} [${fmt(q[0])}, ${fmt(q[1])}]` : fmt(c.medians[n])
    })
    return `| ${c.function} | ${c.checkpoint} | ${cols.join(' | ')} | ${c.ahead ? 'yes' : 'no'} | ${c.ratio.toFixed(2)} |`
  })
  const n = report.cells.length
  const summary = `${report.optimizer} ahead of every Optuna sampler in ${report.ahead}/${n} cells (${((100 * report.ahead) / Math.max(1, n)).toFixed(0)}%); more than 1.5x behind the best in ${report.behind_1_5x}`
  return [head, rule, ...rows, '', summary].join('\n')
}

export interface SuiteBenchOptions {
  readonly functions: readonly string[]
  readonly seeds: readonly number[]
  readonly optimizers: readonly OptimizerName[]
  readonly settings?: OptimizerSettings
  /** Re-run Optuna and rewrite the committed cache instead of reading it. */
  readonly refreshPeer?: boolean
  readonly progress?: (text: string) => void
}

/** `kt bench optimizers --suite all`: kt's optimisers run now, Optuna's read from its cache (or re-run). */
export async function suiteBench(
  options: SuiteBenchOptions,
): Promise<{reports: SuiteReport[]; runs: SuiteRun[]; peer_runs: readonly SuiteRun[]}> {
  const progress = options.progress ?? (() => {})
  const {readOptunaCache, refreshOptunaCache} = await import('./peer-cache.js')
  const cache = options.refreshPeer
    ? await refreshOptunaCache(options.functions, options.seeds, undefined, (r) =>
        progress(`optuna ${r.function} ${r.optimizer} seed ${r.seed}`),
      )
    : readOptunaCache()
  const peerRuns = cache.runs.filter((r) => options.functions.includes(r.function))
  const runs: SuiteRun[] = []
  const reports: SuiteReport[] = []
  for (const name of options.optimizers) {
    progress(`kt ${name}`)
    const mine = await runKtSuite(name, options.functions, options.seeds, options.settings)
    runs.push(...mine)
    reports.push(suiteReport(mine, peerRuns, options.seeds))
  }
  return {reports, runs, peer_runs: peerRuns}
}
