/**
 * The configurations phase 1's conformance suite sends an engine: random ones drawn by fast-check
 * from the engine's parameter table, and the corners (every parameter alone at each of its bounds).
 */
import fc from 'fast-check'
import {activeConfig, defaultConfig} from '../space/index.js'
import type {Config, ParamSpace, ParamSpec} from '../space/index.js'

/** One parameter's arbitrary (log parameters drawn uniformly in log space, as the optimisers see them). */
function scalarArbitrary(p: Exclude<ParamSpec, {kind: 'simplex'}>): fc.Arbitrary<Config[string]> {
  if (p.kind === 'categorical') return fc.constantFrom(...p.choices)
  if (p.kind === 'int') {
    if (p.scale === 'log')
      return fc
        .double({min: Math.log(p.low), max: Math.log(p.high + 1), noNaN: true, maxExcluded: true})
        .map((x) => Math.min(p.high, Math.max(p.low, Math.floor(Math.exp(x)))))
    return fc.integer({min: p.low, max: p.high})
  }
  if (p.scale === 'log')
    return fc
      .double({min: Math.log(p.low), max: Math.log(p.high), noNaN: true})
      .map((x) => Math.min(p.high, Math.max(p.low, Math.exp(x))))
  return fc.double({min: p.low, max: p.high, noNaN: true})
}

/** A configuration of the space: every parameter drawn, simplex groups projected onto their floored simplex, inactive ones at their defaults. */
export function configArbitrary(space: ParamSpace): fc.Arbitrary<Config> {
  const parts = space.params.map((p): fc.Arbitrary<Config> => {
    if (p.kind !== 'simplex') return scalarArbitrary(p).map((v) => ({[p.name]: v}))
    const k = p.members.length
    return fc.array(fc.double({min: 0, max: 1, noNaN: true}), {minLength: k, maxLength: k}).map((raw) => {
      const sum = raw.reduce((a, b) => a + b, 0)
      const free = 1 - k * p.floor
      return Object.fromEntries(p.members.map((m, i) => [m.name, p.floor + free * (sum > 0 ? raw[i] / sum : 1 / k)]))
    })
  })
  return fc.tuple(...parts).map((pieces) => activeConfig(space, Object.assign({}, ...pieces) as Config))
}

/** A configuration that differs from the defaults in one parameter (or one simplex group) at a bound. */
export interface BoundConfig {
  /** e.g. "bm25.k1=3" or "fusion: w.bm25=0.95". */
  readonly label: string
  readonly config: Config
}

/**
 * Every parameter alone at each bound (low and high; each choice of a categorical; each simplex
 * member at its largest share with the others at the floor), the rest at the defaults; a
 * conditional parameter with its parent set so that it is active. Exhaustive, not sampled: a
 * table of p parameters has at most a few p corners.
 */
export function boundConfigs(space: ParamSpace): BoundConfig[] {
  const base = defaultConfig(space)
  const out: BoundConfig[] = []
  for (const p of space.params) {
    if (p.kind === 'simplex') {
      const k = p.members.length
      const top = 1 - (k - 1) * p.floor
      for (const m of p.members)
        out.push({
          label: `${p.name}: ${m.name}=${top}`,
          config: {...base, ...Object.fromEntries(p.members.map((x) => [x.name, x.name === m.name ? top : p.floor]))},
        })
      continue
    }
    const parent = p.condition ? {[p.condition.param]: p.condition.values[0]} : {}
    const values = p.kind === 'categorical' ? p.choices : [p.low, p.high]
    for (const v of values) out.push({label: `${p.name}=${String(v)}`, config: {...base, ...parent, [p.name]: v}})
  }
  return out
}
