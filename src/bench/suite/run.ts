/**
 * One run of the broader suite: an optimiser (kt's, or Optuna through its bridge) proposes, kt
 * evaluates, and every proposer is held to the same rules: total cost in b_max units with
 * continuation accounting (a configuration pays only for the budget beyond what it reached),
 * failed evaluations paying their budget, the hpbandster incumbent rule (incumbent.ts) over the
 * evaluations in order, and the noise-free regret of the incumbent at 10/25/50/100 b_max.
 */
import {spawn} from 'node:child_process'
import {createInterface} from 'node:readline'
import type {Config} from '../../space/index.js'
import {atBudget} from '../optimizers.js'
import {BENCH_FIDELITY} from '../../search/benchmarks/common.js'
import {incumbentTrace} from '../../search/incumbent.js'
import {createOptimizer, type OptimizerName, type OptimizerSettings} from '../../search/optimizers.js'
import {packageRoot} from '../../util/paths.js'
import {suiteFunction, suiteObjective} from './suite.js'
import {join} from 'node:path'

/** Checkpoints of the suite, in b_max units of consumed budget. */
export const SUITE_CHECKPOINTS = [10, 25, 50, 100] as const

/** One evaluation a proposer asks for. */
interface Proposal {
  readonly config: Config
  readonly budget: number
  readonly configId: string
}

/** Anything that proposes evaluations one at a time and is told each result (undefined: failed). */
export interface Proposer {
  next(): Promise<Proposal>
  tell(loss: number | undefined): Promise<void>
  close(): Promise<void>
}

export interface SuiteRun {
  readonly function: string
  readonly optimizer: string
  readonly seed: number
  /** Regret of the incumbent at each checkpoint (null: no incumbent yet). */
  readonly regret: readonly (number | null)[]
  readonly evaluations: number
  readonly failed: number
}

/** kt's optimiser behind the Proposer interface (evaluations one at a time, as the suite runs them). */
export function ktProposer(name: OptimizerName, fn: string, seed: number, settings: OptimizerSettings = {}): Proposer {
  const objective = suiteObjective(suiteFunction(fn))
  const optimizer = createOptimizer(name, objective.space, seed, objective.fidelity, settings)
  let pending = -1
  return {
    async next() {
      const trial = optimizer.ask()
      if (typeof trial === 'string') throw new Error(`suite: ${name} answered ${trial} with nothing running`)
      pending = trial.id
      return {config: trial.config, budget: trial.budget, configId: trial.configId}
    },
    async tell(loss) {
      optimizer.tell(pending, loss === undefined ? {status: 'failed'} : {status: 'ok', loss})
    },
    async close() {},
  }
}

/** The Optuna bridge (src/bench/peers/optuna_bridge.py). */
const OPTUNA_BRIDGE = join(packageRoot, 'src', 'bench', 'peers', 'optuna_bridge.py')
/** Debian's interpreter, the one python3-optuna is installed for. */
const PEER_PYTHON = '/usr/bin/python3'

/** Optuna 3.1 (sampler tpe, tpe_hb or random) through its bridge, one process per run. */
export function optunaProposer(sampler: string, fn: string, seed: number, failedAs: 'fail' | 'pruned'): Proposer {
  const f = suiteFunction(fn)
  const child = spawn(PEER_PYTHON, [OPTUNA_BRIDGE], {stdio: ['pipe', 'pipe', 'inherit']})
  const lines = createInterface({input: child.stdout!})[Symbol.asyncIterator]()
  const send = async (msg: unknown): Promise<Record<string, unknown>> => {
    child.stdin!.write(`${JSON.stringify(msg)}\n`)
    const {value, done} = await lines.next()
    if (done) throw new Error(`optuna bridge: ended early (${fn} ${sampler} seed ${seed})`)
    return JSON.parse(value as string) as Record<string, unknown>
  }
  const {min, max, eta} = BENCH_FIDELITY
  const budgets: number[] = []
  for (let b = min; b <= max; b *= eta) budgets.push(b)
  child.stdin!.write(
    `${JSON.stringify({params: f.space.params, sampler, seed, budgets, study_name: `${fn}-${sampler}-seed${seed}`, failed_as: failedAs})}\n`,
  )
  let current: {number: number; params: Config; rungs: number[]; at: number} | undefined
  return {
    async next() {
      if (!current) {
        const r = await send({op: 'ask'})
        current = {number: r.number as number, params: r.params as Config, rungs: r.rungs as number[], at: 0}
      }
      return {config: current.params, budget: current.rungs[current.at], configId: `o${current.number}`}
    },
    async tell(loss) {
      const r = await send({op: 'result', loss: loss ?? null})
      if (r.continue === true) current!.at++
      else current = undefined
    },
    async close() {
      child.stdin!.end(`${JSON.stringify({op: 'end'})}\n`)
      await new Promise((resolve) => child.once('close', resolve))
    },
  }
}

/** Runs a proposer on a suite function until `units` b_max of budget are consumed. */
export async function runSuite(
  fn: string,
  optimizer: string,
  proposer: Proposer,
  seed: number,
  units = SUITE_CHECKPOINTS[SUITE_CHECKPOINTS.length - 1],
): Promise<SuiteRun> {
  const f = suiteFunction(fn)
  const objective = suiteObjective(f)
  const bMax = BENCH_FIDELITY.max
  const evaluations: {budget: number; loss: number; status: 'ok' | 'failed'; config: Config}[] = []
  const cumulative: number[] = []
  const reached = new Map<string, number>()
  let used = 0
  let failed = 0
  try {
    while (used < units - 1e-9) {
      const p = await proposer.next()
      let loss: number | undefined
      try {
        const r = objective.evaluate(p.config, p.budget, {trialId: evaluations.length, configId: p.configId, seed})
        loss = (r as {loss: number}).loss
      } catch {
        loss = undefined
      }
      if (loss === undefined || !Number.isFinite(loss)) {
        loss = undefined
        failed++
      }
      const before = reached.get(p.configId) ?? 0
      used += Math.max(0, p.budget - before) / bMax
      reached.set(p.configId, Math.max(before, p.budget))
      evaluations.push({
        budget: p.budget,
        loss: loss ?? NaN,
        status: loss === undefined ? 'failed' : 'ok',
        config: p.config,
      })
      cumulative.push(used)
      await proposer.tell(loss)
    }
  } finally {
    await proposer.close()
  }
  const trace = incumbentTrace(evaluations)
  const curve = Array.from(trace, (i) => (i < 0 ? NaN : f.loss(evaluations[i].config, 1) - f.optimum))
  return {
    function: fn,
    optimizer,
    seed,
    regret: SUITE_CHECKPOINTS.map((c) => atBudget(curve, cumulative, c)),
    evaluations: evaluations.length,
    failed,
  }
}
