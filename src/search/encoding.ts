/**
 * Encoding between a ParamSpace configuration and the unit cube the optimisers work in. It reads
 * only the ParamSpace table (src/space), so every optimiser sees the same parameters.
 *
 * Dimensions, in table order:
 * - float: (x - low) / (high - low), or the same on log(x) for log scale;
 * - int: like a float over [low - 1/2, high + 1/2] so each integer owns an equal cell (the
 *   representation ConfigSpace uses, which hpbandster's KDE works on); decoding rounds;
 * - categorical: the choice index (0 .. c-1), a "vartype" of c in hpbandster's terms;
 * - simplex group of k members with floor f: k - 1 coordinates u_i = (w_i - f) / (1 - k f); the
 *   last member is implied, w_k = 1 - sum of the others. Feasible points satisfy sum(u) <= 1; the
 *   samplers keep to that constraint (uniform Dirichlet draws, rejection inside the KDE).
 */
import type {Choice, Config, FloatParam, IntParam, ParamSpace, SimplexGroup} from '../space/index.js'
import {checkSpace, configKeys} from '../space/index.js'
import {InputError} from '../util/errors.js'
import type {Rng} from '../util/rng.js'

/** Spans below this are treated as a single point (a simplex whose floors sum to exactly 1). */
const DEGENERATE_SPAN = 1e-12

/** Half an integer cell: ints are encoded over [low - 1/2, high + 1/2] (ConfigSpace's convention). */
const INT_CELL_HALF = 0.5

type DimKind = 'float' | 'int' | 'categorical' | 'simplex'

/** One coordinate of the unit-cube encoding. */
export interface Dim {
  readonly kind: DimKind
  /** Parameter (or simplex member) name this coordinate carries. */
  readonly name: string
  /** 0 for continuous coordinates, the number of choices for a categorical (hpbandster's vartypes). */
  readonly vartype: number
  /** Index of the simplex group, for simplex coordinates. */
  readonly group?: number
}

/** A simplex group's coordinates in the vector. */
export interface SimplexBlock {
  readonly param: SimplexGroup
  /** Vector indices of the k - 1 free coordinates. */
  readonly dims: readonly number[]
  /** 1 - k * floor: the length each free coordinate is scaled by. */
  readonly span: number
}

export class Encoding {
  readonly dims: Dim[] = []
  readonly vartypes: Int32Array
  readonly simplexBlocks: SimplexBlock[] = []
  private readonly keys: Set<string>
  /**
   * Per parameter (table order), a numeric parameter's encoded interval: its low end and its
   * length high - low (encodedBounds), computed once instead of in every encode and decode.
   */
  private readonly lows: Float64Array
  private readonly spans: Float64Array

  constructor(readonly space: ParamSpace) {
    checkSpace(space)
    for (const p of space.params) {
      if (p.kind === 'simplex') {
        const block: SimplexBlock = {param: p, dims: [], span: 1 - p.members.length * p.floor}
        const group = this.simplexBlocks.length
        for (let i = 0; i < p.members.length - 1; i++) {
          ;(block.dims as number[]).push(this.dims.length)
          this.dims.push({kind: 'simplex', name: p.members[i].name, vartype: 0, group})
        }
        this.simplexBlocks.push(block)
      } else if (p.kind === 'categorical') {
        this.dims.push({kind: 'categorical', name: p.name, vartype: p.choices.length})
      } else {
        this.dims.push({kind: p.kind, name: p.name, vartype: 0})
      }
    }
    this.vartypes = Int32Array.from(this.dims, (d) => d.vartype)
    this.keys = new Set(configKeys(space))
    this.lows = new Float64Array(space.params.length)
    this.spans = new Float64Array(space.params.length)
    space.params.forEach((p, i) => {
      if (p.kind !== 'float' && p.kind !== 'int') return
      const [low, high] = encodedBounds(p)
      this.lows[i] = low
      this.spans[i] = high - low
    })
  }

