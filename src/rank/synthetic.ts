import {Rng} from '../util/rng.js'
import {DatasetBuilder, numFeatures, numQueries, selectQueries, type LtrDataset} from './dataset.js'

/**
 * A seeded synthetic learning-to-rank generator with known relevance structure, used by tests, the
 * benchmark and the committed fixture. Each document has twelve features drawn U(0,1) (one is
 * discrete); a latent relevance is a sum of the terms below plus Gaussian noise, and the graded label
 * 0..4 cuts the latent at fixed quantiles of all generated documents.
 *
 * The terms mix what a linear scorer can use with what only trees can:
 *   f1  +1.0 x            strong linear signal (like a lexical score)
 *   f2  +0.8 x            linear signal (like a vector similarity)
 *   f3, f4  +1.6 [x3 > 0.6 and x4 > 0.6]   an AND interaction: neither helps alone
 *   f5  -1.2 (2x - 1)^2   non-monotone, best in the middle (like an age sweet spot)
 *   f6  -0.6 x            negative linear signal
 *   f7  = f1 + N(0, 0.3)  a noisy copy of f1 (correlated, no extra information)
 *   f8  -0.3 h, h in {0,1,2,3}  a discrete hop-count-like feature (scaled to 0..1 in the row)
 *   f9..f12               pure noise
 * plus a per-query offset N(0, QUERY_SHIFT_SD) (some queries have many relevant documents, some
 * none) and per-document noise N(0, LATENT_NOISE_SD).
 */

const SYNTHETIC_FEATURES = 12
/** Share of documents at or above each grade 1..4 (label quantile cut points of the latent). */
const GRADE_QUANTILES = [0.5, 0.75, 0.9, 0.97] as const
/** Noise on each document's latent relevance: the part no scorer can explain. */
const LATENT_NOISE_SD = 0.35
/** Spread of per-query offsets of the latent relevance. */
const QUERY_SHIFT_SD = 0.4
/** Interaction term: both features above this level. */
const INTERACTION_LEVEL = 0.6
const INTERACTION_WEIGHT = 1.6
/** Largest hop count of the discrete feature. */
const MAX_HOPS = 3

/**
 * 'mixed': the terms above (trees should win). 'linear': a control where the same features enter
 * only linearly (f3, f4 +0.8 x each, f5 +0.6 x) so tuned linear fusion is the right model class and
 * LambdaMART should not beat it by much; it shows the win on 'mixed' comes from the structure.
 */
type SyntheticStructure = 'mixed' | 'linear'

export interface SyntheticOptions {
  structure?: SyntheticStructure
  queries: number
  /** Documents per query are drawn uniformly from minDocs..maxDocs. */
  minDocs: number
  maxDocs: number
  seed: number
}

/** Latent relevance of one feature row (before noise), the generator's ground truth. */
function syntheticLatent(x: ArrayLike<number>, offset = 0, structure: SyntheticStructure = 'mixed'): number {
  const f = (i: number): number => x[offset + i - 1]
  if (structure === 'linear')
    return 1.0 * f(1) + 0.8 * f(2) + 0.8 * f(3) + 0.8 * f(4) + 0.6 * f(5) - 0.6 * f(6) - 0.3 * f(8) * MAX_HOPS
  const interaction = f(3) > INTERACTION_LEVEL && f(4) > INTERACTION_LEVEL ? INTERACTION_WEIGHT : 0
  const middle = 2 * f(5) - 1
  return 1.0 * f(1) + 0.8 * f(2) + interaction - 1.2 * middle * middle - 0.6 * f(6) - 0.3 * f(8) * MAX_HOPS
}

/** Generates a synthetic data set (query ids "1".."N"; documents are i.i.d., so file order carries no signal). */
export function generateSynthetic(options: SyntheticOptions): LtrDataset {
  const rng = new Rng(options.seed)
  const rows: Float64Array[][] = []
  const latent: number[][] = []
  for (let q = 0; q < options.queries; q++) {
    const shift = rng.normal(0, QUERY_SHIFT_SD)
    const n = options.minDocs + rng.int(options.maxDocs - options.minDocs + 1)
    const queryRows: Float64Array[] = []
    const queryLatent: number[] = []
    for (let d = 0; d < n; d++) {
      const x = new Float64Array(SYNTHETIC_FEATURES)
      for (let f = 0; f < SYNTHETIC_FEATURES; f++) x[f] = rng.next()
      x[6] = x[0] + rng.normal(0, 0.3)
      x[7] = rng.int(MAX_HOPS + 1) / MAX_HOPS
      queryRows.push(x)
      queryLatent.push(syntheticLatent(x, 0, options.structure) + shift + rng.normal(0, LATENT_NOISE_SD))
    }
    rows.push(queryRows)
    latent.push(queryLatent)
  }
  const all = latent.flat().sort((a, b) => a - b)
  const cuts = GRADE_QUANTILES.map((p) => all[Math.min(all.length - 1, Math.floor(p * all.length))])
  const builder = new DatasetBuilder()
  rows.forEach((queryRows, q) => {
    builder.beginQuery(String(q + 1))
    queryRows.forEach((x, d) => builder.addRow(cuts.filter((c) => latent[q][d] >= c).length, x))
  })
  return builder.build(
    'synthetic',
    Array.from({length: SYNTHETIC_FEATURES}, (_, i) => String(i + 1)),
  )
}

