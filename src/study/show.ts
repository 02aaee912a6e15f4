/**
 * `kt study show`: one study's settings, trials per budget, incumbent and best trials, and, for a
 * study with two objectives, its front and domain profiles. The study is read once, in pages: the
 * tally keeps counts, and the front keeps only the successful trials at the largest budget so far
 * (all the front and the profiles read: fullBudgetCandidates), each without what they do not read.
 */
import {existsSync} from 'node:fs'
import {analyzeObjectiveStudy, type AnalyzedTrial} from '../search/analysis.js'
import {analyzeStudy, isBiObjective} from '../eval/retrieval-analysis.js'
import {snakeKeysOfRecord} from '../util/json-keys.js'
import {configLines, gridCoverageOf, isGridStudy, studyJsonOf, trialJson} from './format.js'
import type {StudyRecord, TrialRow} from './model.js'
import {TrialTally, trialPages, TRIAL_PAGE_SIZE} from './pages.js'
import type {StudyStorage} from './storage.js'
import {requireStudy} from './name.js'

/**
 * The successful trials with metrics at the largest budget one reached, as trials arrive in any
 * order: a larger budget drops those kept so far. `held` is how many it keeps.
 */
class TopBudgetTrials {
  private budget = -Infinity
  private kept: AnalyzedTrial[] = []

  add(t: TrialRow): void {
    if (t.status !== 'ok' || !t.metrics || t.budget < this.budget) return
    if (t.budget > this.budget) [this.budget, this.kept] = [t.budget, []]
    const {id, budget, status, config, metrics} = t
    this.kept.push({id, budget, status, config: config as AnalyzedTrial['config'], metrics})
  }

  get held(): number {
    return this.kept.length
  }

  trials(): readonly AnalyzedTrial[] {
    return this.kept
  }
}

/** An engine file's study: the file, when it is still there (its objectives and profile rules). */
function engineFileOf(study: StudyRecord): string | undefined {
  const spec = study.objective as {name?: string; options?: {file?: unknown}}
  const file = spec.options?.file
  return spec.name === 'engine' && typeof file === 'string' && existsSync(file) ? file : undefined
}

/** The front and profiles of a study with two objectives (an engine file's own, or kt's quality vs P99); none otherwise. */
async function frontOf(
  study: StudyRecord,
  top: TopBudgetTrials,
  biObjective: boolean,
): Promise<{lines: string[]; json: Record<string, unknown>} | undefined> {
  const file = engineFileOf(study)
  if (file) {
    const engine = (await import('../adapters/file.js')).loadEngineFile(file)
    const analysis = analyzeObjectiveStudy(top.trials(), engine.objectives, engine.profiles)
    return {lines: analysis.lines, json: {engine: engine.name, front: analysis.front, profiles: analysis.profiles}}
  }
  if (!biObjective) return undefined
  const analysis = analyzeStudy(top.trials())
  return {lines: analysis.lines, json: {front: analysis.front, profiles: analysis.profiles}}
}

/** What `kt study show` prints and returns; `held` is the most trials the front kept at once (for tests). */
export async function showStudy(
  store: Pick<StudyStorage, 'trialPage' | 'getStudy' | 'listStudies' | 'label'>,
  name: string,
  options: {top: number; pageSize?: number},
): Promise<{lines: string[]; json: Record<string, unknown>; held: number}> {
  const study = await requireStudy(await store.getStudy(name), `${store.label}: study ${name}`, () =>
    store.listStudies(),
  )
  const tally = new TrialTally({top: options.top, keepConfigIds: isGridStudy(study)})
  const top = new TopBudgetTrials()
  let held = 0
  let biObjective = false
  for await (const page of trialPages(store, study.name, options.pageSize ?? TRIAL_PAGE_SIZE)) {
    for (const t of page) {
      tally.add(t)
      top.add(t)
    }
    held = Math.max(held, top.held)
    biObjective ||= isBiObjective(page)
  }
  const view = studyJsonOf(study, tally)
  const best = tally.top()
  const grid = gridCoverageOf(study, tally.configIds())
  const lines = [
    `study ${study.name}: ${study.optimizer} on ${(study.objective as {name?: string}).name}, seed ${study.seed}, ${study.state}${grid && !grid.complete ? ' (partial grid)' : ''}`,
    `  trials ${view.trials}: ${view.ok} ok, ${view.failed} failed, ${view.running} running`,
    ...(grid ? [`  ${(await import('../search/grid.js')).gridCoverageLine(grid)}`] : []),
  ]
  for (const b of view.by_budget as Array<Record<string, number | null>>)
    lines.push(
      `  budget ${b.budget}: ${b.ok} ok, ${b.failed} failed, ${b.running} running, best loss ${b.best_loss === null ? '-' : Number(b.best_loss).toPrecision(6)}`,
    )
  const incumbent = view.best as {id: number; loss: number; budget: number; config: Record<string, unknown>} | null
  if (incumbent)
    lines.push(
      `  incumbent: trial ${incumbent.id} at budget ${incumbent.budget}, loss ${incumbent.loss.toPrecision(6)}\n${configLines(incumbent.config)}`,
    )
  if (best.length > 0)
    lines.push(
      `  best ${best.length} at budget ${tally.maxBudget}: ${best.map((t) => `#${t.id} ${t.loss?.toPrecision(5)}`).join(', ')}`,
    )
  const front = await frontOf(study, top, biObjective)
  if (front?.lines.length) lines.push(front.lines.join('\n'))
  // the same snake_case record kt search prints
  const extra = front ? (snakeKeysOfRecord(front.json) as Record<string, unknown>) : {}
  return {lines, json: {...view, top: best.map(trialJson), ...extra}, held}
}
