/**
 * BOHB: Bayesian optimisation and Hyperband (Falkner, Klein & Hutter 2018, "BOHB: Robust and
 * Efficient Hyperparameter Optimization at Scale"), following the reference implementation
 * hpbandster (optimizers/bohb.py, optimizers/config_generators/bohb.py,
 * optimizers/iterations/successivehalving.py):
 *
 * - Hyperband brackets (hyperband.ts), each run as synchronous successive halving: a rung starts
 *   only when the previous rung has finished; the best 1/eta (by loss) are promoted; a failed
 *   trial is never promoted.
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
 * - Replay hints. A model-based ask's hint (askHint, stored with the trial) lets a copy told the
 *   same history repeat that ask (replayAsk) cheaply and end bit-identical to the asker:
 *   - Format BOHB_HINT_FORMAT ({pick, v, s0..s3, n?, x<j>?, h}): the Rng's state after the ask
 *     (n: a spare normal), and a 53-bit check h over the format, space, fidelity and options, the
 *     trial id, a running digest of every result told before the ask (trial id, asks before it,
 *     status, loss and objective values, every bit, in order), the Rng's state before the
 *     candidates and after, the pick and every bit of the kept vector. The copy makes the ask's cheap draws itself (the random-fraction draw), then,
 *     instead of fitting the good KDE and drawing num_samples candidates, encodes the stored
 *     configuration (coordinates that do not encode back exactly, a simplex group's now and then,
 *     travel in x<j>), and takes the hint's state only if the check computed from its OWN state
 *     before the candidates, its own results, its own options and that vector equals h; the bracket bookkeeping is
 *     ask()'s own. O(1) in the candidates. The state is the one thing a hint is trusted for and
 *     it cannot be checked by drawing, so the check binds it to everything the copy knows: a hint
 *     of another row, study, seed, option set or result history (results draw nothing, so only
 *     the check can see them), or damaged in any field, is not taken. What the
 *     check cannot see is another kt whose draws differ under the same format, hence the rule on
 *     BOHB_HINT_FORMAT (bump it when the draws change; a golden test pins the hints).
 *   - Format 1 ({pick}, what kt stored before; a BOHB_HINT_FORMAT hint keeps pick, so an older kt
 *     still replays it this way), and format 2 (format 3's fields, but its check did not bind the
 *     results, so its state is not trusted): the copy draws the same candidates, so its Rng stream stays the
 *     same, skips their KDE scoring, and keeps the pick's candidate only if it decodes to the
 *     stored configuration (its vector is then the asker's: the canonical vector of that
 *     candidate).
 *   - Anything else (no hint, an unknown format, a field of the wrong type, a failed check, a pick
 *     that does not reproduce the configuration): the ask is re-scored in full from the state
 *     before it, as the asker made it. A bad hint costs time, never exactness; the runner's replay
 *     check (same id, budget and configuration) still catches a history this optimiser would not
 *     have made.
 *
 * Departures from hpbandster, each stated where it is made: densities are compared in log space
 * (no underflow in 16-D; hpbandster clips both densities at 1e-32); the categorical lambda is
 * capped at (c - 1) / c; a failed trial is never promoted (hpbandster ranks it last as +inf but
 * can promote it when too few succeed); by default continuous bandwidths are floored with
 * Optuna's magic clip (KT_BOHB_MAGIC_CLIP below), and simplex candidates may be projected onto the
 * simplex's faces (KT_BOHB_SIMPLEX_SAMPLING below), and single-fidelity objectives draw fewer
 * random configurations with narrower candidates (KT_SINGLE_FIDELITY_DEFAULTS); `reference: true`
 * turns all three off.
 */
import type {Config, ParamSpace} from '../space/index.js'
import {Rng, type RngState} from '../util/rng.js'
import {projectFlooredSimplex} from '../util/simplex.js'
import {InputError} from '../util/errors.js'
import {Encoding} from './encoding.js'
import {bracketAt, checkFidelity, type Bracket} from './hyperband.js'
import {Kde, truncatedNormal01} from './kde.js'
import {rankOrder} from './ranking.js'
import type {AskHint, Fidelity, Optimizer, Trial, TrialResult} from './types.js'

