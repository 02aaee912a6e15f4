/**
 * BOHB: Bayesian optimisation and Hyperband (Falkner, Klein & Hutter 2018, "BOHB: Robust and
 * Efficient Hyperparameter Optimization at Scale"), following the reference implementation
 * hpbandster (optimizers/bohb.py, optimizers/config_generators/bohb.py,
 * optimizers/iterations/successivehalving.py):
 *
 * - Hyperband brackets (hyperband.ts), each run as synchronous successive halving: a rung starts
 *   only when the previous rung has finished; the best 1/eta (by loss) are promoted; a failed
 *   trial is never promoted (successive-halving.ts).
 * - One KDE pair per budget, built from every result at that budget once at least
 *   min_points_in_model results exist and each side of the good/bad split has more points than
 *   dimensions (the best top_n_percent are "good"). New configurations are drawn from the model of
 *   the largest budget that has one: num_samples candidates around good points (truncated normal
 *   with bandwidth x bandwidth_factor, categoricals kept with probability 1 - lambda), keeping the
 *   one with the smallest bad/good density ratio. A random_fraction of configurations is drawn
 *   uniformly at random.
 * - Floored simplex groups: the group's free coordinates are redrawn together until they are
 *   feasible (rejection sampling inside the KDE).
 * - A promoted configuration's trial names the trial it continues, so an objective with
 *   continuation reuses the lower-budget work.
 * - All randomness comes from one seeded Rng, drawn only in ask(): the same seed and the same
 *   results in the same order give the same trials.
 * - Replay hints (bohb-replay.ts): a model-based ask's hint, stored with its trial, lets a copy
 *   told the same history repeat that ask (replayAsk) cheaply and end bit-identical to the asker.
 *
 * Departures from hpbandster, each stated where it is made: densities are compared in log space
 * (no underflow in 16-D; hpbandster clips both densities at 1e-32); the categorical lambda is
 * capped at (c - 1) / c; a failed trial is never promoted (hpbandster ranks it last as +inf but
 * can promote it when too few succeed); by default continuous bandwidths are floored with
 * Optuna's magic clip (KT_BOHB_MAGIC_CLIP below), and simplex candidates may be projected onto the
 * simplex's faces (KT_BOHB_SIMPLEX_SAMPLING below), and single-fidelity objectives draw fewer
 * random configurations with narrower candidates (KT_SINGLE_FIDELITY_DEFAULTS); `reference: true`
 * turns all three off. With several budgets kt keeps hpbandster's values (docs/search.md says why).
 */
import type {Config, ParamSpace} from '../space/index.js'
import {Rng} from '../util/rng.js'
import {InputError} from '../util/errors.js'
import {BohbModel, type SimplexSampling} from './bohb-model.js'
import {BOHB_HINT_FORMAT, hashText, ReplayHints, type ReplayRequest} from './bohb-replay.js'
import {Encoding} from './encoding.js'
import {FidelityCheck} from './fidelity-check.js'
import {checkFidelity} from './hyperband.js'
import {HyperbandSchedule} from './successive-halving.js'
import type {AskHint, Fidelity, Optimizer, Trial, TrialResult} from './types.js'

export {BOHB_HINT_FORMAT} from './bohb-replay.js'
export {goodBadSplit} from './bohb-model.js'

/** hpbandster BOHB defaults (config_generators/bohb.py), as in Falkner et al. 2018, section 4. */
const BOHB_DEFAULTS = {
  /** Percentage of the observations that form the "good" density. */
  topNPercent: 15,
  /** Candidates drawn from the good density per model-based configuration. */
  numSamples: 64,
  /** Fraction of configurations sampled uniformly at random, model or not. */
  randomFraction: 1 / 3,
  /** Widens the good KDE's bandwidth when drawing candidates, for more exploration. */
  bandwidthFactor: 3,
  /** Lower bound of every KDE bandwidth, so the model never collapses onto single points. */
  minBandwidth: 1e-3,
} as const

