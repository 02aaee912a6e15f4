/**
 * Fast posterior draws for Thompson sampling. The bandits draw one expected reward per arm per
 * query (11 parameters x 10 arms = 110 draws), so the generic `Rng.normal` (polar method, about
 * 55 ns) and `Rng.gamma` (about 70 ns) are too slow for the 5 µs budget. Everything here still
 * draws its bits from a seeded `Rng`: directly, or through a `DrawStream` seeded from one.
 */
import {Rng, hashString} from '../util/rng.js'

/** Anything that gives uniform 32-bit unsigned integers: an `Rng` or a `DrawStream` seeded from one. */
export interface U32Source {
  nextU32(): number
}

/**
 * A generator seeded from four draws of another (`Rng.reseed`): query draws go through a stream
 * reseeded from the query's `Rng`, so they stay a function of the seed without allocating a
 * generator per query.
 */
export class DrawStream extends Rng implements U32Source {
  constructor(rng?: U32Source) {
    super(0)
    if (rng) this.reseed(rng)
  }
}

/** Layers of the ziggurat (Marsaglia & Tsang 2000, "The Ziggurat Method for Generating Random Variables", J. Stat. Softw. 5(8)). */
const ZIGGURAT_LAYERS = 128
/** Right edge of the base layer for 128 layers (same paper, table for RNOR). */
const ZIGGURAT_R = 3.442619855899
/** Area of each layer for 128 layers (same paper). */
const ZIGGURAT_V = 9.91256303526217e-3
/**
 * Scale of the signed magnitude: 25 of the 32 bits (7 bits pick the layer). Using disjoint bits
 * for the layer and the magnitude avoids the correlation Doornik (2005, "An improved ziggurat
 * method to generate normal random samples") found in the original, which reused them.
 */
const MAGNITUDE_SCALE = 2 ** 24
const INV_2_32 = 2 ** -32

/** Ziggurat tables: kn = acceptance bounds of the magnitude, wn = magnitude-to-x scales, fn = densities at the layer edges. */
export const kn = new Int32Array(ZIGGURAT_LAYERS)
export const wn = new Float64Array(ZIGGURAT_LAYERS)
const fn = new Float64Array(ZIGGURAT_LAYERS)
/** Mask that picks the layer from the low bits of a 32-bit draw. */
export const LAYER_MASK = ZIGGURAT_LAYERS - 1

/** Builds the ziggurat tables (the paper's `zigset` for the normal, with our magnitude scale). */
function buildZigguratTables(): void {
  let dn = ZIGGURAT_R
  let tn = dn
  const q = ZIGGURAT_V / Math.exp(-0.5 * dn * dn)
  kn[0] = Math.floor((dn / q) * MAGNITUDE_SCALE)
  kn[1] = 0
  wn[0] = q / MAGNITUDE_SCALE
  wn[ZIGGURAT_LAYERS - 1] = dn / MAGNITUDE_SCALE
  fn[0] = 1
  fn[ZIGGURAT_LAYERS - 1] = Math.exp(-0.5 * dn * dn)
  for (let i = ZIGGURAT_LAYERS - 2; i >= 1; i--) {
    dn = Math.sqrt(-2 * Math.log(ZIGGURAT_V / dn + Math.exp(-0.5 * dn * dn)))
    kn[i + 1] = Math.floor((dn / tn) * MAGNITUDE_SCALE)
    tn = dn
    fn[i] = Math.exp(-0.5 * dn * dn)
    wn[i] = dn / MAGNITUDE_SCALE
  }
}
buildZigguratTables()

/** Uniform in the open interval (0, 1) from one 32-bit draw (never 0, so its log is finite). */
function openUniform(rng: U32Source): number {
  return (rng.nextU32() + 0.5) * INV_2_32
}

/** A standard normal draw by the ziggurat: one 32-bit draw and a table lookup 98.8% of the time. */
export function fastNormal(rng: U32Source): number {
  const u = rng.nextU32()
  const layer = u & LAYER_MASK
  const hz = (u | 0) >> 7
  if (Math.abs(hz) < kn[layer]) return hz * wn[layer]
  return normalSlowPath(rng, hz, layer)
}

