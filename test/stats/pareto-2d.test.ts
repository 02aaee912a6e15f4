import {describe, expect, it} from 'vitest'
import fc from 'fast-check'
import {dominates, paretoFront, type Sense} from '../../src/stats/pareto.js'

describe('paretoFront with two objectives (the sort-and-sweep path)', () => {
  it('equals the pairwise definition on random points with ties and repeats', () => {
    const senses: Array<[Sense, Sense]> = [
      ['max', 'min'],
      ['min', 'min'],
      ['max', 'max'],
      ['min', 'max'],
    ]
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({min: 0, max: 6}), fc.integer({min: 0, max: 6})), {maxLength: 40}),
        fc.integer({min: 0, max: 3}),
        (pts, s) => {
          const sense = senses[s]
          const expected = pts
            .map((_, i) => i)
            .filter((i) => !pts.some((q, j) => j !== i && dominates(q, pts[i], sense)))
          expect(
            paretoFront(pts, [
              {value: (p) => p[0], sense: sense[0]},
              {value: (p) => p[1], sense: sense[1]},
            ]),
          ).toEqual(expected)
        },
      ),
      {numRuns: 300, seed: 42},
    )
  })
})
