/**
 * The prior of a tenant's bandits comes from the deployed profile: every arm starts from the flat
 * Dirichlet(BASE_PRIOR_COUNT, ...) and the arms near the profile's value get PROFILE_PRIOR_STRENGTH
 * extra pseudo-observations at the top reward level, weighted by a Gaussian kernel of the distance
 * in bins (width PROFILE_PRIOR_WIDTH_BINS). The profile's own bin thus starts with a prior mean of
 * (1 + 2) / (2 + 2) = 0.75 for binary feedback instead of 0.5. That makes it the likeliest arm of
 * a first draw, not a sure one: Thompson sampling draws every arm from its posterior, and nine
 * flat arms often beat one Beta(3, 1) draw, and the kernel gives the neighbours nearly as much.
 * First queries of the 13-dimension retrieval space, 2000 seeds (src/online/README.md): the
 * profile's bin is drawn in 21% of dimensions (binary) / 28% (4 levels), a bin within one of it in
 * 49% / 60%, and no first query plays the whole profile: a new tenant explores around its profile
 * from the start. A tenant that must stay near its profile gets a larger strength (BanditSettings
 * priorStrength): 10 gives 76% / 93% within one bin, 30 gives 88% / 98%; it then moves away
 * only once evidence outweighs the pseudo-observations. Categorical parameters give the mass to
 * the profile's choice only (their arms have no distance).
 */
import type {Choice} from '../space/types.js'
import type {Dimension} from './bins.js'
import {BASE_PRIOR_COUNT} from './posterior.js'

/** Pseudo-observations of top reward the profile's bin receives (the strength of the profile prior). */
export const PROFILE_PRIOR_STRENGTH = 2
/** Standard deviation, in bins, of the kernel that spreads the profile prior to neighbouring bins. */
const PROFILE_PRIOR_WIDTH_BINS = 1
/** Kernel weights below this are dropped (beyond about 3 bins at width 1), so distant arms keep the flat prior exactly. */
const NEGLIGIBLE_WEIGHT = 0.01

/** Dirichlet prior counts (arm-major, `levels` per arm) for one dimension around the profile value. */
export function profilePrior(
  dim: Dimension,
  profileValue: Choice | undefined,
  levels: number,
  strength: number = PROFILE_PRIOR_STRENGTH,
): Float64Array {
  const arms = dim.values.length
  const prior = new Float64Array(arms * levels).fill(BASE_PRIOR_COUNT)
  if (profileValue === undefined) return prior
  const centre = dim.binOf(profileValue)
  for (let arm = 0; arm < arms; arm++) {
    let weight: number
    if (dim.param.kind === 'categorical') weight = arm === centre ? 1 : 0
    else {
      const distance = (arm - centre) / PROFILE_PRIOR_WIDTH_BINS
      weight = Math.exp(-0.5 * distance * distance)
    }
    if (weight >= NEGLIGIBLE_WEIGHT) prior[arm * levels + levels - 1] += strength * weight
  }
  return prior
}

/**
 * Largest prior strength a tenant may have. The profile's arm starts with a mean about 1/s below
 * 1, its neighbours about 1.6/s below; float64 resolves steps of 2^-53 (1.1e-16) near 1, so those
 * distances keep 2^-53 x s of relative precision: 1.1e-8 at 1e8 (float32's 7 digits), and at
 * about 1e16 the means round to 1.0 and tie, so draws among them become arbitrary. 1e8 also far
 * exceeds any feedback a tenant could gather to outweigh it.
 */
export const MAX_PRIOR_STRENGTH = 1e8
