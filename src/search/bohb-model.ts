/**
 * BOHB's config generator (hpbandster's optimizers/config_generators/bohb.py): one KDE pair per
 * budget, built from every result at that budget once at least min_points_in_model results exist
 * and each side of the good/bad split has more points than dimensions (the best top_n_percent are
 * "good"). New configurations are drawn from the model of the largest budget that has one:
 * num_samples candidates around good points (truncated normal with bandwidth x bandwidth_factor,
 * categoricals kept with probability 1 - lambda), keeping the one with the smallest bad/good
 * density ratio. A random_fraction of configurations is drawn uniformly at random. Floored simplex
 * groups are drawn as SimplexSampling says. All randomness comes from the one seeded Rng given.
 */
import type {Rng} from '../util/rng.js'
import {projectFlooredSimplex} from '../util/simplex.js'
import type {Encoding} from './encoding.js'
import {Kde, truncatedNormal01} from './kde.js'
import {rankOrder} from './ranking.js'
import {sameConfig, type ReplayHints, type ReplayRequest} from './bohb-replay.js'
import type {AskHint, TrialResult} from './types.js'

/** How a simplex group's candidates are drawn around a good point (see KT_BOHB_SIMPLEX_SAMPLING in bohb.ts). */
export type SimplexSampling = 'project' | 'project-near' | 'reject'

/** Attempts at a feasible simplex group around one good point before keeping that point's own. */
const SIMPLEX_REJECTION_TRIES = 100

/** The generator's options, resolved (bohb.ts documents each). */
export interface BohbModelOptions {
  readonly topNPercent: number
  readonly numSamples: number
  readonly randomFraction: number
  readonly bandwidthFactor: number
  readonly minBandwidth: number
  readonly minPointsInModel: number
  readonly magicClip: boolean
  readonly simplexSampling: SimplexSampling
  readonly priorWeight: number
  /** Model once each side of the split has minPointsInModel points, not more points than dimensions (KT_BOHB_EARLY_MODEL in bohb.ts). */
  readonly earlyModel: boolean
}

interface Observation {
  readonly vector: Float64Array
  readonly loss: number
  readonly values?: readonly number[]
}

/** A proposed configuration and, for a model-based pick, its replay hint. */
export interface ModelProposal {
  readonly vector: Float64Array
  readonly modelBased: boolean
  readonly hint?: AskHint
}

export class BohbModel {
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
  /** Scratch vectors of the candidate search (no allocation per candidate). */
  private readonly candidateBuffer: Float64Array
  private readonly bestBuffer: Float64Array
  private readonly datumBuffer: Float64Array

  constructor(
    private readonly encoding: Encoding,
    private readonly rng: Rng,
    private readonly options: BohbModelOptions,
    /** Whether a budget's model may be drawn from (false: its low fidelity misranks, fidelity-check.ts). */
    private readonly usable: (budget: number) => boolean = () => true,
  ) {
    this.candidateBuffer = new Float64Array(encoding.size)
    this.bestBuffer = new Float64Array(encoding.size)
    this.datumBuffer = new Float64Array(encoding.size)
  }

  /** Budgets that currently have a model, for reports and tests. */
  modelBudgets(): number[] {
    return [...this.models.keys()].sort((a, b) => a - b)
  }

  /** hpbandster's new_result: record the observation and refit the KDE pair of its budget. */
  observe(budget: number, vector: Float64Array, result: TrialResult): void {
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

  /**
   * hpbandster's get_config: random with probability random_fraction or without a model. While a
   * stored ask is replayed (`replay`), its hint is used as bohb-replay.ts says; `hints`
   * makes and checks the hints, `trialId` is the id the ask's trial gets.
   */
  sample(replay: ReplayRequest | undefined, hints: ReplayHints, trialId: number): ModelProposal {
    const budget = this.modelBudget()
    if (budget === undefined || this.rng.next() < this.options.randomFraction) {
      return {vector: this.canonical(this.encoding.sampleUniform(this.rng)), modelBased: false}
    }
    // the generator's state before the candidates: what a state hint's check binds the ask to
    const start = this.rng.snapshot()
    if (replay?.state) {
      // O(1) in the candidates: no KDE fit, no draw; the configuration gives the vector
      const vector = hints.restore(this.rng, this.encoding, trialId, replay.state, replay.config, start)
      if (vector) {
        hints.replayCounts.restored++
        return {vector, modelBased: true, hint: replay.state.hint}
      }
      hints.replayCounts.rejected++
    }
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
        hints.replayCounts.drawn++
        return {vector, modelBased: true, hint: {pick: replay.pick}}
      }
      hints.replayCounts.rejected++
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
    return {vector, modelBased: true, hint: hints.stateHint(this.rng, this.encoding, trialId, pick, start, vector)}
  }

  /** The largest budget with a model that may be drawn from (hpbandster: the largest with a model). */
  private modelBudget(): number | undefined {
    let budget: number | undefined
    for (const b of this.models.keys()) if (this.usable(b) && (budget === undefined || b > budget)) budget = b
    return budget
  }

  /** Marks the budget's KDE pair for refitting, creating it once its observations can support one. */
  private fitModel(budget: number, list: readonly Observation[]): void {
    const {minPointsInModel, topNPercent, minBandwidth} = this.options
    const n = list.length
    if (n < minPointsInModel) return
    const d = this.encoding.size
    const split = splitSizes(n, topNPercent, minPointsInModel)
    // Each side needs more points than dimensions before its KDE is used (hpbandster), or
    // minPointsInModel (earlyModel: a product kernel needs no more points than dimensions).
    if (
      this.options.earlyModel
        ? split.good < minPointsInModel || split.bad < minPointsInModel
        : split.good <= d || split.bad <= d
    )
      return
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