/** hpbandster BOHB defaults (config_generators/bohb.py), as in Falkner et al. 2018, section 4. */
export const BOHB_DEFAULTS = {
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
export const KT_BOHB_MAGIC_CLIP = true

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
export type SimplexSampling = 'project' | 'project-near' | 'reject'
export const KT_BOHB_SIMPLEX_SAMPLING: SimplexSampling = 'project-near'

/**
 * kt's defaults when the objective has a single fidelity (no Hyperband rungs below b_max). BOHB's
 * third of random configurations guards the model against misleading cheap budgets; with one
 * fidelity there are none, and every random configuration costs a full evaluation (Optuna's TPE
 * draws at random only its first trials). Chosen on seeds 10-39 and confirmed on the contract's
 * seeds 0-9 (`kt bench optimizers --function branin,hartmann6,simplex --seeds 0-9`, median regret
 * at 200 evaluations): branin 0.00229 -> 0.00144, hartmann6 0.270 -> 0.105, simplex 1.25e-4 ->
 * 1.10e-5. `reference: true` keeps hpbandster's values.
 */
export const KT_SINGLE_FIDELITY_DEFAULTS = {randomFraction: 0.1, bandwidthFactor: 2} as const

/** Attempts at a feasible simplex group around one good point before keeping that point's own. */
const SIMPLEX_REJECTION_TRIES = 100

/** The budget of single-fidelity objectives. */
export const SINGLE_FIDELITY: Fidelity = {min: 1, max: 1, eta: 3}

/**
 * The format of a model-based ask's replay hint that carries the generator's state (field `v`;
 * see "Replay hints" at the top of this file). A replica adopts that state without drawing, so
 * the number names the draws as well as the fields: bump it whenever what an ask draws changes
 * (candidate sampling, their number or order, the random-fraction draw). A hint of any other
 * format, or none, is not trusted for the state (test/search/bohb-golden.test.ts pins the
 * hints of this format and fails, asking for the bump, when they change).
 */
export const BOHB_HINT_FORMAT = 3

/**
 * Format 2 (kt of 2026-12-02 before 04:30 UTC): the same fields, but its check did not bind the
 * results the copy had been told, so a store whose results were altered would still replay every
 * hint. Such hints are replayed as format 1 (drawing the candidates from the copy's own KDEs),
 * which does see the results: slower than format 3, as exact.
 */
const UNBOUND_STATE_HINT_FORMAT = 2

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
}

interface Observation {
  readonly vector: Float64Array
  readonly loss: number
  readonly values?: readonly number[]
}

interface ConfigRecord {
  readonly configId: string
  readonly vector: Float64Array
  readonly modelBased: boolean
  /** Last trial of this configuration (for continuation). */
  lastTrial?: {trialId: number; budget: number}
  /** Result at the current rung. */
  result?: TrialResult
}

/** One running successive-halving bracket. */
class BracketRun {
  rung = 0
  readonly configs: ConfigRecord[] = []
  /** Config indices still to ask at the current rung. */
  queue: number[] = []
  /** Config indices running at the current rung. */
  readonly running = new Set<number>()
  /** Config indices that ran at the current rung. */
  ranAtRung: number[] = []
  done = false

  constructor(readonly plan: Bracket) {}

  get budget(): number {
    return this.plan.budgets[this.rung]
  }

  needsNewConfig(): boolean {
    return this.rung === 0 && this.configs.length < this.plan.counts[0]
  }

  rungFinished(): boolean {
    return !this.needsNewConfig() && this.queue.length === 0 && this.running.size === 0
  }
}