/**
 * kt's one deliberate departure from hpbandster, measured with `kt bench optimizers` (10 seeds):
 * with hpbandster's fixed 1e-3 floor the good KDE collapses onto a tight cluster on smooth
 * problems (simplex: median regret 0.020 after 200 evaluations, worse than random's 0.017;
 * branin 0.063). Optuna's magic clip (bandwidth >= range / min(100, 1 + n)) keeps it exploring:
 * simplex 0.0013, branin 0.0023, with counting_ones unchanged within noise. `reference: true`
 * restores hpbandster's behaviour exactly.
 */
const KT_BOHB_MAGIC_CLIP = true

/**
 * How a simplex group's candidates are drawn around a good point. hpbandster has no simplex; kt's
 * reference mode redraws the free coordinates until they are feasible ('reject'), which almost
 * never lands on a face of the simplex. Fusion-weight optima often sit on a face (a signal that
 * does not help stays at its floor), where the loss rises linearly, not quadratically, with the
 * distance from the face, so an optimiser that cannot reach the face stalls a noise-width away
 * from the optimum. 'project' perturbs the point and takes its Euclidean projection onto the
 * simplex, giving every face (every floor) positive probability; 'project-near' projects only a
 * draw that lands within one of the model's own kernel widths (before bandwidth_factor widening)
 * of the simplex and redraws the rest, so that a wide early kernel does not pile candidates onto
 * the vertices. Measured with `kt bench optimizers --seeds 0-9` (median regret at 25/50/100/200
 * b_max): simplex_mf reject 0.0113/0.0116/0.00373/0.00277, project 0.0162/0.00445/0.00251/0.00138,
 * project-near 0.00676/0.00314/0.00207/0.00127.
 */
const KT_BOHB_SIMPLEX_SAMPLING: SimplexSampling = 'project-near'

/**
 * kt's defaults when the objective has a single fidelity (no Hyperband rungs below b_max). BOHB's
 * third of random configurations guards the model against misleading cheap budgets; with one
 * fidelity there are none, and every random configuration costs a full evaluation (Optuna's TPE
 * draws at random only its first trials). Chosen on seeds 10-39 and confirmed on the contract's
 * seeds 0-9 (`kt bench optimizers --function branin,hartmann6,simplex --seeds 0-9`, median regret
 * at 200 evaluations): branin 0.00229 -> 0.00144, hartmann6 0.270 -> 0.105, simplex 1.25e-4 ->
 * 1.10e-5. `reference: true` keeps hpbandster's values.
 */
const KT_SINGLE_FIDELITY_DEFAULTS = {randomFraction: 0.1, bandwidthFactor: 2} as const

/**
 * A model that starts sooner: hpbandster waits until each side of the good/bad split has more
 * points than dimensions (statsmodels' multivariate KDE needs it), 2d + 2 results at one budget:
 * 42 in 20 dimensions, where TPE starts after 10. kt's KDE is a product of one-dimensional
 * kernels and needs no such count: with earlyModel a budget gets a model once each side has
 * minPointsInModel points, min(d + 1, KT_EARLY_MODEL_POINTS) by default. Off in reference mode.
 */
const KT_BOHB_EARLY_MODEL = false
const KT_EARLY_MODEL_POINTS = 5

/**
 * Fidelity that earns its place (fidelity-check.ts): brackets stop starting at a budget, and its
 * model stops being drawn from, once its ranking disagrees with the largest budget's. Off in
 * reference mode.
 */
const KT_BOHB_FIDELITY_CHECK = false

/** The budget of single-fidelity objectives. */
export const SINGLE_FIDELITY: Fidelity = {min: 1, max: 1, eta: 3}

