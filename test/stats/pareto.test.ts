import fc from 'fast-check'
import {describe, expect, it} from 'vitest'
import {dominates, hypervolume2d, paretoFront, type Objective, type Sense} from '../../src/stats/pareto.js'

type Trial = {quality: number; latency: number}
const objectives: Array<Objective<Trial>> = [
  {value: (t) => t.quality, sense: 'max'},
  {value: (t) => t.latency, sense: 'min'},
]

describe('dominates', () => {
  it('needs at least as good everywhere and strictly better somewhere', () => {
    const senses: Sense[] = ['max', 'min']
    expect(dominates([0.8, 10], [0.7, 10], senses)).toBe(true)
    expect(dominates([0.8, 10], [0.8, 12], senses)).toBe(true)
    expect(dominates([0.8, 10], [0.8, 10], senses)).toBe(false) // equal
    expect(dominates([0.8, 12], [0.7, 10], senses)).toBe(false) // trade-off
    expect(dominates([1], [2], ['min'])).toBe(true)
  })
  it('rejects NaN and a wrong number of objectives', () => {
    expect(() => dominates([NaN, 1], [0, 1], ['max', 'max'])).toThrow(RangeError)
    expect(() => dominates([1], [0, 1], ['max', 'max'])).toThrow(RangeError)
  })
})

describe('paretoFront', () => {
  it('keeps the non-dominated trials in input order, equal points both', () => {
    const trials: Trial[] = [
      {quality: 0.7, latency: 5}, // 0: front (fastest)
      {quality: 0.8, latency: 9}, // 1: front
      {quality: 0.75, latency: 9}, // 2: dominated by 1
      {quality: 0.9, latency: 20}, // 3: front (best quality)
      {quality: 0.8, latency: 9}, // 4: equal to 1, kept
      {quality: 0.6, latency: 30}, // 5: dominated by everything
    ]
    expect(paretoFront(trials, objectives)).toEqual([0, 1, 3, 4])
  })
  it('handles no items, one item and one objective', () => {
    expect(paretoFront([], objectives)).toEqual([])
    expect(paretoFront([{quality: 1, latency: 1}], objectives)).toEqual([0])
    expect(paretoFront([3, 1, 3, 2], [{value: (x: number) => x, sense: 'max'}])).toEqual([0, 2])
  })
  it('names the item with a NaN objective', () => {
    expect(() => paretoFront([{quality: NaN, latency: 1}], objectives)).toThrow(/item 0/)
  })
  it('returns exactly the mutually non-dominated items (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({min: 0, max: 6}), fc.integer({min: 0, max: 6})), {maxLength: 25}),
        (pts) => {
          const items = pts.map(([q, l]) => ({quality: q, latency: l}))
          const front = paretoFront(items, objectives)
          const senses: Sense[] = ['max', 'min']
          const inFront = new Set(front)
          pts.forEach((p, i) => {
            const dominated = pts.some((o) => dominates(o, p, senses))
            expect(inFront.has(i)).toBe(!dominated)
          })
        },
      ),
      {seed: 5, numRuns: 200},
    )
  })
})

describe('hypervolume2d', () => {
  it('measures a hand-computed staircase (both maximized)', () => {
    // Points (1,3), (2,2), (3,1) against reference (0,0): strips 3*1 + 2*1 + 1*1 = 6.
    expect(
      hypervolume2d(
        [
          [1, 3],
          [2, 2],
          [3, 1],
        ],
        [0, 0],
        ['max', 'max'],
      ),
    ).toBe(6)
    // A dominated point (1,1) adds nothing; order does not matter.
    expect(
      hypervolume2d(
        [
          [3, 1],
          [1, 1],
          [2, 2],
          [1, 3],
        ],
        [0, 0],
        ['max', 'max'],
      ),
    ).toBe(6)
  })
  it('handles mixed senses: quality max, latency min, reference (0.5, 100)', () => {
    // (0.9, 40): width 0.4 x height 60; (0.7, 20): adds width 0.2 x height 20 more.
    // Union = 0.4*60 + 0.2*20 = 28.
    expect(
      hypervolume2d(
        [
          [0.9, 40],
          [0.7, 20],
        ],
        [0.5, 100],
        ['max', 'min'],
      ),
    ).toBeCloseTo(28, 12)
  })
  it('ignores points that do not beat the reference in both objectives', () => {
    expect(
      hypervolume2d(
        [
          [5, -1],
          [-1, 5],
          [0, 4],
        ],
        [0, 0],
        ['max', 'max'],
      ),
    ).toBe(0)
    expect(
      hypervolume2d(
        [
          [2, 2],
          [5, 0],
        ],
        [0, 0],
        ['max', 'max'],
      ),
    ).toBe(4)
    expect(hypervolume2d([], [0, 0], ['min', 'min'])).toBe(0)
  })
  it('counts duplicates once and minimizes correctly', () => {
    // minimize both, reference (4,4): (1,2) -> 3*2 = 6, (2,1) adds 2*1 = 2 more; union 8.
    expect(
      hypervolume2d(
        [
          [1, 2],
          [2, 1],
          [1, 2],
        ],
        [4, 4],
        ['min', 'min'],
      ),
    ).toBe(8)
  })
  it('rejects NaN', () => {
    expect(() => hypervolume2d([[NaN, 1]], [0, 0], ['max', 'max'])).toThrow(RangeError)
  })
  it('never decreases when a point is added, and is bounded by the box sum (property)', () => {
    const point = fc.tuple(fc.integer({min: -2, max: 10}), fc.integer({min: -2, max: 10}))
    fc.assert(
      fc.property(fc.array(point, {maxLength: 15}), point, (pts, extra) => {
        const hv = hypervolume2d(pts, [0, 0], ['max', 'max'])
        const more = hypervolume2d([...pts, extra], [0, 0], ['max', 'max'])
        expect(more).toBeGreaterThanOrEqual(hv)
        const boxes = pts.reduce((s, [x, y]) => s + Math.max(0, x) * Math.max(0, y), 0)
        expect(hv).toBeLessThanOrEqual(boxes)
        // The largest single box is a lower bound.
        const biggest = pts.reduce((m, [x, y]) => Math.max(m, Math.max(0, x) * Math.max(0, y)), 0)
        expect(hv).toBeGreaterThanOrEqual(biggest)
      }),
      {seed: 6, numRuns: 300},
    )
  })
  it('agrees with a grid count on integer points (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({min: 0, max: 8}), fc.integer({min: 0, max: 8})), {maxLength: 10}),
        (pts) => {
          // Count unit cells [i, i+1] x [j, j+1] lying under some point's box.
          let cells = 0
          for (let i = 0; i < 8; i++)
            for (let j = 0; j < 8; j++) if (pts.some(([x, y]) => x >= i + 1 && y >= j + 1)) cells++
          expect(hypervolume2d(pts, [0, 0], ['max', 'max'])).toBe(cells)
        },
      ),
      {seed: 7, numRuns: 200},
    )
  })
})