export class BohbOptimizer implements Optimizer {
  readonly name = 'bohb'
  readonly encoding: Encoding
  readonly fidelity: Fidelity
  private readonly rng: Rng
  private readonly options: Required<Omit<BohbOptions, 'fidelity' | 'maxIterations'>> & {maxIterations: number}
  private readonly observations = new Map<number, Observation[]>()
  private readonly models = new Map<number, {good: Kde; bad: Kde}>()
  /**
   * Budgets whose good (bad) KDE has not been refitted to its latest observations. A fit depends
   * only on the budget's observations, so fitting when a model is next drawn from (and the bad one
   * only when candidates are scored) gives the same models as refitting at every result, as
   * hpbandster does, at a fraction of the cost: most results arrive between two draws, and a
   * replica replaying an ask from its hint never scores.
   */
  private readonly staleGood = new Set<number>()
  private readonly staleBad = new Set<number>()
  private readonly brackets: BracketRun[] = []
  private readonly trials = new Map<number, {bracket: BracketRun; config: number}>()
  private nextTrialId = 0
  /**
   * A running, order-sensitive digest of every tell (trial id, the asks before it, status, loss and
   * objective values, every bit), O(1) per tell: what a state hint's check binds the results to.
   * Results draw nothing from the generator, so without it a copy told other results would still
   * adopt the hints' states (and reproduce every stored trial) where re-scoring would not.
   */
  private readonly told = new Hash53(0)
  /** The last ask's replay hint (a model-based pick), undefined otherwise. */
  private lastHint: AskHint | undefined
  /**
   * Set while replayAsk runs: the stored configuration and what the hint offers, a pick to draw up
   * to (format 1) or the generator's state after the ask (BOHB_HINT_FORMAT), or nothing (re-score).
   */
  private replaying: {readonly config: Config; readonly pick?: number; readonly state?: StateHint} | undefined
  /**
   * Replayed model-based asks: restored from their hint's state without drawing, drawn up to the
   * hint's pick without scoring (format 1), or re-scored in full (a hint that was missing in
   * form, of an unknown format, or did not reproduce its configuration).
   */
  readonly replayCounts = {restored: 0, drawn: 0, rejected: 0}
  /** What a state hint's check covers besides the ask: the format, space, fidelity and options (hintCheck). */
  private readonly fingerprint: number
  /** Scratch vectors of the candidate search (no allocation per candidate). */
  private readonly candidateBuffer: Float64Array
  private readonly bestBuffer: Float64Array
  private readonly datumBuffer: Float64Array

  constructor(space: ParamSpace, options: BohbOptions) {
    this.encoding = new Encoding(space)
    this.candidateBuffer = new Float64Array(this.encoding.size)
    this.bestBuffer = new Float64Array(this.encoding.size)
    this.datumBuffer = new Float64Array(this.encoding.size)
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
      minPointsInModel: options.minPointsInModel ?? d + 1,
      magicClip: options.magicClip ?? (options.reference ? false : KT_BOHB_MAGIC_CLIP),
      reference: options.reference ?? false,
      simplexSampling: options.simplexSampling ?? (options.reference ? 'reject' : KT_BOHB_SIMPLEX_SAMPLING),
      priorWeight: options.priorWeight ?? 0,
      maxIterations: options.maxIterations ?? Infinity,
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
    this.fingerprint = hashText(
      `${BOHB_HINT_FORMAT} ${params} ${JSON.stringify(this.fidelity)} ${JSON.stringify(this.options)}`,
    )
  }

  ask(): Trial | 'wait' | 'done' {
    this.lastHint = undefined
    for (const bracket of this.brackets) {
      if (bracket.done) continue
      const trial = this.nextInBracket(bracket)
      if (trial) return trial
    }
    if (this.brackets.length < this.options.maxIterations) {
      const bracket = new BracketRun(bracketAt(this.fidelity, this.brackets.length))
      this.brackets.push(bracket)
      return this.nextInBracket(bracket) ?? 'wait'
    }
    return this.brackets.every((b) => b.done) ? 'done' : 'wait'
  }

  tell(trialId: number, result: TrialResult): void {
    const entry = this.trials.get(trialId)
    if (!entry) throw new RangeError(`bohb: trial ${trialId} was never asked`)
    this.trials.delete(trialId)
    const {bracket, config} = entry
    const record = bracket.configs[config]
    if (!bracket.running.delete(config)) throw new RangeError(`bohb: trial ${trialId} told twice`)
    record.result = result
    this.noteTell(trialId, result)
    bracket.ranAtRung.push(config)
    this.observe(bracket.budget, record.vector, result)
    if (bracket.rungFinished()) this.advance(bracket)
  }

