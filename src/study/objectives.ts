/**
 * Objectives by a serializable description, so that a worker thread or a resumed process can
 * rebuild exactly the objective a study was created with. The study layer is where optimisers
 * meet targets: the factories themselves live below it (src/adapters: engine files, kt's importance
 * engine; src/eval: kt's retrieval engine on a benchmark) and search sees only the contract.
 *
 * - a benchmark function by name (branin, hartmann6, counting_ones, simplex, simplex_mf);
 * - `engine`: an engine file (`kt_engine: 1`; options: file, an absolute path), src/adapters;
 * - `retrieval`: kt's retrieval engine on a dataset, quality vs P99 latency
 *   (src/eval/retrieval-objective.ts; options: data, metric, queryType, tierSeed);
 * - `importance`: kt's importance weights on an importance dataset (src/adapters/kt-importance.ts);
 * - `module`: an ES module exporting `createObjective(options)`. Not offered by any command (the
 *   former `kt search --objective module` is replaced by engine files); kept for tests that need
 *   an in-process objective which misbehaves on purpose (spins, throws).
 * - `delayMs` adds a sleep to every evaluation (demos, and the kill/resume test), `evalLog`
 *   appends one line per finished evaluation to a file (the exactly-once test).
 */
import {appendFileSync} from 'node:fs'
import {isAbsolute, resolve} from 'node:path'
import {pathToFileURL} from 'node:url'
import {InputError} from '../util/errors.js'
import {BENCHMARK_FUNCTIONS, benchmarkObjective, isBenchmarkName} from '../search/benchmarks/index.js'
import type {Objective} from '../search/types.js'

export interface ObjectiveSpec {
  /** A benchmark function name, or 'module'. */
  readonly name: string
  /** For 'module': path of an ES module exporting the factory. */
  readonly module?: string
  /** For 'module': name of the factory export (default createObjective). */
  readonly export?: string
  /** Passed to the module's factory. */
  readonly options?: Record<string, unknown>
  /** Milliseconds to sleep before each evaluation. */
  readonly delayMs?: number
  /** File to append `trialId budget pid` to after each evaluation. */
  readonly evalLog?: string
}

const DEFAULT_FACTORY_EXPORT = 'createObjective'

/** Names `kt search --objective` accepts. */
export const OBJECTIVE_NAMES = [...BENCHMARK_FUNCTIONS, 'retrieval'] as const

export async function createObjective(spec: ObjectiveSpec, where = '--objective'): Promise<Objective> {
  let base: Objective
  if (isBenchmarkName(spec.name)) base = benchmarkObjective(spec.name, where)
  else if (spec.name === 'engine')
    base = await (await import('../adapters/objective.js')).createEngineObjective(spec.options ?? {})
  else if (spec.name === 'retrieval')
    base = await (await import('../eval/retrieval-objective.js')).createObjective(spec.options ?? {})
  else if (spec.name === 'importance')
    base = (await import('../adapters/kt-importance.js')).createObjective(spec.options as never)
  else if (spec.name === 'module') base = await loadModuleObjective(spec, where)
  else throw new InputError(where, `one of ${OBJECTIVE_NAMES.join(', ')}`, spec.name)
  return withInstrumentation(base, spec)
}

async function loadModuleObjective(spec: ObjectiveSpec, where: string): Promise<Objective> {
  if (!spec.module) throw new InputError(`${where} module`, 'a module path (--objective-module)', 'nothing')
  const path = isAbsolute(spec.module) ? spec.module : resolve(spec.module)
  let mod: Record<string, unknown>
  try {
    mod = (await import(pathToFileURL(path).href)) as Record<string, unknown>
  } catch (error) {
    throw new InputError(`${where} module ${path}`, 'an importable ES module', (error as Error).message.split('\n')[0])
  }
  const name = spec.export ?? DEFAULT_FACTORY_EXPORT
  const factory = mod[name]
  if (typeof factory !== 'function')
    throw new InputError(`${where} module ${path}`, `an exported function ${name}`, typeof factory)
  const objective = (await (factory as (o: unknown) => Objective | Promise<Objective>)(spec.options ?? {})) as Objective
  if (!objective || typeof objective.evaluate !== 'function' || !objective.space)
    throw new InputError(
      `${where} module ${path}`,
      `${name}() returning an Objective {space, evaluate}`,
      'something else',
    )
  return objective
}

function withInstrumentation(base: Objective, spec: ObjectiveSpec): Objective {
  if (!spec.delayMs && !spec.evalLog) return base
  return {
    ...base,
    trueLoss: base.trueLoss?.bind(base),
    close: base.close?.bind(base),
    async evaluate(config, budget, ctx) {
      if (spec.delayMs) await new Promise((r) => setTimeout(r, spec.delayMs))
      const result = await base.evaluate(config, budget, ctx)
      if (spec.evalLog) appendFileSync(spec.evalLog, `${ctx.trialId} ${budget} ${process.pid}\n`)
      return result
    },
  }
}
