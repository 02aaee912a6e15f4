/**
 * Paired comparisons of two configurations per question category (LoCoMo's categories: single-hop,
 * multi-hop, temporal, open-domain, ...): the same paired bootstrap as the overall comparison
 * (compareRows), on each category's questions alone. A category with few questions gets a wide
 * interval, which is the honest answer.
 */
import type {MetricValues} from '../data/conversations/metrics.js'
import {compareRows, type MetricDifference} from './compare.js'

export interface CategoryDifference extends MetricDifference {
  readonly category: string
  readonly queries: number
}

/** b - a on each category's questions (categories in first-seen order), for each metric. */
export function compareByCategory(
  a: {name: string; rows: readonly MetricValues[]},
  b: {name: string; rows: readonly MetricValues[]},
  categories: readonly string[],
  metrics: readonly string[],
  options: {seed?: number; confidence?: number; resamples?: number} = {},
): CategoryDifference[] {
  if (categories.length !== a.rows.length)
    throw new RangeError(`compareByCategory: ${categories.length} categories for ${a.rows.length} rows`)
  const out: CategoryDifference[] = []
  for (const category of [...new Set(categories)]) {
    const idx = categories.flatMap((c, i) => (c === category ? [i] : []))
    const pick = (rows: readonly MetricValues[]) => idx.map((i) => rows[i])
    const c = compareRows({name: a.name, rows: pick(a.rows)}, {name: b.name, rows: pick(b.rows)}, metrics, options)
    for (const d of c.differences) out.push({...d, category, queries: idx.length})
  }
  return out
}