  askHint(): AskHint | undefined {
    return this.lastHint
  }

  /** Folds one tell into the digest of results (`told`), as observe() would read it and every bit of it. */
  private noteTell(trialId: number, result: TrialResult): void {
    const h = this.told
    h.word(trialId)
    h.word(this.nextTrialId)
    if (result.status !== 'ok') {
      h.word(0)
      return
    }
    h.word(1)
    if (result.loss === undefined) h.word(0)
    else {
      h.word(1)
      h.double(result.loss)
    }
    if (result.values === undefined) h.word(-1)
    else {
      h.word(result.values.length)
      for (const v of result.values) h.double(v)
    }
  }

  replayAsk(hint: unknown, config: Config): Trial | 'wait' | 'done' {
    this.replaying = this.readHint(hint, config)
    if (!this.replaying) this.replayCounts.rejected++
    try {
      return this.ask()
    } finally {
      this.replaying = undefined
    }
  }

  /**
   * What replayAsk may use of a stored hint: a format 1 hint ({pick} alone, as every kt before
   * BOHB_HINT_FORMAT stored) its pick; a BOHB_HINT_FORMAT hint whose fields all have their types
   * its state (checked against the ask when it is replayed); anything else nothing.
   */
  private readHint(hint: unknown, config: Config): {config: Config; pick?: number; state?: StateHint} | undefined {
    if (typeof hint !== 'object' || hint === null) return undefined
    const h = hint as Record<string, unknown>
    const pick = h.pick
    if (!(typeof pick === 'number' && Number.isInteger(pick) && pick >= 0 && pick < this.options.numSamples))
      return undefined
    // format 1, and format 2 whose check does not bind the results: replayed by drawing
    if (h.v === undefined || h.v === UNBOUND_STATE_HINT_FORMAT) return {config, pick}
    if (h.v !== BOHB_HINT_FORMAT) return undefined
    const word = (x: unknown): x is number => typeof x === 'number' && (x | 0) === x
    const {s0, s1, s2, s3, n, h: check} = h
    if (
      !word(s0) ||
      !word(s1) ||
      !word(s2) ||
      !word(s3) ||
      !(n === undefined || (typeof n === 'number' && Number.isFinite(n)))
    )
      return undefined
    if (!(typeof check === 'number' && Number.isSafeInteger(check) && check >= 0)) return undefined
    let coordinates: Array<[number, number]> | undefined
    for (const key in h) {
      if (HINT_FIELDS.has(key)) continue
      const j = COORDINATE_FIELD.test(key) ? Number(key.slice(1)) : -1
      const x = h[key]
      if (!(j >= 0 && j < this.encoding.size && typeof x === 'number' && Number.isFinite(x))) return undefined
      ;(coordinates ??= []).push([j, x])
    }
    return {config, state: {pick, after: {s0, s1, s2, s3, spareNormal: n}, check, coordinates, hint: hint as AskHint}}
  }

  /** Budgets that currently have a model, for reports and tests. */
  modelBudgets(): number[] {
    return [...this.models.keys()].sort((a, b) => a - b)
  }

  private nextInBracket(bracket: BracketRun): Trial | undefined {
    let index: number
    if (bracket.needsNewConfig()) {
      const {vector, modelBased} = this.sampleVector()
      index = bracket.configs.length
      bracket.configs.push({configId: `${bracket.plan.iteration}.${index}`, vector, modelBased})
    } else if (bracket.queue.length > 0) {
      index = bracket.queue.shift()!
    } else {
      return undefined
    }
    const record = bracket.configs[index]
    bracket.running.add(index)
    const id = this.nextTrialId++
    this.trials.set(id, {bracket, config: index})
    const trial: Trial = {
      id,
      configId: record.configId,
      config: this.encoding.decode(record.vector),
      budget: bracket.budget,
      continues: record.lastTrial ? {...record.lastTrial} : undefined,
      info: {
        iteration: bracket.plan.iteration,
        bracket: bracket.plan.s,
        rung: bracket.rung,
        model_based: record.modelBased,
      },
    }
    record.lastTrial = {trialId: id, budget: bracket.budget}
    return trial
  }

