/**
 * Two configurations on the same questions: the difference of every ranking metric (B minus A)
 * with a paired bootstrap 95% interval over the questions (src/stats/bootstrap.ts), so shared
 * difficulty cancels and the interval says whether the change is more than question sampling.
 */
import {meanStatistic, pairedBootstrapDelta} from '../stats/bootstrap.js'
import {Rng} from '../util/rng.js'
import {NDCG_K, type MetricValues} from '../data/conversations/metrics.js'
import {fmt, renderTable} from './table.js'

/** Seed of the comparison's bootstrap (fixed, so the interval repeats). */
export const COMPARE_BOOTSTRAP_SEED = 42
/** Confidence of the interval. */
export const COMPARE_CONFIDENCE = 0.95

export interface MetricDifference {
  readonly metric: string
  readonly a: number
  readonly b: number
  /** b - a (absolute). */
  readonly delta: number
  readonly kind: 'absolute'
  readonly low: number | null
  readonly high: number | null
  readonly confidence: number
  readonly resamples: number
  /** Questions where B scores higher / lower than A. */
  readonly better: number
  readonly worse: number
}

export interface ProfileComparison {
  readonly a: string
  readonly b: string
  readonly queries: number
  readonly differences: MetricDifference[]
}

/** Every metric the report shows, in its order: recall@k, hit@k, NDCG@10, MRR. */
export function comparedMetrics(ks: readonly number[]): string[] {
  return [...ks.map((k) => `recall@${k}`), ...ks.map((k) => `hit@${k}`), `ndcg@${NDCG_K}`, 'mrr']
}

/**
 * Paired differences B - A of each metric over the same questions (rows in the same order). The
 * bootstrap's seed, confidence and resamples default to kt eval --against's (COMPARE_*).
 */
export function compareRows(
  a: {name: string; rows: readonly MetricValues[]},
  b: {name: string; rows: readonly MetricValues[]},
  metrics: readonly string[],
  options: {seed?: number; confidence?: number; resamples?: number} = {},
): ProfileComparison {
  if (a.rows.length !== b.rows.length)
    throw new RangeError(`compareRows: ${a.rows.length} rows for ${a.name} but ${b.rows.length} for ${b.name}`)
  const differences = metrics.map((metric): MetricDifference => {
    const x = a.rows.map((r) => r[metric])
    const y = b.rows.map((r) => r[metric])
    const result = pairedBootstrapDelta(x.length, meanStatistic(x), meanStatistic(y), {
      rng: new Rng(options.seed ?? COMPARE_BOOTSTRAP_SEED).fork(metric),
      confidence: options.confidence ?? COMPARE_CONFIDENCE,
      resamples: options.resamples,
    })
    return {
      metric,
      a: result.estimateA ?? 0,
      b: result.estimateB ?? 0,
      delta: result.estimate ?? 0,
      kind: 'absolute',
      low: result.low,
      high: result.high,
      confidence: result.confidence,
      resamples: result.resamples,
      better: x.filter((v, i) => y[i] > v).length,
      worse: x.filter((v, i) => y[i] < v).length,
    }
  })
  return {a: a.name, b: b.name, queries: a.rows.length, differences}
}

function signed(x: number): string {
  return `${x >= 0 ? '+' : ''}${x.toFixed(3)}`
}

/** The comparison as a table: A, B, B - A with its interval, and how many questions moved each way. */
export function renderComparison(c: ProfileComparison): string {
  const level = `${Math.round(100 * (c.differences[0]?.confidence ?? COMPARE_CONFIDENCE))}%`
  const rows = c.differences.map((d) => [
    d.metric,
    fmt(d.a),
    fmt(d.b),
    signed(d.delta),
    d.low === null || d.high === null ? '-' : `[${signed(d.low)}, ${signed(d.high)}]`,
    d.low !== null && d.high !== null && (d.low > 0 || d.high < 0) ? 'yes' : 'no',
    String(d.better),
    String(d.worse),
  ])
  return [
    `${c.b} against ${c.a} on the same ${c.queries} questions (difference ${c.b} - ${c.a}, absolute; paired bootstrap over questions):`,
    renderTable(['metric', c.a, c.b, 'delta', `${level} CI`, 'excludes 0', 'questions better', 'worse'], rows),
  ].join('\n')
}
