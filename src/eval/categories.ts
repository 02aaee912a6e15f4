/**
 * Paired comparisons of two configurations per question category (LoCoMo's categories: single-hop,
 * multi-hop, temporal, open-domain, ...): the same paired bootstrap as the overall comparison
 * (compareRows), on each category's questions alone. A category with few questions gets a wide
 * interval, which is the honest answer.
 */
import type {MetricValues} from '../data/conversations/metrics.js'
import {selectScoredQueries} from '../data/conversations/queries.js'
import {SCORED_CATEGORIES, type MemoryDataset} from '../data/conversations/types.js'
import {InputError, describeValue} from '../util/errors.js'
import {compareRows, type MetricDifference, type ProfileComparison} from './compare.js'
import {renderTable} from './table.js'

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

/** A comparison of two configurations on the same questions, overall and per category. */
export interface CategoryComparison extends ProfileComparison {
  readonly categories: CategoryDifference[]
}

/** compareRows over every scored question of `dataset` (rows in selectScoredQueries order), and per category. */
export function compareWithCategories(
  a: {name: string; rows: readonly MetricValues[]},
  b: {name: string; rows: readonly MetricValues[]},
  dataset: MemoryDataset,
  metrics: readonly string[],
): CategoryComparison {
  const categories = selectScoredQueries(dataset).queries.map((q) => q.category)
  return {...compareRows(a, b, metrics), categories: compareByCategory(a, b, categories, metrics)}
}

/** Only the questions of some categories (LoCoMo's names); an unknown name is one line naming the flag. */
export function restrictCategories(dataset: MemoryDataset, names: readonly string[], where: string): MemoryDataset {
  for (const name of names)
    if (!(SCORED_CATEGORIES as readonly string[]).includes(name))
      throw new InputError(where, `scored question categories (${SCORED_CATEGORIES.join(', ')})`, describeValue(name))
  const wanted = new Set(names)
  return {...dataset, questions: dataset.questions.filter((q) => wanted.has(q.category))}
}

/** The per-category table of a comparison, for one metric (recall@10 when compared, else the first; --json has them all). */
export function renderCategoryComparison(
  c: CategoryComparison,
  metric = c.differences.find((d) => d.metric === 'recall@10')?.metric ?? c.differences[0]?.metric,
): string {
  const s = (x: number | null) => (x === null ? '-' : `${x >= 0 ? '+' : ''}${x.toFixed(3)}`)
  const rows = c.categories
    .filter((d) => d.metric === metric)
    .map((d) => [
      d.category,
      String(d.queries),
      d.a.toFixed(3),
      d.b.toFixed(3),
      s(d.delta),
      `[${s(d.low)}, ${s(d.high)}]`,
      String(d.better),
      String(d.worse),
    ])
  const level = `${Math.round(100 * (c.differences[0]?.confidence ?? 0.95))}%`
  return [
    `${metric} per question category (${c.b} - ${c.a}; paired bootstrap within each category, few questions give wide intervals):`,
    renderTable(['category', 'questions', c.a, c.b, 'delta', `${level} CI`, 'better', 'worse'], rows),
  ].join('\n')
}
