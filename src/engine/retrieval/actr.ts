/**
 * ACT-R base-level activation (Anderson & Lebiere 1998, "The Atomic Components of Thought",
 * ch. 4; Anderson et al. 2004): B_i = ln( sum_j t_j^(-d) ), where t_j is the time since the j-th
 * presentation of memory i (its creation and every later access) and d the decay (0.5 in ACT-R).
 */

/** Ages below this are clamped, so a just-created memory does not get infinite activation. */
export const ACTR_MIN_AGE_DAYS = 1 / 24

/** B = ln(sum t^-d) over presentation ages in days. -Infinity if there are none. */
export function baseLevelActivation(agesDays: ArrayLike<number>, decay: number): number {
  let sum = 0
  for (let j = 0; j < agesDays.length; j++) sum += Math.pow(Math.max(agesDays[j], ACTR_MIN_AGE_DAYS), -decay)
  return Math.log(sum)
}

/**
 * Recency on [0, 1] from base-level activations: exp(B_i - max_j B_j), i.e. each memory's
 * summed presentation strength relative to the strongest candidate. With one presentation each
 * this is (t_min / t_i)^d.
 */
export function recencyFromBaseLevels(baseLevels: Float64Array, items: readonly number[], out: Float64Array): void {
  let max = -Infinity
  for (const i of items) if (baseLevels[i] > max) max = baseLevels[i]
  for (const i of items) out[i] = max === -Infinity ? 0 : Math.exp(baseLevels[i] - max)
}

/**
 * Accesses of memories after their creation (a retrieval counts as a presentation in ACT-R).
 * Kept outside the engine's indexes so that evaluation runs without accesses by default.
 */
export class AccessLog {
  private readonly times: number[][]

  constructor(readonly size: number) {
    this.times = Array.from({length: size}, () => [])
  }

  record(item: number, time: number): void {
    this.times[item].push(time)
  }

  /** Access times of an item at or before `referenceTime`. */
  accessesBefore(item: number, referenceTime: number): number[] {
    return this.times[item].filter((t) => t <= referenceTime)
  }
}
