import {describe, expect, it} from 'vitest'
import type {ParamSpace, SimplexGroup} from '../../src/space/index.js'
import {GridOptimizer, autoPointsPerDim, simplexLattice} from '../../src/search/grid.js'

function simplex(k: number, floor: number): SimplexGroup {
  return {
    kind: 'simplex',
    name: 'w',
    floor,
    description: '',
    members: Array.from({length: k}, (_, i) => ({name: `w${i}`, env: `W${i}`, default: 1 / k, description: ''})),
  }
}

describe('grid search', () => {
  it('enumerates a 4-weight simplex on a 0.05 lattice: C(23, 3) = 1771 points, all distinct, each summing to 1', () => {
    const points = simplexLattice(simplex(4, 0), 0.05)
    expect(points).toHaveLength(1771)
    expect(new Set(points.map((p) => JSON.stringify(p))).size).toBe(1771)
    for (const p of points)
      expect(Math.abs(Object.values(p).reduce((s: number, v) => s + (v as number), 0) - 1)).toBeLessThan(1e-9)
  })

  it('with floor 0.05 keeps the 969 = C(19, 3) lattice points whose weights are all >= 0.05', () => {
    const points = simplexLattice(simplex(4, 0.05), 0.05)
    expect(points).toHaveLength(969)
    for (const p of points) for (const v of Object.values(p)) expect(v as number).toBeGreaterThanOrEqual(0.05 - 1e-12)
  })

  it('rejects a lattice step that does not divide the free weight', () => {
    expect(() => simplexLattice(simplex(4, 0.05), 0.07)).toThrow(
      /grid: simplex w: expected a step that divides 1 - 4 x 0.05 = 0.8, got 0.07/,
    )
  })

  const space: ParamSpace = {
    id: 'g',
    params: [
      {kind: 'float', name: 'x', low: 0, high: 1, scale: 'linear', default: 0.5, env: 'X', description: ''},
      {kind: 'float', name: 'y', low: 1, high: 100, scale: 'log', default: 10, env: 'Y', description: ''},
      {kind: 'int', name: 'k', low: 1, high: 4, scale: 'linear', default: 2, env: 'K', description: ''},
      {kind: 'categorical', name: 'c', choices: ['a', 'b'], default: 'a', env: 'C', description: ''},
      simplex(3, 0),
    ],
  }

  it('is the full Cartesian product, every point visited exactly once, then done', () => {
    const grid = new GridOptimizer(space, {seed: 1, pointsPerDim: 3, simplexStep: 0.5})
    // x: 3, y: 3 (1, 10, 100), k: 3 evenly spaced of 1..4, c: 2, simplex step 0.5 with 3 weights: C(4, 2) = 6.
    expect(grid.axes.map((a) => a.length)).toEqual([3, 3, 3, 2, 6])
    expect(grid.size).toBe(324)
    const seen = new Set<string>()
    for (;;) {
      const t = grid.ask()
      if (t === 'done') break
      seen.add(JSON.stringify(t.config))
      grid.tell(t.id, {status: 'ok', loss: 0})
    }
    expect(seen.size).toBe(324)
    expect([...seen].some((s) => s.includes('"y":10,'))).toBe(true)
  })

  it('visits the same points in the same order for the same seed, another order for another', () => {
    const order = (seed: number): string[] => {
      const g = new GridOptimizer(space, {seed, pointsPerDim: 2, simplexStep: 0.5})
      return Array.from({length: 20}, () => JSON.stringify((g.ask() as {config: unknown}).config))
    }
    expect(order(4)).toEqual(order(4))
    expect(order(4)).not.toEqual(order(5))
  })

  it('picks the largest resolution whose grid fits the trial budget', () => {
    const twoD: ParamSpace = {id: 't', params: space.params.slice(0, 2)}
    expect(autoPointsPerDim(twoD, 200, 0.05)).toBe(14)
  })
})
