import {describe, expect, it} from 'vitest'
import type {ParamSpace, SimplexGroup} from '../../src/space/index.js'
import {Encoding} from '../../src/search/encoding.js'
import {applyOverrides} from '../../src/search/space-overrides.js'
import {Rng} from '../../src/util/rng.js'

const space: ParamSpace = {
  id: 'mixed',
  params: [
    {kind: 'float', name: 'lr', low: 1e-4, high: 1, scale: 'log', default: 0.01, env: 'LR', description: ''},
    {kind: 'float', name: 'b', low: 0, high: 1, scale: 'linear', default: 0.75, env: 'B', description: ''},
    {kind: 'int', name: 'k', low: 1, high: 4, scale: 'linear', default: 2, env: 'K', description: ''},
    {kind: 'int', name: 'depth', low: 1, high: 64, scale: 'log', default: 8, env: 'D', description: ''},
    {kind: 'categorical', name: 'mode', choices: ['a', 'b', 'c'], default: 'a', env: 'M', description: ''},
    {
      kind: 'simplex',
      name: 'w',
      floor: 0.05,
      description: '',
      members: [
        {name: 'w.x', env: 'WX', default: 0.5, description: ''},
        {name: 'w.y', env: 'WY', default: 0.3, description: ''},
        {name: 'w.z', env: 'WZ', default: 0.2, description: ''},
      ],
    },
  ],
}

describe('unit-cube encoding', () => {
  const enc = new Encoding(space)

  it('has one coordinate per scalar and k - 1 per simplex group', () => {
    expect(enc.size).toBe(7)
    expect(Array.from(enc.vartypes)).toEqual([0, 0, 0, 0, 3, 0, 0])
  })

  it('maps log and linear ranges, and ints to equal cells', () => {
    const v = enc.encode({lr: 0.01, b: 0.75, k: 1, depth: 8, mode: 'c', 'w.x': 0.5, 'w.y': 0.3, 'w.z': 0.2})
    expect(v[0]).toBeCloseTo(0.5, 12) // log10 0.01 is halfway between -4 and 0
    expect(v[1]).toBeCloseTo(0.75, 12)
    expect(v[2]).toBeCloseTo(0.125, 12) // int 1 of 1..4: the middle of the first of 4 cells
    expect(v[4]).toBe(2)
    expect(v[5]).toBeCloseTo((0.5 - 0.05) / 0.85, 12)
  })

  it('round-trips configurations', () => {
    const config = {lr: 0.003, b: 0.2, k: 3, depth: 17, mode: 'b', 'w.x': 0.6, 'w.y': 0.1, 'w.z': 0.3}
    const back = enc.decode(enc.encode(config))
    for (const [key, value] of Object.entries(config)) {
      if (typeof value === 'number') expect(back[key] as number).toBeCloseTo(value, 10)
      else expect(back[key]).toBe(value)
    }
  })

  it('uniform samples are valid configurations: ints integral, simplex summing to 1 above the floor', () => {
    const rng = new Rng(3)
    for (let i = 0; i < 500; i++) {
      const c = enc.decode(enc.sampleUniform(rng))
      expect(Number.isInteger(c.k) && (c.k as number) >= 1 && (c.k as number) <= 4).toBe(true)
      expect(Number.isInteger(c.depth)).toBe(true)
      const w = [c['w.x'], c['w.y'], c['w.z']] as number[]
      expect(Math.abs(w[0] + w[1] + w[2] - 1)).toBeLessThan(1e-12)
      for (const x of w) expect(x).toBeGreaterThanOrEqual(0.05 - 1e-12)
    }
  })

  it('uniform integer sampling gives every integer an equal share', () => {
    const rng = new Rng(5)
    const counts = [0, 0, 0, 0]
    for (let i = 0; i < 8000; i++) counts[(enc.decode(enc.sampleUniform(rng)).k as number) - 1]++
    for (const c of counts) expect(Math.abs(c - 2000)).toBeLessThan(150)
  })

  it('canonical(v) is encode(decode(v)) bit for bit, inside and outside the cube, with equal choices and a degenerate simplex', () => {
    const odd: ParamSpace = {
      id: 'odd',
      params: [
        ...space.params,
        {kind: 'categorical', name: 'dup', choices: [1, 2, 1, 3], default: 1, env: 'DUP', description: ''},
        {kind: 'float', name: 'tiny', low: 1e-9, high: 1e9, scale: 'log', default: 1, env: 'TINY', description: ''},
        {
          kind: 'simplex',
          name: 's',
          floor: 0.25,
          description: '',
          members: ['s.a', 's.b', 's.c', 's.d'].map((name) => ({
            name,
            env: name.replace('.', '_').toUpperCase(),
            default: 0.25,
            description: '',
          })),
        },
      ],
    }
    const e = new Encoding(odd)
    const rng = new Rng(5)
    for (let i = 0; i < 2000; i++) {
      const v = Float64Array.from({length: e.size}, (_, j) =>
        e.vartypes[j] > 0 ? rng.uniform(-1, e.vartypes[j] + 1) : rng.uniform(-0.3, 1.3),
      )
      expect(Array.from(e.canonical(v))).toEqual(Array.from(e.encode(e.decode(v))))
    }
  })

  it('names an unknown parameter in a one-line error', () => {
    expect(() => enc.encode({lr: 0.01, nope: 1} as never)).toThrow(
      /configuration: nope: expected a parameter of space mixed, got an unknown name/,
    )
  })
})

describe('bad spaces and overrides are one-line errors', () => {
  it('empty range', () => {
    const bad: ParamSpace = {
      id: 's',
      params: [{kind: 'float', name: 'x', low: 1, high: 1, scale: 'linear', default: 1, env: 'X', description: ''}],
    }
    expect(() => new Encoding(bad)).toThrow(/parameter space s: x: expected a range with low < high, got \[1, 1\]/)
    expect(() => applyOverrides(space, {range: ['b=0.5:0.5']})).toThrow(
      /--range b: expected a non-empty range with LOW < HIGH, got 0.5:0.5/,
    )
  })

  it('simplex floors summing past 1', () => {
    expect(() => applyOverrides(space, {floor: ['w=0.4']})).toThrow(
      /--floor w: expected floors that sum to at most 1 \(3 x 0.4 = 1.2/,
    )
    const bad: ParamSpace = {...space, params: [{...(space.params[5] as SimplexGroup), floor: 0.5}]}
    expect(() => new Encoding(bad)).toThrow(/expected floors that sum to at most 1/)
  })

  it('unknown parameter', () => {
    expect(() => applyOverrides(space, {fix: ['nope=1']})).toThrow(
      /^--fix nope: expected a parameter of space mixed \(lr, b, k/,
    )
    expect(() => applyOverrides(space, {range: ['zz=0:1']})).toThrow(/--range zz: expected a parameter of space mixed/)
  })

  it('fixing a parameter removes it from the searched space', () => {
    const {space: narrowed, fixed} = applyOverrides(space, {fix: ['mode=b', 'k=3'], range: ['b=0.1:0.2']})
    expect(fixed).toEqual({mode: 'b', k: 3})
    expect(narrowed.params.map((p) => p.name)).toEqual(['lr', 'b', 'depth', 'w'])
    expect(narrowed.params[1]).toMatchObject({low: 0.1, high: 0.2, default: 0.2})
    expect(() => applyOverrides(space, {fix: ['k=9']})).toThrow(/--fix k: expected an integer in \[1, 4\], got 9/)
  })
})