  /** Successive halving: promote the best counts[rung + 1] successful configurations. */
  private advance(bracket: BracketRun): void {
    const next = bracket.rung + 1
    if (next >= bracket.plan.counts.length) {
      bracket.done = true
      return
    }
    const ran = bracket.ranAtRung.filter((i) => bracket.configs[i].result?.status === 'ok')
    const order = rankOrder(
      ran.map((i) => ({loss: bracket.configs[i].result!.loss!, values: bracket.configs[i].result!.values})),
    )
    bracket.queue = order
      .slice(0, bracket.plan.counts[next])
      .map((k) => ran[k])
      .sort((a, b) => a - b)
    bracket.ranAtRung = []
    bracket.rung = next
    if (bracket.queue.length === 0) bracket.done = true
  }

  /** hpbandster's new_result: record the observation and refit the KDE pair of its budget. */
  private observe(budget: number, vector: Float64Array, result: TrialResult): void {
    // hpbandster skips budgets below the largest one that already has a model.
    let largestModel = -Infinity
    for (const b of this.models.keys()) largestModel = Math.max(largestModel, b)
    if (largestModel > budget) return
    const loss =
      result.status === 'ok' && result.loss !== undefined && Number.isFinite(result.loss) ? result.loss : Infinity
    const list = this.observations.get(budget) ?? []
    this.observations.set(budget, list)
    list.push({vector, loss, values: result.status === 'ok' ? result.values : undefined})
    this.fitModel(budget, list)
  }

  /** Marks the budget's KDE pair for refitting, creating it once its observations can support one. */
  private fitModel(budget: number, list: readonly Observation[]): void {
    const {minPointsInModel, topNPercent, minBandwidth} = this.options
    const n = list.length
    if (n < minPointsInModel) return
    const d = this.encoding.size
    const split = splitSizes(n, topNPercent, minPointsInModel)
    // Each side needs more points than dimensions before its KDE is used.
    if (split.good <= d || split.bad <= d) return
    if (!this.models.has(budget)) {
      const kdeOptions = {magicClip: this.options.magicClip, priorWeight: this.options.priorWeight}
      this.models.set(budget, {
        good: new Kde(this.encoding.vartypes, minBandwidth, kdeOptions),
        bad: new Kde(this.encoding.vartypes, minBandwidth, kdeOptions),
      })
    }
    this.staleGood.add(budget)
    this.staleBad.add(budget)
  }

  /** The budget's KDE pair fitted to every observation at that budget (the bad one only if `bad`). */
  private fitted(budget: number, bad: boolean): {good: Kde; bad: Kde} {
    const model = this.models.get(budget)!
    const refitGood = this.staleGood.has(budget)
    const refitBad = bad && this.staleBad.has(budget)
    if (refitGood || refitBad) {
      const list = this.observations.get(budget)!
      const split = goodBadSplit(list, this.options.topNPercent, this.options.minPointsInModel)
      const rows = (ids: number[]): Float64Array[] => ids.map((i) => list[i].vector)
      if (refitGood) {
        model.good.fit(rows(split.good))
        this.staleGood.delete(budget)
      }
      if (refitBad) {
        model.bad.fit(rows(split.bad))
        this.staleBad.delete(budget)
      }
    }
    return model
  }

