import {describe, expect, it} from 'vitest'
import {gradientAt} from '../../phases/4-search.js'
import type {Weights} from '../../src/engine/importance/space.js'

describe('phase 4 gradient at the optimum', () => {
  const at = {decay: 0.05, surprise: 0.5, relevance: 0.35, habituation: 0.1}
  const linear = (w: Weights) => w.decay + 2 * w.surprise - w.relevance

  it('is the central difference along each weight, with its norm', () => {
    const g = gradientAt(at, (w) => ({weights: w, objective: linear(w), token_budget: 0}), 0.05)
    for (const v of Object.values(g.gradient)) expect(v).not.toBeNull()
    expect(g.gradient_norm!).toBeCloseTo(
      Math.sqrt(Object.values(g.gradient).reduce((t: number, v) => t + v! ** 2, 0)),
      12,
    )
    expect(g.undefined_because).toBeUndefined()
  })

  it('reports a component whose neighbour has an undefined objective as undefined, never 0, and then no norm (review R#13)', () => {
    // constant scores (undefined correlation) once decay reaches 0
    const g = gradientAt(at, (w) => ({weights: w, objective: w.decay === 0 ? null : linear(w), token_budget: 0}), 0.05)
    expect(g.gradient.decay).toBeNull()
    expect(g.undefined_because?.decay).toMatch(/undefined \(constant scores\) at decay = 0\.00/)
    expect(g.gradient_norm).toBeNull()
    expect(g.gradient.surprise).not.toBeNull()
  })
})
