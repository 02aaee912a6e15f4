import {describe, expect, it} from 'vitest'
import fc from 'fast-check'
import {PROPERTIES, checkProperty} from '../../phases/1-properties.js'

describe('phase 1 properties (the same definitions kt runs)', () => {
  for (const def of PROPERTIES) {
    it(def.id, () => {
      fc.assert(
        fc.property(def.arbitrary, (v) => def.holds(v)),
        {seed: 1, numRuns: 200},
      )
    })
  }

  it('counts violations and shrinks a counterexample of a false property', () => {
    const falseProperty = {
      id: 'false',
      description: 'every number is below 0.5',
      arbitrary: fc.double({min: 0, max: 1, noNaN: true}),
      holds: (x: number) => x < 0.5,
    }
    const r = checkProperty(falseProperty, 200, 3)
    expect(r.cases).toBe(200)
    expect(r.violations).toBeGreaterThan(0)
    expect(r.counterexample).toBe('0.5')
  })
})