  get size(): number {
    return this.dims.length
  }

  /**
   * The unit-cube vector of a configuration. Unknown or missing names are one-line errors, unless
   * `ignoreUnknown` (a stored trial's configuration, which also holds parameters fixed outside the search).
   */
  encode(config: Config, where = 'configuration', ignoreUnknown = false): Float64Array {
    if (!ignoreUnknown) {
      for (const key of Object.keys(config)) {
        if (!this.keys.has(key))
          throw new InputError(`${where}: ${key}`, `a parameter of space ${this.space.id}`, 'an unknown name')
      }
    }
    const vector = new Float64Array(this.dims.length)
    const params = this.space.params
    let d = 0
    for (let i = 0; i < params.length; i++) {
      const p = params[i]
      if (p.kind === 'simplex') {
        const block = this.simplexBlocks[this.dims[d].group ?? 0]
        for (let i = 0; i < p.members.length - 1; i++) {
          const w = numberOf(config, p.members[i].name, where)
          vector[d++] = block.span > DEGENERATE_SPAN ? clamp01((w - p.floor) / block.span) : 0
        }
      } else if (p.kind === 'categorical') {
        const index = p.choices.indexOf(config[p.name] as Choice)
        if (index < 0)
          throw new InputError(
            `${where}: ${p.name}`,
            `one of ${p.choices.map(String).join(', ')}`,
            String(config[p.name]),
          )
        vector[d++] = index
      } else {
        vector[d++] = encodeIn(p, this.lows[i], this.spans[i], numberOf(config, p.name, where))
      }
    }
    return vector
  }

  /** The configuration of a unit-cube vector (values outside [0, 1] are clamped). */
  decode(vector: ArrayLike<number>): Config {
    const config: Config = {}
    const params = this.space.params
    let d = 0
    for (let i = 0; i < params.length; i++) {
      const p = params[i]
      if (p.kind === 'simplex') {
        const block = this.simplexBlocks[this.dims[d].group ?? 0]
        const us: number[] = []
        for (let i = 0; i < p.members.length - 1; i++) us.push(clamp01(vector[d++]))
        const weights = simplexWeights(p, block.span, us)
        p.members.forEach((m, i) => (config[m.name] = weights[i]))
      } else if (p.kind === 'categorical') {
        config[p.name] = p.choices[categoryIndex(vector[d++], p.choices.length)]
      } else {
        config[p.name] = decodeIn(p, this.lows[i], this.spans[i], vector[d++])
      }
    }
    return config
  }

  /**
   * encode(decode(vector)), the vector of the configuration a vector stands for (ints snapped,
   * categories rounded, simplex groups made feasible), computed coordinate by coordinate with the
   * same arithmetic and without building the configuration in between.
   */
  canonical(vector: ArrayLike<number>): Float64Array {
    const out = new Float64Array(this.dims.length)
    const params = this.space.params
    let d = 0
    for (let i = 0; i < params.length; i++) {
      const p = params[i]
      if (p.kind === 'simplex') {
        const block = this.simplexBlocks[this.dims[d].group ?? 0]
        const us: number[] = []
        for (let m = 0; m < p.members.length - 1; m++) us.push(clamp01(vector[d + m]))
        const weights = simplexWeights(p, block.span, us)
        for (let m = 0; m < p.members.length - 1; m++)
          out[d++] = block.span > DEGENERATE_SPAN ? clamp01((weights[m] - p.floor) / block.span) : 0
      } else if (p.kind === 'categorical') {
        // encode looks the decoded choice up again: the first of equal choices
        const index = p.choices.indexOf(p.choices[categoryIndex(vector[d], p.choices.length)])
        // a choice indexOf cannot find (NaN): the checked path, which says so
        if (index < 0) return this.encode(this.decode(vector))
        out[d++] = index
      } else {
        out[d] = encodeIn(p, this.lows[i], this.spans[i], decodeIn(p, this.lows[i], this.spans[i], vector[d]))
        d++
      }
    }
    return out
  }