export interface BohbOptions {
  readonly seed: number
  readonly fidelity?: Fidelity
  readonly topNPercent?: number
  readonly numSamples?: number
  readonly randomFraction?: number
  readonly bandwidthFactor?: number
  readonly minBandwidth?: number
  /** Observations at a budget before a model is built (default: dimensions + 1, as hpbandster). */
  readonly minPointsInModel?: number
  /** Floor continuous KDE bandwidths at 1 / min(100, 1 + n) (Optuna's magic clip); default on, off in hpbandster. */
  readonly magicClip?: boolean
  /** Candidate sampling in simplex groups (see SimplexSampling); 'project-near' by default, 'reject' in reference mode. */
  readonly simplexSampling?: SimplexSampling
  /** Exactly hpbandster's BOHB: turns the magic clip off unless magicClip is given. */
  readonly reference?: boolean
  /** Weight of a uniform prior in both KDEs, in data points (Optuna's consider_prior); 0 in hpbandster. */
  readonly priorWeight?: number
  /** Hyperband iterations (brackets) to run; unbounded by default (the study stops it). */
  readonly maxIterations?: number
  /** Model as soon as each side of the split has minPointsInModel points (KT_BOHB_EARLY_MODEL). */
  readonly earlyModel?: boolean
  /** Stop starting brackets at budgets that misrank against the largest (KT_BOHB_FIDELITY_CHECK). */
  readonly fidelityCheck?: boolean
  /** False when the objective's budgets are not comparable tiers: every bracket runs at the largest budget only (default: the fidelity's `comparable`). */
  readonly comparableBudgets?: boolean
}

export class BohbOptimizer implements Optimizer {
  readonly name = 'bohb'
  readonly encoding: Encoding
  readonly fidelity: Fidelity
  private readonly rng: Rng
  private readonly options: Required<
    Omit<BohbOptions, 'fidelity' | 'maxIterations' | 'earlyModel' | 'fidelityCheck' | 'comparableBudgets'>
  > & {maxIterations: number; earlyModel: boolean}
  /** Set when brackets and models follow the fidelity check. */
  private readonly check: FidelityCheck | undefined
  private readonly schedule: HyperbandSchedule
  private readonly model: BohbModel
  private readonly hints: ReplayHints
  /** The last ask's replay hint (a model-based pick), undefined otherwise. */
  private lastHint: AskHint | undefined
  /** Set while replayAsk runs: what the stored hint offers (ReplayRequest). */
  private replaying: ReplayRequest | undefined

