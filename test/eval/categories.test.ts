import {describe, expect, it} from 'vitest'
import {join} from 'node:path'
import {compareByCategory, restrictCategories} from '../../src/eval/categories.js'
import {compareRows} from '../../src/eval/compare.js'
import {loadMemoryDataset} from '../../src/data/conversations/index.js'
import {selectScoredQueries} from '../../src/data/conversations/queries.js'
import {InputError} from '../../src/util/errors.js'
import {packageRoot} from '../../src/util/paths.js'
import {kt} from '../cli/helpers.js'

const memory = join(packageRoot, 'fixtures', 'memory_small.json')

describe('per-category comparisons', () => {
  const categories = ['a', 'b', 'a', 'b', 'a', 'c']
  const x = [0, 1, 0, 1, 1, 0].map((v) => ({m: v}))
  const y = [1, 1, 1, 0, 1, 0].map((v) => ({m: v}))

  it("is compareRows on each category's rows, in first-seen order", () => {
    const per = compareByCategory({name: 'x', rows: x}, {name: 'y', rows: y}, categories, ['m'])
    expect(per.map((d) => [d.category, d.queries])).toEqual([
      ['a', 3],
      ['b', 2],
      ['c', 1],
    ])
    const a = compareRows({name: 'x', rows: [x[0], x[2], x[4]]}, {name: 'y', rows: [y[0], y[2], y[4]]}, ['m'])
    expect(per[0]).toEqual({...a.differences[0], category: 'a', queries: 3})
    expect(per[1].delta).toBeCloseTo(-0.5, 12)
  })

  it('restricts a dataset to some categories, refusing an unknown one in one line naming the flag', () => {
    const dataset = loadMemoryDataset(memory)
    const temporal = restrictCategories(dataset, ['temporal'], '--category')
    const scored = selectScoredQueries(temporal).queries
    expect(scored.length).toBeGreaterThan(0)
    expect(scored.every((q) => q.category === 'temporal')).toBe(true)
    expect(() => restrictCategories(dataset, ['adversarial'], '--category')).toThrow(InputError)
  })
})

describe('kt eval --category and --against per category', () => {
  it('scores only the chosen categories and reports the comparison per category', () => {
    const r = kt([
      'eval',
      '--data',
      memory,
      '--category',
      'temporal,multi-hop',
      '--against',
      join(packageRoot, 'fixtures', 'profile-balanced-fusion.json'),
      '--json',
    ])
    expect(r.status, r.stderr).toBe(0)
    const out = JSON.parse(r.stdout)
    const per = out.against.categories.filter((d: {metric: string}) => d.metric === 'recall@10')
    expect(per.map((d: {category: string}) => d.category).sort()).toEqual(['multi-hop', 'temporal'])
    expect(per.reduce((n: number, d: {queries: number}) => n + d.queries, 0)).toBe(out.queries)
    const bad = kt(['eval', '--data', memory, '--category', 'nope'])
    expect(bad.status).toBe(2)
    expect(bad.stderr.trim()).toMatch(/^kt: --category: expected scored question categories/)
  }, 60_000)
})
