import {dirname, isAbsolute, relative, resolve, sep} from 'node:path'
import {Rng} from '../../src/util/rng.js'
import {loadDataset, toImportanceInput, truthOf, type Dataset} from '../../src/data/importance/dataset.js'
import {computeSignals, type SignalColumns} from '../../src/engine/importance/signals.js'
import {packageRoot} from '../../src/util/paths.js'
import type {LoadedPlan} from '../plan.js'
import type {PhaseResults, RetrievalSearchResult} from '../../src/report/types.js'
import type {ChartRenderer} from '../../src/report/chart-pool.js'
import {renderChart} from '../../src/report/render.js'

/** A dataset as the phases use it: the file, its signals (from the plan's time scale) and labels. */
export interface StudyDataset {
  readonly id: string
  /** The file as reports name it (displayPath): never absolute, so reports do not depend on where kt or the plan lives. */
  readonly file: string
  /** Where it is read from. */
  readonly path: string
  readonly role: 'tune' | 'holdout' | 'imported'
  readonly dataset: Dataset
  readonly signals: SignalColumns
  readonly truth: Float64Array
}

export interface PhaseContext {
  readonly plan: LoadedPlan
  readonly seed: number
  readonly outDir: string
  /** Results of phases already run in this invocation. */
  readonly results: Partial<PhaseResults>
  datasets(): StudyDataset[]
  /** An independent random stream per purpose, so adding a phase never shifts another's numbers. */
  rng(label: string): Rng
  progress(text: string): void
  /** Chart renderer (worker threads, started before the phases so the libraries load meanwhile). */
  readonly charts: ChartRenderer
  /** The retrieval study, started with the run when the plan has one (Phase 4 awaits it). */
  retrieval?: Promise<RetrievalSearchResult>
}

export function createContext(plan: LoadedPlan, seed: number, outDir: string, progress: (t: string) => void, charts: ChartRenderer = {render: renderChart, close: async () => {}}): PhaseContext {
  let cache: StudyDataset[] | undefined
  const results: Partial<PhaseResults> = {}
  return {
    plan,
    seed,
    outDir,
    results,
    progress,
    charts,
    rng: (label) => new Rng(seed).fork(label),
    datasets() {
      if (cache) return cache
      const {datasets, time_scale_hours: scale} = plan.plan
      const entries: Array<[string, StudyDataset['role']]> = [
        [datasets.tune, 'tune'],
        ...datasets.holdout.map((f): [string, StudyDataset['role']] => [f, 'holdout']),
        ...datasets.imported.map((f): [string, StudyDataset['role']] => [f, 'imported']),
      ]
      cache = entries.map(([path, role]) => {
        const abs = plan.resolvePath(path)
        const dataset = loadDataset(abs)
        return {id: dataset.id, file: displayPath(abs, plan.file), path: abs, role, dataset, signals: computeSignals(toImportanceInput(dataset), scale), truth: truthOf(dataset)}
      })
      return cache
    },
  }
}

/**
 * How reports and profiles name a file the plan refers to: relative to the kt package for its own
 * files (`fixtures/...`, `phases/...`), otherwise relative to the plan's folder (as the plan names
 * it). Never absolute, so the same plan and data give the same report bytes from any folder or
 * clone location.
 */
export function displayPath(abs: string, planFile: string): string {
  const inPackage = relative(packageRoot, abs)
  const rel = inPackage.startsWith('..') || isAbsolute(inPackage) ? relative(dirname(resolve(planFile)), abs) : inPackage
  return rel.split(sep).join('/')
}
