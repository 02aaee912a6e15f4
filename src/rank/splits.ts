import {InputError} from '../util/errors.js'
import {numDocs, numFeatures, widenTo, type LtrDataset} from './dataset.js'
import {readLtrFile} from './parse.js'

/** The data splits of `kt rerank train`, `tune` and `log`; a split that was not given is absent. */
export const SPLIT_NAMES = ['train', 'valid', 'test'] as const
export type SplitName = (typeof SPLIT_NAMES)[number]
export type Splits = Partial<Record<SplitName, LtrDataset>> & {train: LtrDataset}
export type SplitFiles = Partial<Record<SplitName, string>> & {train: string}

/** Name of the extra column added by `engineScoreFeature`. */
export const ENGINE_SCORE_FEATURE = 'engine_score'

/** The data with the logged engine score appended as a last feature column. */
export function withEngineScoreFeature(data: LtrDataset): LtrDataset {
  if (!data.engineScores)
    throw new InputError(
      data.source,
      'a kt feature log with engine_score on every line (for --engine-score-feature)',
      'none',
    )
  if (data.featureNames.includes(ENGINE_SCORE_FEATURE))
    throw new InputError(data.source, `no feature already named ${ENGINE_SCORE_FEATURE}`, 'one')
  const width = numFeatures(data)
  const n = numDocs(data)
  const features = new Float64Array(n * (width + 1))
  for (let d = 0; d < n; d++) {
    features.set(data.features.subarray(d * width, (d + 1) * width), d * (width + 1))
    features[d * (width + 1) + width] = data.engineScores[d]
  }
  return {...data, featureNames: [...data.featureNames, ENGINE_SCORE_FEATURE], features}
}

/** Reads the given splits and puts their feature columns in the training split's order. */
export function loadSplits(files: SplitFiles): Splits {
  const raw: Partial<Record<SplitName, LtrDataset>> = {}
  for (const name of SPLIT_NAMES) {
    const path = files[name]
    if (path !== undefined) raw[name] = readLtrFile(path)
  }
  return alignSplits(raw as Splits)
}

/**
 * LETOR-style numbered features ("1".."n") are widened to the widest split (sparse files omit
 * trailing zeros); named features (JSONL logs) must match the training split's names and are
 * reordered to its column order (alignColumns).
 */
export function alignSplits<T extends Splits>(splits: T): T {
  const present = SPLIT_NAMES.filter((name) => splits[name] !== undefined).map((name) => splits[name]!)
  if (present.every(isNumbered)) {
    const width = Math.max(...present.map(numFeatures))
    const names = Array.from({length: width}, (_, i) => String(i + 1))
    const out = {...splits}
    for (const name of SPLIT_NAMES)
      if (out[name]) (out as Record<string, LtrDataset>)[name] = widenTo(out[name]!, names)
    return out
  }
  const out = {...splits}
  for (const name of SPLIT_NAMES) {
    const data = splits[name]
    if (!data || data === splits.train) continue
    ;(out as Record<string, LtrDataset>)[name] = alignColumns(data, splits.train.featureNames, 'the training features')
  }
  return out
}

/** Whether a data set's columns are LETOR's numbered features "1".."n". */
function isNumbered(data: {featureNames: readonly string[]}): boolean {
  return data.featureNames.every((name, i) => name === String(i + 1))
}

/**
 * `data` with exactly the columns `names`, in that order: numbered (LETOR) columns are widened with
 * zero columns when the file is narrower (sparse files omit trailing zeros); named columns are
 * picked by name. A missing column, or columns beyond `names`, is a one-line InputError naming
 * data.source and `what` the columns are (e.g. "the training features").
 */
export function alignColumns(data: LtrDataset, names: readonly string[], what: string): LtrDataset {
  const expected = `${what} (${formatNameList(names)})`
  if (isNumbered(data) && isNumbered({featureNames: names}) && numFeatures(data) <= names.length)
    return widenTo(data, names)
  const columns = names.map((feature) => data.featureNames.indexOf(feature))
  const missing = columns.findIndex((c) => c < 0)
  if (missing >= 0) throw new InputError(data.source, expected, `no feature ${names[missing]}`)
  if (data.featureNames.length !== names.length) {
    const extra = data.featureNames.find((name) => !names.includes(name))
    throw new InputError(
      data.source,
      expected,
      extra === undefined ? `${data.featureNames.length} features` : `also ${extra}`,
    )
  }
  const width = names.length
  const features = new Float64Array(numDocs(data) * width)
  for (let d = 0; d < numDocs(data); d++) {
    for (let f = 0; f < width; f++) features[d * width + f] = data.features[d * width + columns[f]]
  }
  return {...data, featureNames: names, features}
}

/** Most names a one-line message lists before eliding the rest. */
const LISTED_NAMES = 16

/** Column names for a one-line message (long lists elided with their count). */
export function formatNameList(names: readonly string[]): string {
  return names.length > LISTED_NAMES
    ? `${names.slice(0, LISTED_NAMES).join(', ')}, ... (${names.length} names)`
    : names.join(', ')
}

/**
 * The candidate pool the splits were logged with (kt feature logs record it): every split that
 * records one must agree with the training split; undefined when the training split records none.
 */
export function loggedPool(splits: Splits): number | undefined {
  const pool = splits.train.pool
  for (const name of SPLIT_NAMES) {
    const data = splits[name]
    if (data?.pool !== undefined && data.pool !== pool) {
      throw new InputError(
        `${data.source} field pool`,
        pool === undefined ? `no pool, like ${splits.train.source}` : `${pool}, the pool of ${splits.train.source}`,
        String(data.pool),
      )
    }
  }
  return pool
}
