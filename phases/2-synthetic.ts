import {createHash} from 'node:crypto'
import {readFileSync} from 'node:fs'
import {
  generateImportanceDataset,
  IMPORTANCE_DISTRIBUTIONS,
  TIME_PATTERNS,
  type SyntheticOptions,
} from '../src/data/importance/synthetic.js'
import {serializeDataset, type Dataset} from '../src/data/importance/dataset.js'
import {auditLeakage} from '../src/data/importance/leakage.js'
import {SIGNALS} from '../src/engine/importance/space.js'
import {mean, min, max, quantile} from '../src/stats/summary.js'
import type {PhaseContext} from './lib/context.js'
import {engineUnderTest} from './lib/engine-under-test.js'
import {engineSynthetic} from './lib/engine-synthetic.js'
import type {DatasetSummary, SyntheticResult} from '../src/report/types.js'

/**
 * Phase 2: the datasets. For each dataset of the plan: its fingerprint and pinned reference
 * time, whether a synthetic one regenerates byte-identically from its recorded generator options,
 * label and signal distributions, and the leakage audit.
 */
export async function runSynthetic(ctx: PhaseContext): Promise<SyntheticResult> {
  const datasets: DatasetSummary[] = ctx.datasets().map((ds) => {
    ctx.progress(`phase 2: dataset ${ds.id}`)
    const text = readFileSync(ds.path, 'utf8')
    const options = generatorOptions(ds.dataset)
    const leakage = auditLeakage(ds.signals, ds.truth).map((a) => ({...a}))
    return {
      id: ds.id,
      file: ds.file,
      role: ds.role,
      sha256: createHash('sha256').update(text).digest('hex'),
      turns: ds.signals.n,
      reference_time: ds.dataset.reference_time,
      generator: ds.dataset.generator,
      regenerates_identically: options ? serializeDataset(generateImportanceDataset(options)) === text : null,
      truth: {
        mean: mean(ds.truth),
        quantiles: {p10: quantile(ds.truth, 0.1), p50: quantile(ds.truth, 0.5), p90: quantile(ds.truth, 0.9)},
      },
      signals: Object.fromEntries(
        SIGNALS.map((s) => [s, {mean: mean(ds.signals[s]), min: min(ds.signals[s]), max: max(ds.signals[s])}]),
      ),
      leakage,
    }
  })
  const named = engineUnderTest(ctx.plan)
  return {
    datasets,
    leaks_found: datasets.reduce(
      (n, d) => n + d.leakage.filter((a) => a.verdict === 'leak' || a.verdict === 'constant').length,
      0,
    ),
    ...(named ? {engine: await engineSynthetic(ctx, named)} : {}),
  }
}

/** The generator options a synthetic dataset records, or null for imported data. */
export function generatorOptions(d: Dataset): SyntheticOptions | null {
  const g = d.generator
  if (!g || g.kind !== 'importance') return null
  const distribution = IMPORTANCE_DISTRIBUTIONS.find((x) => x === g.distribution)
  const timestamps = TIME_PATTERNS.find((x) => x === g.timestamps)
  if (!distribution || !timestamps) return null
  return {
    id: d.id,
    n: Number(g.n),
    seed: Number(g.seed),
    distribution,
    timestamps,
    referenceTime: d.reference_time,
    windowHours: Number(g.window_hours),
  }
}