  /** hpbandster's get_config: random with probability random_fraction or without a model. */
  private sampleVector(): {vector: Float64Array; modelBased: boolean} {
    if (this.models.size === 0 || this.rng.next() < this.options.randomFraction) {
      return {vector: this.canonical(this.encoding.sampleUniform(this.rng)), modelBased: false}
    }
    const replay = this.replaying
    // the generator's state before the candidates: what a state hint's check binds the ask to
    const start = this.rng.snapshot()
    if (replay?.state) {
      // O(1) in the candidates: no KDE fit, no draw; the configuration gives the vector
      const vector = this.restoreFromHint(replay.state, replay.config, start)
      if (vector) {
        this.replayCounts.restored++
        this.lastHint = replay.state.hint
        return {vector, modelBased: true}
      }
      this.replayCounts.rejected++
    }
    let budget = -Infinity
    for (const b of this.models.keys()) budget = Math.max(budget, b)
    const {good} = this.fitted(budget, false)
    const candidate = this.candidateBuffer
    const bestVector = this.bestBuffer
    const datum = this.datumBuffer
    if (replay?.pick !== undefined) {
      // the same draws as the scoring loop below, without the scoring
      for (let i = 0; i < this.options.numSamples; i++) {
        this.sampleAround(good.copyRow(this.rng.int(good.n), datum), good.bw, candidate)
        if (i === replay.pick) bestVector.set(candidate)
      }
      const vector = this.canonical(bestVector)
      if (sameConfig(this.encoding.decode(vector), replay.config)) {
        this.replayCounts.drawn++
        this.lastHint = {pick: replay.pick}
        return {vector, modelBased: true}
      }
      this.replayCounts.rejected++
      this.rng.restore(start)
    }
    const {bad} = this.fitted(budget, true)
    let best = Infinity
    let pick = 0
    for (let i = 0; i < this.options.numSamples; i++) {
      this.sampleAround(good.copyRow(this.rng.int(good.n), datum), good.bw, candidate)
      // log of hpbandster's ratio bad(x) / good(x); smaller is better. After the first candidate
      // the bad density's scoring stops once it proves the candidate cannot beat the best
      // (Kde.logPdfUnlessAtLeast), which leaves the pick, and every value kept, as they were.
      const logGood = good.logPdf(candidate)
      const value = (i === 0 ? bad.logPdf(candidate) : bad.logPdfUnlessAtLeast(candidate, logGood, best)) - logGood
      if (value < best || i === 0) {
        best = value
        pick = i
        bestVector.set(candidate)
      }
    }
    const vector = this.canonical(bestVector)
    this.lastHint = this.stateHint(pick, start, vector)
    return {vector, modelBased: true}
  }

  /**
   * The hint of a model-based ask that drew its candidates from `before` and keeps `vector`: the
   * generator's state now and a check binding it to the ask (hintCheck). A vector that its own
   * configuration does not encode back to bit for bit gets a format 1 hint (the pick alone): a
   * replica could not rebuild it from the stored configuration.
   */
  private stateHint(pick: number, before: RngState, vector: Float64Array): AskHint {
    const after = this.rng.snapshot()
    const hint: Record<string, number> = {
      pick,
      v: BOHB_HINT_FORMAT,
      s0: after.s0,
      s1: after.s1,
      s2: after.s2,
      s3: after.s3,
    }
    if (after.spareNormal !== undefined) hint.n = after.spareNormal
    // Coordinates the configuration does not encode back to exactly (a simplex group's, now and
    // then) travel in the hint; a -0 would not survive JSON, so its ask keeps the pick alone.
    const again = this.encoding.encode(this.encoding.decode(vector))
    for (let j = 0; j < vector.length; j++) {
      if (Object.is(again[j], vector[j])) continue
      if (Object.is(vector[j], -0)) return {pick}
      hint[`x${j}`] = vector[j]
    }
    hint.h = this.hintCheck(this.nextTrialId, pick, before, after, vector)
    return hint
  }

  /**
   * A replica's side of a state hint: the stored configuration's vector (with the coordinates the
   * hint carries), with the generator set to the hint's state, if the hint's check holds for this
   * replica's own state before the ask, its own options and that vector; undefined (nothing
   * changed) otherwise.
   */
  private restoreFromHint(state: StateHint, config: Config, before: RngState): Float64Array | undefined {
    let vector: Float64Array
    try {
      vector = this.encoding.encode(config, 'replayed configuration', true)
    } catch {
      return undefined
    }
    if (state.coordinates) for (const [j, x] of state.coordinates) vector[j] = x
    if (this.hintCheck(this.nextTrialId, state.pick, before, state.after, vector) !== state.check) return undefined
    this.rng.restore(state.after)
    return vector
  }

