import {describe, expect, it} from 'vitest'
import {snakeCase, snakeKeys} from '../../src/util/json-keys.js'
import {isSnakeKey} from '../cli/json-style.js'

describe('snake_case JSON keys', () => {
  it('renames lowerCamelCase identifiers and nothing else', () => {
    expect(snakeCase('budgetUsed')).toBe('budget_used')
    expect(snakeCase('minSumHessianInLeaf')).toBe('min_sum_hessian_in_leaf')
    expect(snakeCase('best_loss')).toBe('best_loss')
    expect(snakeCase('recall@10')).toBe('recall@10')
    expect(snakeCase('bm25.k1')).toBe('bm25.k1')
    expect(snakeCase('Acme')).toBe('Acme')
  })

  it('converts at every depth, arrays included, without touching values', () => {
    expect(snakeKeys({stoppedBy: 'budgetUsed', run: [{tornBytes: 1}], n: null})).toEqual({
      stopped_by: 'budgetUsed',
      run: [{torn_bytes: 1}],
      n: null,
    })
    expect(isSnakeKey('best_loss')).toBe(true)
    expect(isSnakeKey('budgetUsed')).toBe(false)
  })
})
