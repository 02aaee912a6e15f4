import {createHash} from 'node:crypto'
import {readFileSync} from 'node:fs'
import {dirname, isAbsolute, relative, resolve, sep} from 'node:path'
import {Rng} from '../../src/util/rng.js'
import {readText, parseJson} from '../../src/util/fs.js'
import {parseDataset, toImportanceInput, truthOf, type Dataset} from '../../src/data/importance/dataset.js'
import {computeSignals, type SignalColumns} from '../../src/engine/importance/signals.js'
import {packageRoot} from '../../src/util/paths.js'
import type {LoadedPlan} from '../plan.js'
import type {PhaseResults, RetrievalSearchResult} from '../../src/report/types.js'
import type {ChartRenderer} from '../../src/report/chart-pool.js'
import {renderChart} from '../../src/report/render.js'
import {NAME_MESSAGE, NAME_PATTERN} from '../../src/space/names.js'
import {InputError, describeValue} from '../../src/util/errors.js'

/** A dataset as the phases use it: the file, its signals (from the plan's time scale) and labels. */
export interface StudyDataset {
  readonly id: string
  /** The file as reports name it (displayPath): never absolute, so reports do not depend on where kt or the plan lives. */
  readonly file: string
  /** Where it is read from. */
  readonly path: string
  readonly role: 'tune' | 'holdout' | 'imported'
  /** The plan field that names it: datasets.tune, datasets.holdout[i] or datasets.imported[i]. */
  readonly field: string
  /** sha256 of the file's bytes. */
  readonly sha256: string
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

export function createContext(
  plan: LoadedPlan,
  seed: number,
  outDir: string,
  progress: (t: string) => void,
  charts: ChartRenderer = {render: renderChart, close: async () => {}},
  preloaded?: StudyDataset[],
): PhaseContext {
  let cache: StudyDataset[] | undefined = preloaded
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
      cache ??= loadStudyDatasets(plan)
      return cache
    },
  }
}

/** The plan's datasets (tuning set first, then held-out, then imported), read and validated: a bad one is an InputError naming its file and field. */
export function loadStudyDatasets(plan: LoadedPlan): StudyDataset[] {
  const {datasets, time_scale_hours: scale} = plan.plan
  const entries: Array<[string, StudyDataset['role'], string]> = [
    [datasets.tune, 'tune', 'datasets.tune'],
    ...datasets.holdout.map((f, i): [string, StudyDataset['role'], string] => [f, 'holdout', `datasets.holdout[${i}]`]),
    ...datasets.imported.map((f, i): [string, StudyDataset['role'], string] => [
      f,
      'imported',
      `datasets.imported[${i}]`,
    ]),
  ]
  return entries.map(([path, role, field]) => {
    const abs = plan.resolvePath(path)
    const text = readText(abs)
    const dataset = parseDataset(parseJson(abs, text), abs)
    // the id names the dataset in the deployed profiles (phase 6): checked here, before --out exists
    if (!NAME_PATTERN.test(dataset.id)) throw new InputError(`${abs}: id`, NAME_MESSAGE, describeValue(dataset.id))
    return {
      // of the bytes, as Phase 2 reports it
      id: dataset.id,
      file: displayPath(abs, plan.file),
      path: abs,
      role,
      field,
      sha256: createHash('sha256').update(readFileSync(abs)).digest('hex'),
      dataset,
      signals: computeSignals(toImportanceInput(dataset), scale),
      truth: truthOf(dataset),
    }
  })
}

/**
 * How reports and profiles name a file the plan refers to: relative to the kt package for its own
 * files (`fixtures/...`, `phases/...`), otherwise relative to the plan's folder (as the plan names
 * it). Never absolute, so the same plan and data give the same report bytes from any folder or
 * clone location.
 */
export function displayPath(abs: string, planFile: string): string {
  const inPackage = relative(packageRoot, abs)
  const rel =
    inPackage.startsWith('..') || isAbsolute(inPackage) ? relative(dirname(resolve(planFile)), abs) : inPackage
  return rel.split(sep).join('/')
}
