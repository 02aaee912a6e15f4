/**
 * Tables, target checks and the regret-vs-budget chart of `kt bench optimizers`.
 */
import {InputError} from '../util/errors.js'
import {
  BUDGET_CHECKPOINTS,
  budgetGrid,
  budgetToReach,
  EVAL_CHECKPOINTS,
  medianRegretByBudget,
  summarizeRuns,
  type BenchRun,
  type CheckpointSummary,
  type OptimizerSummary,
} from './optimizers.js'

/** Log-scale charts cannot show a regret of exactly 0; such points are drawn at this floor. */
const CHART_REGRET_FLOOR = 1e-6
/** Budget resolution of the chart and of the budget-to-target search (b_max units). */
const CHART_BUDGET_STEP = 0.5
/** The challenger should reach the baseline's final regret with at most this share of the budget. */
const TARGET_BUDGET_SHARE = 1 / 3

/** Parses `0-9`, `0,3,5` or `2` into seeds. */
export function parseSeeds(text: string): number[] {
  const seeds: number[] = []
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const range = /^(\d+)-(\d+)$/.exec(part)
    if (range) {
      const [a, b] = [Number(range[1]), Number(range[2])]
      if (a > b) throw new InputError('--seeds', 'a range LOW-HIGH with LOW <= HIGH', part)
      for (let s = a; s <= b; s++) seeds.push(s)
    } else if (/^\d+$/.test(part)) seeds.push(Number(part))
    else throw new InputError('--seeds', 'seeds like 0-9 or 0,1,2', JSON.stringify(part))
  }
  if (seeds.length === 0) throw new InputError('--seeds', 'at least one seed', JSON.stringify(text))
  return [...new Set(seeds)]
}

function fmt(x: number | null): string {
  if (x === null) return '-'
  if (x === 0) return '0'
  const a = Math.abs(x)
  return a >= 100 ? x.toFixed(0) : a >= 0.01 ? x.toPrecision(3) : x.toExponential(2)
}

function cell(s: CheckpointSummary): string {
  return s.median === null ? '-' : `${fmt(s.median)} [${fmt(s.iqr)}]`
}

