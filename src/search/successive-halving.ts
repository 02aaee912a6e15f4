/**
 * Hyperband's iterations run as synchronous successive halving (hpbandster's
 * optimizers/iterations/successivehalving.py and the bracket loop of core/master.py): a rung starts
 * only when the previous rung has finished; the best 1/eta (by loss) are promoted; a failed trial
 * is never promoted (hpbandster ranks it last as +inf but can promote it when too few succeed).
 * Where configurations come from is the caller's (a config generator: BOHB's model, or uniform
 * draws for plain Hyperband); this file draws nothing.
 */
import type {Encoding} from './encoding.js'
import {bracketAt, type Bracket} from './hyperband.js'
import {rankOrder} from './ranking.js'
import type {Fidelity, Trial, TrialResult} from './types.js'

/** One configuration of a bracket. */
export interface ConfigRecord {
  readonly configId: string
  readonly vector: Float64Array
  readonly modelBased: boolean
  /** Last trial of this configuration (for continuation). */
  lastTrial?: {trialId: number; budget: number}
  /** Result at the current rung. */
  result?: TrialResult
}

/** One running successive-halving bracket. */
export class BracketRun {
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

  /** Successive halving: promote the best counts[rung + 1] successful configurations. */
  advance(): void {
    const next = this.rung + 1
    if (next >= this.plan.counts.length) {
      this.done = true
      return
    }
    const ran = this.ranAtRung.filter((i) => this.configs[i].result?.status === 'ok')
    const order = rankOrder(
      ran.map((i) => ({loss: this.configs[i].result!.loss!, values: this.configs[i].result!.values})),
    )
    this.queue = order
      .slice(0, this.plan.counts[next])
      .map((k) => ran[k])
      .sort((a, b) => a - b)
    this.ranAtRung = []
    this.rung = next
    if (this.queue.length === 0) this.done = true
  }
}

/** A new configuration for a bracket's first rung, as a config generator proposes it. */
export interface Proposal {
  readonly vector: Float64Array
  readonly modelBased: boolean
}

/**
 * Hyperband's loop over successive-halving brackets (hpbandster's Master): asks go to the oldest
 * bracket that has work, a new bracket opens when none has (up to maxIterations), trial ids are
 * sequential in ask order. `propose` is called exactly when a bracket needs a new configuration.
 */
export class HyperbandSchedule {
  private readonly brackets: BracketRun[] = []
  /** Hyperband iterations considered so far, skipped ones included (what chooses the next bracket's s). */
  private cycle = 0
  private readonly trials = new Map<number, {bracket: BracketRun; config: number}>()
  /** The id the next asked trial gets (also the number of asks so far). */
  nextTrialId = 0

  constructor(
    private readonly encoding: Encoding,
    private readonly fidelity: Fidelity,
    private readonly maxIterations: number,
    private readonly name: string,
    /** Whether a bracket may start at this budget (default: any); the largest budget always may. */
    private readonly startsAt: (budget: number) => boolean = () => true,
  ) {}

  ask(propose: () => Proposal): Trial | 'wait' | 'done' {
    for (const bracket of this.brackets) {
      if (bracket.done) continue
      const trial = this.nextInBracket(bracket, propose)
      if (trial) return trial
    }
    if (this.brackets.length < this.maxIterations) {
      let plan = bracketAt(this.fidelity, this.cycle++)
      while (plan.s > 0 && !this.startsAt(plan.budgets[0])) plan = bracketAt(this.fidelity, this.cycle++)
      const bracket = new BracketRun({...plan, iteration: this.brackets.length})
      this.brackets.push(bracket)
      return this.nextInBracket(bracket, propose) ?? 'wait'
    }
    return this.brackets.every((b) => b.done) ? 'done' : 'wait'
  }

  /**
   * Records a result; `observe` sees the budget and vector it was run at before the bracket
   * advances (so a model is updated before the promotions it does not influence).
   */
  tell(
    trialId: number,
    result: TrialResult,
    observe: (budget: number, vector: Float64Array, result: TrialResult, configId: string) => void,
  ): void {
    const entry = this.trials.get(trialId)
    if (!entry) throw new RangeError(`${this.name}: trial ${trialId} was never asked`)
    this.trials.delete(trialId)
    const {bracket, config} = entry
    const record = bracket.configs[config]
    if (!bracket.running.delete(config)) throw new RangeError(`${this.name}: trial ${trialId} told twice`)
    record.result = result
    bracket.ranAtRung.push(config)
    observe(bracket.budget, record.vector, result, record.configId)
    if (bracket.rungFinished()) bracket.advance()
  }

  private nextInBracket(bracket: BracketRun, propose: () => Proposal): Trial | undefined {
    let index: number
    if (bracket.needsNewConfig()) {
      const {vector, modelBased} = propose()
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
}