/** Splits queries into consecutive train/valid/test parts of the given sizes. */
export function splitByQueries(data: LtrDataset, sizes: readonly number[]): LtrDataset[] {
  const parts: LtrDataset[] = []
  let at = 0
  for (const size of sizes) {
    const ids = Array.from({length: Math.min(size, numQueries(data) - at)}, (_, i) => at + i)
    parts.push(selectQueries(data, ids))
    at += ids.length
  }
  return parts
}

/** Decimal places of feature values in written files (enough for the bins, small files). */
const WRITTEN_DIGITS = 4

/** Writes LETOR text (`label qid:Q 1:v ... # doc N`). */
function formatLetor(data: LtrDataset, digits = WRITTEN_DIGITS): string {
  return formatLines(data, digits, true)
}

/** Writes the libsvm form: data lines without qid, and the `.query` sidecar of group sizes. */
function formatLibsvmWithGroups(data: LtrDataset, digits = WRITTEN_DIGITS): {data: string; groups: string} {
  const sizes: string[] = []
  for (let q = 0; q < numQueries(data); q++) sizes.push(String(data.queryOffsets[q + 1] - data.queryOffsets[q]))
  return {data: formatLines(data, digits, false), groups: sizes.join('\n') + '\n'}
}

/** Writes a kt feature log (JSONL, one candidate per line, see parse.ts). */
function formatFeatureLog(data: LtrDataset, digits = WRITTEN_DIGITS): string {
  const width = numFeatures(data)
  const lines: string[] = []
  for (let q = 0; q < numQueries(data); q++) {
    for (let d = data.queryOffsets[q]; d < data.queryOffsets[q + 1]; d++) {
      const features: Record<string, number> = {}
      data.featureNames.forEach((name, f) => (features[name] = round(data.features[d * width + f], digits)))
      lines.push(
        JSON.stringify({
          qid: data.queryIds[q],
          label: data.labels[d],
          features,
          doc: `d${d - data.queryOffsets[q] + 1}`,
        }),
      )
    }
  }
  return lines.join('\n') + '\n'
}

function formatLines(data: LtrDataset, digits: number, withQid: boolean): string {
  const width = numFeatures(data)
  const lines: string[] = []
  for (let q = 0; q < numQueries(data); q++) {
    for (let d = data.queryOffsets[q]; d < data.queryOffsets[q + 1]; d++) {
      const parts = [String(data.labels[d])]
      if (withQid) parts.push(`qid:${data.queryIds[q]}`)
      for (let f = 0; f < width; f++) parts.push(`${f + 1}:${round(data.features[d * width + f], digits)}`)
      parts.push(`# doc ${d - data.queryOffsets[q] + 1}`)
      lines.push(parts.join(' '))
    }
  }
  return lines.join('\n') + '\n'
}

function round(value: number, digits: number): number {
  const scale = 10 ** digits
  return Math.round(value * scale) / scale
}

export interface FixtureSpec {
  structure: SyntheticStructure
  /** Queries in the train, valid and test splits. */
  queries: readonly [number, number, number]
  minDocs: number
  maxDocs: number
  seed: number
}

/**
 * The committed fixture (fixtures/ltr/): small enough to read (about 700 documents) and to train
 * on in a test, large enough that every split has judged queries. `kt rerank generate` rewrites it.
 */
export const FIXTURE_SPEC: FixtureSpec = {
  structure: 'mixed',
  queries: [40, 15, 15],
  minDocs: 6,
  maxDocs: 14,
  seed: 20240501,
}

/** Queries of the test split also written in the libsvm + .query and JSONL forms. */
const OTHER_FORM_QUERIES = 5

/** File name -> content of a generated fixture set (LETOR splits plus the other two input forms). */
export function fixtureFiles(spec: FixtureSpec): Record<string, string> {
  const total = spec.queries[0] + spec.queries[1] + spec.queries[2]
  const all = generateSynthetic({
    structure: spec.structure,
    queries: total,
    minDocs: spec.minDocs,
    maxDocs: spec.maxDocs,
    seed: spec.seed,
  })
  const [train, valid, test] = splitByQueries(all, spec.queries)
  const small = selectQueries(
    test,
    Array.from({length: Math.min(OTHER_FORM_QUERIES, numQueries(test))}, (_, i) => i),
  )
  const libsvm = formatLibsvmWithGroups(small)
  return {
    'train.txt': formatLetor(train),
    'valid.txt': formatLetor(valid),
    'test.txt': formatLetor(test),
    'test-small.libsvm': libsvm.data,
    'test-small.libsvm.query': libsvm.groups,
    'test-small.jsonl': formatFeatureLog(small),
  }
}
