/** Human and JSON views of studies and search outcomes, shared by `kt search` and `kt study`. */
import {TrialTally, type BudgetRow} from './pages.js'
import type {SearchOutcome} from './search.js'
import type {StudyRecord, TrialRow} from './model.js'
import {snakeKeys} from '../util/json-keys.js'
import {
  DEFAULT_SIMPLEX_STEP,
  gridCoverage,
  gridCoverageLine,
  gridPointCount,
  type GridCoverage,
} from '../search/grid.js'
import type {OptimizerSettings} from '../search/optimizers.js'
import type {ParamSpace} from '../space/index.js'

function num(x: number | null | undefined, digits = 6): string {
  return x === null || x === undefined ? '-' : Number.isInteger(x) ? String(x) : x.toPrecision(digits)
}

/** One line per configuration value. */
export function configLines(config: Record<string, unknown>, indent = '    '): string {
  return Object.entries(config)
    .map(([k, v]) => `${indent}${k} = ${typeof v === 'number' ? num(v) : String(v)}`)
    .join('\n')
}

/** Counts of trials per budget and status. */
export function budgetTable(trials: readonly TrialRow[]): BudgetRow[] {
  return new TrialTally().addAll(trials).budgets()
}

export function trialJson(t: TrialRow): Record<string, unknown> {
  return {
    id: t.id,
    config_id: t.configId,
    budget: t.budget,
    status: t.status,
    loss: t.loss,
    values: t.values,
    metrics: t.metrics,
    config: t.config,
    continues: t.continues,
    info: t.info,
    error: t.error,
    started_at: t.startedAt,
    finished_at: t.finishedAt,
    duration_ms: t.durationMs,
    worker: workerName(t),
    thread: t.worker,
    attempts: t.attempts ?? 1,
  }
}

/**
 * Who finished a trial: its worker's host/pid (the owner without its random token), or null
 * (running, or finished before kt kept it). Its worker thread, when it ran on one, is `thread`.
 */
function workerName(t: Pick<TrialRow, 'status' | 'owner'>): string | null {
  if (t.status === 'running' || !t.owner) return null
  const parts = t.owner.split('/')
  return parts.length > 2 ? parts.slice(0, -1).join('/') : t.owner
}

/** The stored objective spec in kt's JSON style; a module objective's own options are the user's and stay verbatim. */
function objectiveJson(objective: unknown): unknown {
  if (objective === null || typeof objective !== 'object') return objective
  const {options, ...rest} = objective as Record<string, unknown>
  const spec = snakeKeys(rest) as Record<string, unknown>
  return options === undefined ? spec : {...spec, options: rest.name === 'module' ? options : snakeKeys(options)}
}

/** Stored study options in kt's JSON style; `fixed` is keyed by parameter names, which stay as the space names them. */
function optionsJson(options: Record<string, unknown>): unknown {
  const {fixed, ...rest} = options
  return {...(snakeKeys(rest) as Record<string, unknown>), ...(fixed === undefined ? {} : {fixed})}
}

/**
 * How much of its grid a grid study has evaluated (undefined for other optimisers): the state of a
 * grid study stopped at its limit or interrupted says "finished" or "interrupted", and this says
 * whether that is the whole grid.
 */
export function studyGridCoverage(
  study: Pick<StudyRecord, 'optimizer' | 'space' | 'options'>,
  trials: readonly TrialRow[],
): GridCoverage | undefined {
  if (!isGridStudy(study)) return undefined
  return gridCoverageOf(
    study,
    trials.filter((t) => t.status !== 'running').map((t) => t.configId),
  )
}

/** Whether a study is a grid study that states its coverage (its settings name the grid). */
export function isGridStudy(study: Pick<StudyRecord, 'optimizer' | 'options'>): boolean {
  const settings = (study.options as {settings?: OptimizerSettings}).settings
  return study.optimizer === 'grid' && settings?.gridPoints !== undefined
}

/** A grid study's coverage from its finished trials' configuration ids (undefined for other studies). */
export function gridCoverageOf(
  study: Pick<StudyRecord, 'optimizer' | 'space' | 'options'>,
  finishedConfigIds: readonly string[],
): GridCoverage | undefined {
  const settings = (study.options as {settings?: OptimizerSettings}).settings
  if (!isGridStudy(study) || settings?.gridPoints === undefined) return undefined
  const points = gridPointCount(
    study.space as ParamSpace,
    settings.gridPoints,
    settings.simplexStep ?? DEFAULT_SIMPLEX_STEP,
  )
  return gridCoverage(points, settings.gridPoints, finishedConfigIds, settings.gridSubset)
}

