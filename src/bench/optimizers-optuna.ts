/**
 * The peer kt's optimisers are held against: Optuna 3.1 on the same contract functions, seeds
 * 0-9, median regret. Multi-fidelity functions use TPE with Hyperband pruning (`tpe_hb`), the
 * others plain TPE, each at the checkpoint kind the contract says to compare on (consumed budget
 * for multi-fidelity functions, evaluations otherwise).
 *
 * Source: ../shared/benchmarks/optuna-results.md, produced by ../shared/peers/optuna_hpo_peer.py
 * with Debian's python3-optuna 3.1.0 on a 2-core machine of this kind.
 */
import {BUDGET_CHECKPOINTS, EVAL_CHECKPOINTS, type OptimizerSummary} from './optimizers.js'

interface PeerAnchor {
  readonly sampler: string
  /** 'budget': checkpoints in b_max of consumed budget; 'evals': in evaluations. */
  readonly axis: 'budget' | 'evals'
  /** Median regret at the contract's checkpoints (25, 50, 100, 200). */
  readonly median: readonly [number, number, number, number]
}

const OPTUNA_ANCHORS: Readonly<Record<string, PeerAnchor>> = {
  branin: {sampler: 'tpe', axis: 'evals', median: [0.69, 0.181, 0.0163, 0.00594]},
  hartmann6: {sampler: 'tpe', axis: 'evals', median: [1.64, 0.575, 0.277, 0.0832]},
  simplex: {sampler: 'tpe', axis: 'evals', median: [0.034, 0.00699, 0.0034, 0.000204]},
  counting_ones: {sampler: 'tpe_hb', axis: 'budget', median: [3.35, 2.72, 2.43, 1.83]},
  simplex_mf: {sampler: 'tpe_hb', axis: 'budget', median: [0.0162, 0.00836, 0.00288, 0.00258]},
}

export interface PeerComparison {
  readonly function: string
  readonly optimizer: string
  readonly peer: string
  readonly axis: 'budget' | 'evals'
  readonly checkpoints: readonly {
    readonly at: number
    readonly kt: number | null
    readonly peer: number
    readonly leads: boolean
  }[]
  readonly leads_everywhere: boolean
}

/** kt's median regret beside Optuna's at each checkpoint of the function's comparison axis. */
export function compareWithOptuna(summary: OptimizerSummary): PeerComparison | undefined {
  const anchor = OPTUNA_ANCHORS[summary.function]
  if (!anchor) return undefined
  const points = anchor.axis === 'budget' ? BUDGET_CHECKPOINTS : EVAL_CHECKPOINTS
  const table = anchor.axis === 'budget' ? summary.at_budget : summary.at_evals
  const checkpoints = points.map((at, i) => {
    const kt = table[String(at)]?.median ?? null
    return {at, kt, peer: anchor.median[i], leads: kt !== null && kt < anchor.median[i]}
  })
  return {
    function: summary.function,
    optimizer: summary.optimizer,
    peer: `optuna-3.1 ${anchor.sampler}`,
    axis: anchor.axis,
    checkpoints,
    leads_everywhere: checkpoints.every((c) => c.leads),
  }
}

/** One line per comparison: kt vs the peer at each checkpoint and whether kt leads. */
export function peerLines(comparisons: readonly PeerComparison[]): string {
  const fmt = (x: number | null): string => (x === null ? 'n/a' : x.toPrecision(3))
  return comparisons
    .map((c) => {
      const unit = c.axis === 'budget' ? ' b_max' : ' evals'
      const cells = c.checkpoints
        .map((p) => `@${p.at}${unit} ${fmt(p.kt)} vs ${fmt(p.peer)}${p.leads ? '' : ' (trails)'}`)
        .join('; ')
      return `${c.function}: ${c.optimizer} vs ${c.peer} (median regret): ${cells} -> ${c.leads_everywhere ? 'leads at every checkpoint' : 'does not lead everywhere'}`
    })
    .join('\n')
}