/**
 * The ziggurat's rare case (1.2% of draws): the base strip's tail or the wedge of a layer. Callers
 * that inline the fast path (one draw u: layer = u & LAYER_MASK, hz = (u | 0) >> 7, accept
 * hz * wn[layer] when |hz| < kn[layer]) call this otherwise.
 */
export function normalSlowPath(rng: U32Source, hzIn: number, layerIn: number): number {
  let hz = hzIn
  let layer = layerIn
  for (;;) {
    const x = hz * wn[layer]
    if (layer === 0) {
      // Tail beyond r (Marsaglia 1964): x = -ln(U)/r accepted when 2y > x^2, y = -ln(U).
      let tx: number, ty: number
      do {
        tx = -Math.log(openUniform(rng)) / ZIGGURAT_R
        ty = -Math.log(openUniform(rng))
      } while (ty + ty < tx * tx)
      return hz > 0 ? ZIGGURAT_R + tx : -ZIGGURAT_R - tx
    }
    if (fn[layer] + openUniform(rng) * (fn[layer - 1] - fn[layer]) < Math.exp(-0.5 * x * x)) return x
    const u = rng.nextU32()
    layer = u & LAYER_MASK
    hz = (u | 0) >> 7
    if (Math.abs(hz) < kn[layer]) return hz * wn[layer]
  }
}

/** The squeeze constant of Marsaglia & Tsang (2000): accept when U < 1 - 0.0331 x^4 (about 98% of draws without a logarithm). */
const MT_SQUEEZE = 0.0331

/**
 * Gamma(shape, 1) by Marsaglia & Tsang (2000, "A simple method for generating gamma variables",
 * ACM TOMS 26(3)) on the ziggurat normal; shape < 1 by the boost Gamma(shape+1) * U^(1/shape).
 */
export function fastGamma(rng: U32Source, shape: number): number {
  if (shape < 1) return fastGamma(rng, shape + 1) * Math.pow(openUniform(rng), 1 / shape)
  const d = shape - 1 / 3
  return gammaMT(rng, d, 1 / Math.sqrt(9 * d))
}

/**
 * The Marsaglia-Tsang draw for shape >= 1 given its constants d = shape - 1/3 and
 * c = 1 / sqrt(9 d) (posteriors cache them per count, so a draw needs no square root).
 */
export function gammaMT(rng: U32Source, d: number, c: number): number {
  for (;;) {
    let x: number, v: number
    do {
      const u = rng.nextU32()
      const layer = u & LAYER_MASK
      const hz = (u | 0) >> 7
      x = Math.abs(hz) < kn[layer] ? hz * wn[layer] : normalSlowPath(rng, hz, layer)
      v = 1 + c * x
    } while (v <= 0)
    v = v * v * v
    const u = (rng.nextU32() + 0.5) * INV_2_32
    const x2 = x * x
    if (u < 1 - MT_SQUEEZE * x2 * x2) return d * v
    if (Math.log(u) < 0.5 * x2 + d * (1 - v + Math.log(v))) return d * v
  }
}

/** Beta(a, b) as a ratio of gammas. */
export function fastBeta(rng: U32Source, a: number, b: number): number {
  const x = fastGamma(rng, a)
  return x / (x + fastGamma(rng, b))
}

/**
 * How an arm's expected reward is drawn from its posterior:
 * - exact: the Dirichlet (Beta) draw itself, from gamma variates;
 * - gaussian: a normal with the posterior's exact mean and variance;
 * - logit: a normal in logit space with the exact mean and variance of logit(p) for p ~ Beta(a, b),
 *   psi(a) - psi(b) and psi'(a) + psi'(b) (the logistic-normal approximation, Aitchison & Shen 1980,
 *   "Logistic-normal distributions: some properties and uses", Biometrika 67(2)). It keeps the
 *   Beta's skew and its bounded support, so arms with few observations keep their heavy tail.
 *   For more than two levels (a, b) is the Beta with the Dirichlet mean's first two moments.
 *   Only the argmax matters and the logistic function is increasing, so draws are compared in logit space.
 */