  /**
   * 53 bits binding a state hint to its ask: the hint's format, space, fidelity and options
   * (fingerprint), the trial id, the digest of every result told so far (told), the generator's
   * state before and after the candidates, the pick and every bit of the kept vector. A replica
   * adopts the state only when its own values give the same check, so a hint of another row,
   * study, seed, option set or result history, or damaged in any field, is not taken (a chance of
   * 2^-53 for a random change).
   */
  private hintCheck(trialId: number, pick: number, before: RngState, after: RngState, vector: Float64Array): number {
    const h = new Hash53(this.fingerprint)
    h.word(trialId)
    const told = this.told.digest()
    h.word(told >>> 0)
    h.word(Math.floor(told / 4294967296))
    h.word(pick)
    for (const s of [before, after]) {
      h.word(s.s0)
      h.word(s.s1)
      h.word(s.s2)
      h.word(s.s3)
      if (s.spareNormal === undefined) h.word(0)
      else {
        h.word(1)
        h.double(s.spareNormal)
      }
    }
    for (let j = 0; j < vector.length; j++) h.double(vector[j])
    return h.digest()
  }

  /** One candidate drawn from the good KDE's kernel centred on a good point, written into `vector`. */
  private sampleAround(datum: Float64Array, bandwidths: Float64Array, vector: Float64Array): void {
    const {bandwidthFactor, minBandwidth} = this.options
    const dims = this.encoding.dims
    for (let j = 0; j < dims.length; j++) {
      const dim = dims[j]
      const bw = Math.max(bandwidths[j], minBandwidth)
      if (dim.kind === 'categorical') {
        vector[j] = this.rng.next() < 1 - bw ? datum[j] : this.rng.int(dim.vartype)
      } else if (dim.kind === 'simplex') {
        // A group's coordinates are contiguous: draw them together at the group's first one.
        const block = this.encoding.simplexBlocks[dim.group!]
        if (block.dims[0] === j) this.sampleSimplexGroup(datum, bandwidths, dim.group!, vector)
      } else {
        vector[j] = truncatedNormal01(this.rng, datum[j], bandwidthFactor * bw)
      }
    }
  }

  /** A simplex group's free coordinates around a good point, by projection or by rejection (SimplexSampling). */
  private sampleSimplexGroup(datum: Float64Array, bandwidths: Float64Array, group: number, out: Float64Array): void {
    const {bandwidthFactor, minBandwidth} = this.options
    const dims = this.encoding.simplexBlocks[group].dims
    if (this.options.simplexSampling !== 'reject') {
      // The free coordinates plus the slack 1 - sum lie on the unit simplex: perturb the free
      // ones, let the slack absorb the change, and project back, so faces get positive mass.
      const point = new Array<number>(dims.length + 1)
      for (let attempt = 0; attempt < SIMPLEX_REJECTION_TRIES; attempt++) {
        let sum = 0
        let width = 0
        for (let i = 0; i < dims.length; i++) {
          const j = dims[i]
          const bw = Math.max(bandwidths[j], minBandwidth)
          point[i] = this.rng.normal(datum[j], bandwidthFactor * bw)
          sum += point[i]
          width += bw * bw
        }
        point[dims.length] = 1 - sum
        const projected = projectFlooredSimplex(point, 0)
        let moved = 0
        for (let i = 0; i <= dims.length; i++) moved += (projected[i] - point[i]) ** 2
        // 'project-near': within one mean kernel width (squared distances compared).
        if (this.options.simplexSampling === 'project' || moved <= width / dims.length) {
          for (let i = 0; i < dims.length; i++) out[dims[i]] = projected[i]
          return
        }
      }
      for (const j of dims) out[j] = datum[j]
      return
    }
    for (let attempt = 0; attempt < SIMPLEX_REJECTION_TRIES; attempt++) {
      let sum = 0
      for (const j of dims) {
        out[j] = truncatedNormal01(this.rng, datum[j], bandwidthFactor * Math.max(bandwidths[j], minBandwidth))
        sum += out[j]
      }
      if (sum <= 1) return
    }
    for (const j of dims) out[j] = datum[j]
  }

  /** The vector of the configuration a vector decodes to (ints snapped), as hpbandster stores it. */
  private canonical(vector: Float64Array): Float64Array {
    return this.encoding.canonical(vector)
  }
}