  constructor(space: ParamSpace, options: BohbOptions) {
    this.encoding = new Encoding(space)
    this.fidelity = options.fidelity ?? SINGLE_FIDELITY
    checkFidelity(this.fidelity)
    const d = this.encoding.size
    const defaults =
      this.fidelity.min === this.fidelity.max && !options.reference
        ? {...BOHB_DEFAULTS, ...KT_SINGLE_FIDELITY_DEFAULTS}
        : BOHB_DEFAULTS
    this.options = {
      seed: options.seed,
      topNPercent: options.topNPercent ?? defaults.topNPercent,
      numSamples: options.numSamples ?? defaults.numSamples,
      randomFraction: options.randomFraction ?? defaults.randomFraction,
      bandwidthFactor: options.bandwidthFactor ?? defaults.bandwidthFactor,
      minBandwidth: options.minBandwidth ?? defaults.minBandwidth,
      minPointsInModel: options.minPointsInModel ?? (early(options) ? Math.min(d + 1, KT_EARLY_MODEL_POINTS) : d + 1),
      magicClip: options.magicClip ?? (options.reference ? false : KT_BOHB_MAGIC_CLIP),
      reference: options.reference ?? false,
      simplexSampling: options.simplexSampling ?? (options.reference ? 'reject' : KT_BOHB_SIMPLEX_SAMPLING),
      priorWeight: options.priorWeight ?? 0,
      maxIterations: options.maxIterations ?? Infinity,
      earlyModel: early(options),
    }
    const o = this.options
    if (!(o.topNPercent > 0 && o.topNPercent < 100))
      throw new InputError('bohb: top_n_percent', 'a percentage in (0, 100)', String(o.topNPercent))
    if (!(o.randomFraction >= 0 && o.randomFraction <= 1))
      throw new InputError('bohb: random_fraction', 'a fraction in [0, 1]', String(o.randomFraction))
    if (!(o.numSamples >= 1)) throw new InputError('bohb: num_samples', 'at least 1', String(o.numSamples))
    this.rng = new Rng(options.seed)
    // what the draws depend on: a parameter's description, env var or default do not
    const params = JSON.stringify(space.params, (key, value) =>
      key === 'description' || key === 'env' || key === 'default' ? undefined : value,
    )
    const fidelityCheck = options.fidelityCheck ?? (options.reference ? false : KT_BOHB_FIDELITY_CHECK)
    const comparable = options.comparableBudgets ?? this.fidelity.comparable ?? true
    // the departures below enter the fingerprint only when on, so hints of runs without them keep theirs
    const {earlyModel, ...hashed} = this.options
    const departures = {
      ...(earlyModel ? {earlyModel} : {}),
      ...(fidelityCheck ? {fidelityCheck} : {}),
      ...(comparable ? {} : {comparableBudgets: false}),
    }
    this.hints = new ReplayHints(
      hashText(
        `${BOHB_HINT_FORMAT} ${params} ${JSON.stringify(this.fidelity)} ${JSON.stringify({...hashed, ...departures})}`,
      ),
    )
    this.check = fidelityCheck ? new FidelityCheck(this.fidelity.max) : undefined
    const max = this.fidelity.max
    const trusted = (budget: number): boolean => budget >= max || (comparable && (this.check?.trusted(budget) ?? true))
    this.schedule = new HyperbandSchedule(this.encoding, this.fidelity, o.maxIterations, 'bohb', trusted)
    this.model = new BohbModel(this.encoding, this.rng, o, trusted)
  }

  /**
   * Replayed model-based asks: restored from their hint's state without drawing, drawn up to the
   * hint's pick without scoring (format 1), or re-scored in full.
   */
  get replayCounts(): {restored: number; drawn: number; rejected: number} {
    return this.hints.replayCounts
  }

  /** The id the next asked trial gets (the schedule's; tests shift it to check a hint's binding to it). */
  private get nextTrialId(): number {
    return this.schedule.nextTrialId
  }

  private set nextTrialId(id: number) {
    this.schedule.nextTrialId = id
  }

  ask(): Trial | 'wait' | 'done' {
    this.lastHint = undefined
    return this.schedule.ask(() => {
      const proposal = this.model.sample(this.replaying, this.hints, this.nextTrialId)
      this.lastHint = proposal.hint
      return proposal
    })
  }

  tell(trialId: number, result: TrialResult): void {
    this.schedule.tell(trialId, result, (budget, vector, _result, configId) => {
      this.hints.noteTell(trialId, this.nextTrialId, result)
      this.check?.record(configId, budget, result.status === 'ok' ? result.loss : undefined)
      this.model.observe(budget, vector, result)
    })
  }

  askHint(): AskHint | undefined {
    return this.lastHint
  }

  replayAsk(hint: unknown, config: Config): Trial | 'wait' | 'done' {
    this.replaying = this.hints.read(hint, config, this.options.numSamples, this.encoding.size)
    if (!this.replaying) this.hints.replayCounts.rejected++
    try {
      return this.ask()
    } finally {
      this.replaying = undefined
    }
  }

  /** Budgets that currently have a model, for reports and tests. */
  modelBudgets(): number[] {
    return this.model.modelBudgets()
  }
}

/** Whether the model starts early (KT_BOHB_EARLY_MODEL; never in reference mode unless asked). */
function early(options: BohbOptions): boolean {
  return options.earlyModel ?? (options.reference ? false : KT_BOHB_EARLY_MODEL)
}