/** Rows per (function, optimizer) of median [IQR] regret at each checkpoint. */
export function summaryTable(summaries: readonly OptimizerSummary[]): string {
  const header = [
    'function',
    'optimizer',
    ...EVAL_CHECKPOINTS.map((n) => `${n} ev`),
    ...BUDGET_CHECKPOINTS.map((b) => `${b} bmax`),
    'suggest ms med/p99',
  ]
  const rows = summaries.map((s) => [
    s.function,
    s.optimizer,
    ...EVAL_CHECKPOINTS.map((n) => cell(s.at_evals[String(n)])),
    ...BUDGET_CHECKPOINTS.map((b) => cell(s.at_budget[String(b)])),
    `${s.suggest_ms_median.toFixed(3)}/${s.suggest_ms_p99.toFixed(2)}`,
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  const line = (r: string[]): string =>
    r
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd()
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n')
}

export interface TargetCheck {
  readonly function: string
  readonly challenger: string
  readonly baseline: string
  /** Checkpoints where the challenger's median regret is not below the baseline's. */
  readonly not_below: string[]
  readonly below_everywhere: boolean
  /** Baseline's median regret at its last budget checkpoint. */
  readonly baseline_final: number | null
  /** Budget (b_max units) at which the challenger's median reaches baseline_final, continuation accounting. */
  readonly budget_to_reach: number | null
  readonly budget_to_reach_scratch: number | null
  /** budget_to_reach / last checkpoint (target: <= 1/3). */
  readonly budget_share: number | null
}

/** Compares a challenger (bohb) with a baseline (random) on one function. */
export function checkTargets(challenger: readonly BenchRun[], baseline: readonly BenchRun[]): TargetCheck {
  const c = summarizeRuns(challenger)
  const b = summarizeRuns(baseline)
  const notBelow: string[] = []
  const compare = (label: string, x: CheckpointSummary, y: CheckpointSummary): void => {
    if (x.median === null || y.median === null || !(x.median < y.median)) notBelow.push(label)
  }
  for (const n of EVAL_CHECKPOINTS) compare(`${n} evaluations`, c.at_evals[String(n)], b.at_evals[String(n)])
  for (const k of BUDGET_CHECKPOINTS) compare(`${k} b_max`, c.at_budget[String(k)], b.at_budget[String(k)])
  const last = Math.max(...BUDGET_CHECKPOINTS)
  const target = b.at_budget[String(last)].median
  const grid = budgetGrid(last, CHART_BUDGET_STEP)
  const reach = target === null ? null : budgetToReach(challenger, target, grid)
  return {
    function: c.function,
    challenger: c.optimizer,
    baseline: b.optimizer,
    not_below: notBelow,
    below_everywhere: notBelow.length === 0,
    baseline_final: target,
    budget_to_reach: reach,
    budget_to_reach_scratch: target === null ? null : budgetToReach(challenger, target, grid, true),
    budget_share: reach === null ? null : reach / last,
  }
}

export function targetLines(checks: readonly TargetCheck[]): string {
  return checks
    .map((t) => {
      const first = `${t.function}: ${t.challenger} median regret below ${t.baseline}'s at every checkpoint: ${t.below_everywhere ? 'yes' : `no (not at ${t.not_below.join(', ')})`}`
      const reach =
        t.budget_to_reach === null
          ? `never reaches ${t.baseline}'s ${fmt(t.baseline_final)} within ${Math.max(...BUDGET_CHECKPOINTS)} b_max`
          : `reaches ${t.baseline}'s regret at ${Math.max(...BUDGET_CHECKPOINTS)} b_max (${fmt(t.baseline_final)}) after ${t.budget_to_reach} b_max = ${(t.budget_share! * 100).toFixed(1)}% of the budget (${t.budget_share! <= TARGET_BUDGET_SHARE + 1e-12 ? 'meets' : 'misses'} the 1/3 target; from-scratch accounting: ${t.budget_to_reach_scratch ?? 'never'} b_max)`
      return `${first}\n  ${reach}`
    })
    .join('\n')
}

/** Vega-lite spec: median regret (IQR band) against consumed budget, one panel per function. */
export function regretChartSpec(runsByGroup: ReadonlyMap<string, readonly BenchRun[]>): Record<string, unknown> {
  const values: Array<Record<string, unknown>> = []
  const last = Math.max(...BUDGET_CHECKPOINTS)
  const grid = budgetGrid(last, CHART_BUDGET_STEP)
  for (const runs of runsByGroup.values()) {
    for (const p of medianRegretByBudget(runs, grid)) {
      if (p.median === null) continue
      const floor = (x: number | null): number | null => (x === null ? null : Math.max(CHART_REGRET_FLOOR, x))
      values.push({
        function: runs[0].function,
        optimizer: runs[0].optimizer,
        budget: p.budget,
        median: floor(p.median),
        q25: floor(p.q25),
        q75: floor(p.q75),
      })
    }
  }
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: `Median regret (IQR band) vs consumed budget, ${new Set([...runsByGroup.values()].map((r) => r.length)).size === 1 ? [...runsByGroup.values()][0].length : 'n'} seeds`,
    data: {values},
    facet: {field: 'function', type: 'nominal', title: null},
    columns: 3,
    resolve: {scale: {y: 'independent'}},
    spec: {
      width: 260,
      height: 180,
      layer: [
        {
          mark: {type: 'area', opacity: 0.18},
          encoding: {
            x: {field: 'budget', type: 'quantitative', title: 'budget (b_max, continuation accounting)'},
            y: {
              field: 'q25',
              type: 'quantitative',
              scale: {type: 'log'},
              title: `regret (log; ${CHART_REGRET_FLOOR} = 0)`,
            },
            y2: {field: 'q75'},
            color: {field: 'optimizer', type: 'nominal'},
          },
        },
        {
          mark: {type: 'line', interpolate: 'step-after'},
          encoding: {
            x: {field: 'budget', type: 'quantitative'},
            y: {field: 'median', type: 'quantitative', scale: {type: 'log'}},
            color: {field: 'optimizer', type: 'nominal'},
          },
        },
      ],
    },
  }
}
