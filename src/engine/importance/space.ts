import type {ParamSpace} from '../../space/types.js'

/**
 * The importance scorer's parameters: four signal weights on the simplex (floor 0, so a signal can
 * be switched off) and the decay time scale. Baseline weights are those of the Ada study
 * (decay .40, surprise .30, relevance .20, habituation .10).
 */
export const IMPORTANCE_SPACE: ParamSpace = {
  id: 'importance',
  params: [
    {
      kind: 'simplex',
      name: 'importance.weights',
      description: 'Weights of the four importance signals; they sum to 1.',
      floor: 0,
      members: [
        {
          name: 'decay',
          env: 'IMPORTANCE_WEIGHT_DECAY',
          default: 0.4,
          description: 'Weight of recency decay exp(-age/time_scale).',
        },
        {
          name: 'surprise',
          env: 'IMPORTANCE_WEIGHT_SURPRISE',
          default: 0.3,
          description: "Weight of surprise (the turn's prediction error).",
        },
        {
          name: 'relevance',
          env: 'IMPORTANCE_WEIGHT_RELEVANCE',
          default: 0.2,
          description: "Weight of relevance (TF-IDF cosine of the turn's text to its query).",
        },
        {
          name: 'habituation',
          env: 'IMPORTANCE_WEIGHT_HABITUATION',
          default: 0.1,
          description: 'Weight of novelty after habituation 1/(1 + earlier repeats).',
        },
      ],
    },
    {
      kind: 'float',
      name: 'time_scale_hours',
      env: 'IMPORTANCE_TIME_SCALE_HOURS',
      low: 1,
      high: 8760,
      scale: 'log',
      default: 168,
      description: 'Decay time scale in hours: a turn this old keeps exp(-1) of its decay signal (default one week).',
    },
  ],
}

export {SIGNALS, type Signal} from '../../data/importance/input.js'
import type {Signal} from '../../data/importance/input.js'

/** Weights as a fixed-order tuple for the hot loop. */
export type Weights = Readonly<Record<Signal, number>>

/** The weights of an importance configuration. */
export function weightsFromConfig(config: Readonly<Record<string, unknown>>): Weights {
  return {
    decay: config.decay as number,
    surprise: config.surprise as number,
    relevance: config.relevance as number,
    habituation: config.habituation as number,
  }
}

/** A full importance configuration from weights and the decay time scale. */
export function importanceConfig(w: Weights, timeScaleHours: number): Record<string, number> {
  return {
    decay: w.decay,
    surprise: w.surprise,
    relevance: w.relevance,
    habituation: w.habituation,
    time_scale_hours: timeScaleHours,
  }
}

/** Weights scaled to sum to 1 (the simplex); all-zero weights have no normalisation. */
export function normalizeWeights(w: Weights): Weights {
  const total = w.decay + w.surprise + w.relevance + w.habituation
  if (!(total > 0)) throw new RangeError('weights must have a positive sum to be normalised')
  return {
    decay: w.decay / total,
    surprise: w.surprise / total,
    relevance: w.relevance / total,
    habituation: w.habituation / total,
  }
}