export type SamplerKind = 'exact' | 'gaussian' | 'logit'
export const SAMPLER_KINDS: readonly SamplerKind[] = ['exact', 'gaussian', 'logit']

/** Below this argument digamma and trigamma shift up by their recurrences before the asymptotic series (error < 1e-10 from 6 on). */
const PSI_ASYMPTOTIC_FROM = 6

/** Digamma psi(x) for x > 0: recurrence psi(x) = psi(x+1) - 1/x, then the asymptotic (Stirling) series (Abramowitz & Stegun 6.3.18). */
export function digamma(x: number): number {
  let shift = 0
  while (x < PSI_ASYMPTOTIC_FROM) {
    shift -= 1 / x
    x += 1
  }
  const inv2 = 1 / (x * x)
  return (
    shift +
    Math.log(x) -
    0.5 / x -
    inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 / 132))))
  )
}

/** Trigamma psi'(x) for x > 0: recurrence psi'(x) = psi'(x+1) + 1/x^2, then the asymptotic series (A&S 6.4.12). */
export function trigamma(x: number): number {
  let shift = 0
  while (x < PSI_ASYMPTOTIC_FROM) {
    shift += 1 / (x * x)
    x += 1
  }
  const inv = 1 / x
  const inv2 = inv * inv
  return shift + inv + 0.5 * inv2 + inv * inv2 * (1 / 6 - inv2 * (1 / 30 - inv2 * (1 / 42 - inv2 / 30)))
}

/**
 * One draw of the expected reward sum_l r_l p_l with p ~ Dirichlet(alpha[offset .. offset+levels))
 * and r_l = l / (levels - 1): the exact Thompson draw (gamma variates normalised). For two levels
 * this is Beta(alpha_1, alpha_0).
 */
export function sampleMeanExact(rng: U32Source, alpha: Float64Array, offset: number, levels: number): number {
  if (levels === 2) return fastBeta(rng, alpha[offset + 1], alpha[offset])
  let total = 0
  let weighted = 0
  const top = levels - 1
  for (let l = 0; l < levels; l++) {
    const g = fastGamma(rng, alpha[offset + l])
    total += g
    weighted += g * l
  }
  return weighted / (total * top)
}

/**
 * A moment-matched Gaussian draw of the same expected reward: mean mu = sum r_l alpha_l / alpha_0
 * and variance (sum r_l^2 alpha_l / alpha_0 - mu^2) / (alpha_0 + 1), the exact first two moments
 * of the Dirichlet mean. Gaussian Thompson sampling for bounded rewards keeps the O(sqrt(N T ln N))
 * regret bound (Agrawal & Goyal 2013, "Further optimal regret bounds for Thompson sampling");
 * its tails are lighter than a Beta's at small counts, so it explores badly-rated arms a little less.
 */
export function sampleMeanGaussian(rng: U32Source, alpha: Float64Array, offset: number, levels: number): number {
  const {mean, variance} = dirichletMoments(alpha, offset, levels)
  return mean + Math.sqrt(variance) * fastNormal(rng)
}

/** The mean and variance above of the expected reward under Dirichlet(alpha[offset .. offset+levels)), rewards l / (levels - 1). */
export function dirichletMoments(
  alpha: Float64Array,
  offset: number,
  levels: number,
): {mean: number; variance: number} {
  let total = 0
  let m1 = 0
  let m2 = 0
  const top = levels - 1
  for (let l = 0; l < levels; l++) {
    const a = alpha[offset + l]
    const r = l / top
    total += a
    m1 += a * r
    m2 += a * r * r
  }
  const mean = m1 / total
  const variance = (m2 / total - mean * mean) / (total + 1)
  return {mean, variance: variance > 0 ? variance : 0}
}

/** Seed of a named random stream (a run, an algorithm, a query): independent of the order streams are created in. */
export function streamSeed(seed: number, ...labels: (string | number)[]): number {
  return hashString(`${seed}/${labels.join('/')}`)
}