export function studyJson(study: StudyRecord, trials: readonly TrialRow[]): Record<string, unknown> {
  return studyJsonOf(study, new TrialTally({keepConfigIds: isGridStudy(study)}).addAll(trials))
}

/** The study's JSON view from a tally of its trials (streamed in pages or from a list). */
export function studyJsonOf(study: StudyRecord, tally: TrialTally): Record<string, unknown> {
  const grid = gridCoverageOf(study, tally.configIds())
  return {
    name: study.name,
    objective: objectiveJson(study.objective),
    optimizer: study.optimizer,
    seed: study.seed,
    state: study.state,
    options: optionsJson(study.options),
    created_at: study.createdAt,
    updated_at: study.updatedAt,
    trials: tally.trials,
    ok: tally.ok,
    failed: tally.failed,
    running: tally.running,
    by_budget: tally.budgets(),
    best: tally.best ? trialJson(tally.best) : null,
    ...(grid ? {grid: snakeKeys(grid)} : {}),
  }
}

export function formatSearchOutcome(
  outcome: SearchOutcome,
  storage: string,
): {text: string; json: Record<string, unknown>} {
  const {study, summary, trials, best} = outcome
  const lines = [
    `study ${study.name} (${study.optimizer}, seed ${study.seed}) in ${storage}`,
    `  trials: ${summary.finished} finished (${summary.ok} ok, ${summary.failed} failed); this run evaluated ${summary.evaluated}` +
      (summary.replayed > 0 ? `, replayed ${summary.replayed} stored results` : '') +
      (summary.rerun > 0 ? `, re-ran ${summary.rerun} interrupted trials` : ''),
    `  budget used: ${num(summary.budgetUsed, 4)} x max budget; stopped: ${summary.stoppedBy}`,
  ]
  const grid = studyGridCoverage(study, trials)
  if (grid) lines.push(`  ${gridCoverageLine(grid)}`)
  if (best)
    lines.push(
      `  best (largest budget ${num(best.budget)}): trial ${best.id}, loss ${num(best.loss)}`,
      configLines(best.config),
    )
  else lines.push('  no successful trial yet')
  return {text: lines.join('\n'), json: {...studyJson(study, trials), run: snakeKeys(summary)}}
}

/** Quotes a CSV field when needed (RFC 4180). */
function csvField(value: unknown): string {
  if (value === null || value === undefined) return ''
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value)
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
}

/** Trials as CSV: fixed columns, then one column per parameter, objective value and metric. */
export function trialsCsv(trials: readonly TrialRow[], valueNames: readonly string[] = []): string {
  const columns = new CsvColumns()
  for (const t of trials) columns.add(t)
  return columns.headerLine(valueNames) + trials.map((t) => columns.rowLine(t)).join('')
}

/**
 * The CSV's columns, learnt from every trial first (a pass over the study's pages), then one line
 * per trial: the same file whether the trials come as one list or stream in pages.
 */
export class CsvColumns {
  private readonly params = new Set<string>()
  private readonly metricSet = new Set<string>()
  private metrics: string[] = []
  private paramList: string[] = []
  private nValues = 0

  add(t: TrialRow): void {
    for (const p of Object.keys(t.config)) this.params.add(p)
    for (const m of Object.keys(t.metrics ?? {})) this.metricSet.add(m)
    this.nValues = Math.max(this.nValues, t.values?.length ?? 0)
  }

  /** The header line (with its newline); call after every add. */
  headerLine(valueNames: readonly string[] = []): string {
    this.metrics = [...this.metricSet].sort()
    this.paramList = [...this.params]
    const valueCols = Array.from({length: this.nValues}, (_, i) => `value.${valueNames[i] ?? i}`)
    const header = [
      'id',
      'config_id',
      'budget',
      'status',
      'loss',
      ...valueCols,
      ...this.metrics.map((m) => `metric.${m}`),
      ...this.paramList.map((p) => `param.${p}`),
      'continues',
      'started_at',
      'finished_at',
      'duration_ms',
      'worker',
      'thread',
      'attempts',
      'error',
    ]
    return `${header.map(csvField).join(',')}\n`
  }

  /** One trial's line (with its newline). */
  rowLine(t: TrialRow): string {
    const row = [
      t.id,
      t.configId,
      t.budget,
      t.status,
      t.loss,
      ...Array.from({length: this.nValues}, (_, i) => t.values?.[i]),
      ...this.metrics.map((m) => t.metrics?.[m]),
      ...this.paramList.map((p) => t.config[p]),
      t.continues,
      t.startedAt,
      t.finishedAt,
      t.durationMs,
      workerName(t),
      t.worker,
      t.attempts ?? 1,
      t.error,
    ]
    return `${row.map(csvField).join(',')}\n`
  }
}
