import {IMPORTANCE_SPACE, weightsFromConfig} from '../engine/importance/space.js'
import {scoreColumns} from '../engine/importance/score.js'
import {pearson, spearman} from '../stats/correlation.js'
import {Rng} from '../util/rng.js'
import type {ParamSpace} from '../space/types.js'
import type {Objective, Fidelity} from '../space/objective.js'
import {computeSignals} from '../engine/importance/signals.js'
import {loadDataset, toImportanceInput, truthOf} from '../data/importance/dataset.js'

/** The searched part of the importance space: the weight simplex (the time scale stays fixed). */
export const IMPORTANCE_WEIGHT_SPACE: ParamSpace = {
  id: 'importance-weights',
  params: IMPORTANCE_SPACE.params.filter((p) => p.kind === 'simplex'),
}

/**
 * Budgets are ninths of the tuning set (1, 3, 9 with eta 3, as the retrieval tiers): a low-budget
 * evaluation scores a seeded subsample, and a promoted configuration sees a superset of it.
 */
export const IMPORTANCE_FIDELITY: Fidelity = {min: 1, max: 9, eta: 3}

export interface ImportanceObjectiveOptions {
  readonly dataset: string
  readonly timeScaleHours: number
  readonly objective: 'spearman' | 'pearson'
  readonly seed: number
}

/**
 * The importance study as a search objective: loss = -correlation of the scores with the truth on
 * the budget's share of the tuning turns. Deterministic: the same configuration and budget always
 * give the same loss.
 */
export function importanceObjective(
  cols: Parameters<typeof scoreColumns>[0],
  truth: Float64Array,
  kind: 'spearman' | 'pearson',
  seed: number,
  id: string,
): Objective {
  const order = new Rng(seed).fork('importance-fidelity').shuffle(Array.from({length: cols.n}, (_, i) => i))
  const correlation = kind === 'spearman' ? spearman : pearson
  const scores = new Float64Array(cols.n)
  return {
    id,
    space: IMPORTANCE_WEIGHT_SPACE,
    fidelity: IMPORTANCE_FIDELITY,
    evaluate(config, budget) {
      scoreColumns(cols, weightsFromConfig(config), scores)
      const m = Math.max(3, Math.round((cols.n * budget) / IMPORTANCE_FIDELITY.max))
      const pick = order.slice(0, m)
      const r = correlation(
        Float64Array.from(pick, (i) => scores[i]),
        Float64Array.from(pick, (i) => truth[i]),
      )
      // an undefined correlation (constant scores) is the worst possible, not a crash
      return {loss: r === null ? 1 : -r, metrics: {[kind]: r ?? Number.NaN, turns: m}}
    },
  }
}

/** Module factory, so a stored study can be resumed with `kt search --resume` (objective 'module'). */
export function createObjective(options: ImportanceObjectiveOptions): Objective {
  const d = loadDataset(options.dataset)
  return importanceObjective(
    computeSignals(toImportanceInput(d), options.timeScaleHours),
    truthOf(d),
    options.objective,
    options.seed,
    `importance:${d.id}`,
  )
}