/** A BOHB_HINT_FORMAT hint as replayAsk read it. */
interface StateHint {
  readonly pick: number
  readonly after: RngState
  readonly check: number
  /** Coordinates of the kept vector that its configuration does not encode back to (x<j> fields). */
  readonly coordinates?: ReadonlyArray<readonly [number, number]>
  readonly hint?: AskHint
}

/** A state hint's fields besides the coordinates (x<j>); any other field makes it unknown. */
const HINT_FIELDS = new Set(['pick', 'v', 's0', 's1', 's2', 's3', 'n', 'h'])
const COORDINATE_FIELD = /^x(0|[1-9][0-9]{0,5})$/

const doubleBits = new Float64Array(1)
const doubleWords = new Int32Array(doubleBits.buffer)

/**
 * Two 32-bit lanes fed int32 words, folded into 53 bits by cyrb53's finaliser (bryc, public
 * domain). cyrb53's own update (h = imul(h ^ w, k)) moves a difference only towards the high bits,
 * so for whole 32-bit words an even number of sign flips (say, negated losses) cancelled out; each
 * lane here mixes every word into all bits (lane 1: MurmurHash3's x86_32 block step, Appleby,
 * public domain; lane 2: multiply, then xorshift), and every step is a bijection of the lane, so
 * two histories that differ in one word always differ in the state.
 */
class Hash53 {
  private h1: number
  private h2: number

  constructor(seed: number) {
    this.h1 = 0xdeadbeef ^ (seed | 0)
    this.h2 = 0x41c6ce57 ^ ((seed / 4294967296) | 0)
  }

  word(w: number): void {
    let k = Math.imul(w, 0xcc9e2d51)
    k = Math.imul((k << 15) | (k >>> 17), 0x1b873593)
    const h1 = this.h1 ^ k
    this.h1 = (Math.imul((h1 << 13) | (h1 >>> 19), 5) + 0xe6546b64) | 0
    const h2 = Math.imul(this.h2 ^ w, 1597334677)
    this.h2 = h2 ^ (h2 >>> 15)
  }

  /** Every bit of a double (so -0 and 0 differ). */
  double(x: number): void {
    doubleBits[0] = x
    this.word(doubleWords[0])
    this.word(doubleWords[1])
  }

  digest(): number {
    let h1 = this.h1
    let h2 = this.h2
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
    return 4294967296 * (2097151 & h2) + (h1 >>> 0)
  }
}

/** A string's Hash53 digest (one word per UTF-16 code unit). */
function hashText(text: string): number {
  const h = new Hash53(0)
  for (let i = 0; i < text.length; i++) h.word(text.charCodeAt(i))
  return h.digest()
}

/** Whether `stored` holds every value of `decoded` (it may hold more: parameters fixed outside the search). */
function sameConfig(decoded: Config, stored: Config): boolean {
  for (const k in decoded) if (decoded[k] !== stored[k]) return false
  return true
}

/** The sizes of goodBadSplit's two sides for n observations (they depend on n alone). */
function splitSizes(n: number, topNPercent: number, minPoints: number): {good: number; bad: number} {
  const nGood = Math.max(minPoints, Math.floor((topNPercent * n) / 100))
  const nBad = Math.max(minPoints, Math.floor(((100 - topNPercent) * n) / 100))
  return {good: Math.min(nGood, n), bad: Math.max(0, Math.min(nBad, n - nGood))}
}

/**
 * hpbandster's split: sort by loss; the first max(min_points, floor(top_n% * n)) are good, the
 * next max(min_points, floor((100 - top_n)% * n)) bad.
 */
export function goodBadSplit(
  list: readonly {loss: number; values?: readonly number[]}[],
  topNPercent: number,
  minPoints: number,
): {good: number[]; bad: number[]} {
  const n = list.length
  const order = rankOrder(list)
  const nGood = Math.max(minPoints, Math.floor((topNPercent * n) / 100))
  const nBad = Math.max(minPoints, Math.floor(((100 - topNPercent) * n) / 100))
  return {good: order.slice(0, nGood), bad: order.slice(nGood, nGood + nBad)}
}
