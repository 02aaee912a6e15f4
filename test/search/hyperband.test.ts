import {describe, expect, it} from 'vitest'
import {bracketAt, budgetLevels, maxBracketIndex} from '../../src/search/hyperband.js'

describe('Hyperband budgets and brackets', () => {
  const f = {min: 9, max: 729, eta: 3}

  it('has the five budget levels of hpbandster for eta 3, min 9, max 729', () => {
    expect(maxBracketIndex(f)).toBe(4)
    expect(budgetLevels(f)).toEqual([9, 27, 81, 243, 729])
  })

  it("schedules hpbandster's brackets (n_i = floor(n0 / eta^i)) in order s = 4, 3, 2, 1, 0", () => {
    const expected = [
      {s: 4, counts: [81, 27, 9, 3, 1], budgets: [9, 27, 81, 243, 729]},
      {s: 3, counts: [27, 9, 3, 1], budgets: [27, 81, 243, 729]},
      {s: 2, counts: [9, 3, 1], budgets: [81, 243, 729]},
      {s: 1, counts: [6, 2], budgets: [243, 729]},
      {s: 0, counts: [5], budgets: [729]},
    ]
    for (let i = 0; i < 10; i++) {
      const b = bracketAt(f, i)
      expect({s: b.s, counts: b.counts, budgets: b.budgets}).toEqual(expected[i % 5])
    }
  })

  it('does not lose a level where log(min/max)/log(eta) rounds the wrong way', () => {
    // Math.log(1 / 1000) / Math.log(10) = -2.9999999999999996: int() of it drops the budget 1.
    expect(Math.trunc(Math.log(1 / 1000) / Math.log(10))).toBe(-2)
    expect(budgetLevels({min: 1, max: 1000, eta: 10})).toEqual([1, 10, 100, 1000])
    expect(budgetLevels({min: 1, max: 100, eta: 10})).toEqual([1, 10, 100])
    expect(bracketAt({min: 1, max: 1000, eta: 10}, 0).counts).toEqual([1000, 100, 10, 1])
  })

  it('gives one single-budget bracket per iteration when min = max', () => {
    expect(budgetLevels({min: 1, max: 1, eta: 3})).toEqual([1])
    expect(bracketAt({min: 1, max: 1, eta: 3}, 7)).toMatchObject({s: 0, counts: [1], budgets: [1]})
  })

  it('rejects unusable fidelities with one-line errors', () => {
    expect(() => budgetLevels({min: 0, max: 9, eta: 3})).toThrow(/min budget: expected a positive number/)
    expect(() => budgetLevels({min: 9, max: 3, eta: 3})).toThrow(/max budget/)
    expect(() => budgetLevels({min: 1, max: 9, eta: 1.5})).toThrow(/eta: expected an integer >= 2/)
  })
})