  /** True if the vector satisfies every simplex constraint (sum of free coordinates <= 1). */
  feasible(vector: ArrayLike<number>): boolean {
    for (const block of this.simplexBlocks) {
      let sum = 0
      for (const d of block.dims) sum += vector[d]
      if (sum > 1) return false
    }
    return true
  }

  /**
   * A uniform draw from the space: each scalar coordinate uniform on [0, 1] (log-uniform and
   * uniform over integers after decoding), each categorical uniform over its choices, each floored
   * simplex uniform (a flat Dirichlet over the free weight).
   */
  sampleUniform(rng: Rng): Float64Array {
    const vector = new Float64Array(this.dims.length)
    for (let d = 0; d < this.dims.length; d++) {
      const dim = this.dims[d]
      if (dim.kind === 'categorical') vector[d] = rng.int(dim.vartype)
      else if (dim.kind !== 'simplex') vector[d] = rng.next()
    }
    for (const block of this.simplexBlocks) {
      const k = block.dims.length + 1
      const draw = rng.dirichlet(new Float64Array(k).fill(1))
      block.dims.forEach((d, i) => (vector[d] = draw[i]))
    }
    return vector
  }
}

/** Reads a number from a configuration or throws a one-line error naming the field. */
function numberOf(config: Config, name: string, where: string): number {
  const value = config[name]
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new InputError(`${where}: ${name}`, 'a finite number', value === undefined ? 'nothing' : String(value))
  return value
}

function clamp01(x: number): number {
  return x < 0 ? 0 : x > 1 ? 1 : x
}

/** The category a coordinate names (nearest index, clamped). */
function categoryIndex(x: number, count: number): number {
  const i = Math.round(x)
  return i < 0 ? 0 : i >= count ? count - 1 : i
}

/** The [low, high] interval a numeric parameter is encoded over, in the encoding's scale. */
function encodedBounds(p: FloatParam | IntParam): [number, number] {
  const pad = p.kind === 'int' ? INT_CELL_HALF : 0
  const low = p.low - pad
  const high = p.high + pad
  return p.scale === 'log' ? [Math.log(low), Math.log(high)] : [low, high]
}

export function decodeNumber(p: FloatParam | IntParam, u: number): number {
  const [low, high] = encodedBounds(p)
  return decodeIn(p, low, high - low, u)
}

/** encodeNumber on the parameter's encoded interval [low, low + span] (encodedBounds, span = high - low). */
function encodeIn(p: FloatParam | IntParam, low: number, span: number, x: number): number {
  const t = p.scale === 'log' ? Math.log(x) : x
  return clamp01((t - low) / span)
}

/** decodeNumber on the parameter's encoded interval [low, low + span]. */
function decodeIn(p: FloatParam | IntParam, low: number, span: number, u: number): number {
  const t = low + clamp01(u) * span
  const x = p.scale === 'log' ? Math.exp(t) : t
  if (p.kind === 'int') return Math.min(p.high, Math.max(p.low, Math.round(x)))
  // exp/log round trips can step a hair outside the range at the ends.
  return Math.min(p.high, Math.max(p.low, x))
}

/**
 * The k weights of a floored simplex from its k - 1 free coordinates. The last weight takes the
 * remainder, so the sum is 1 up to one rounding; an infeasible input (sum of coordinates above 1)
 * is scaled back onto the face where the last weight sits at its floor.
 */
function simplexWeights(p: SimplexGroup, span: number, us: readonly number[]): number[] {
  let total = 0
  for (const u of us) total += u
  const scale = total > 1 ? 1 / total : 1
  const weights = us.map((u) => p.floor + u * scale * span)
  let rest = 1
  for (const w of weights) rest -= w
  weights.push(Math.max(p.floor, rest))
  return weights
}
