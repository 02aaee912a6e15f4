/**
 * The objective of an engine file: one factory per `evaluate.kind`, each returning the Objective
 * contract (src/search/types.ts) that the optimisers and the study runner see. A new kind is one
 * entry in EVALUATORS.
 */
import type {Objective} from '../search/types.js'
import {InputError} from '../util/errors.js'
import {commandObjective} from './command.js'
import {loadEngineFile, type EngineSpec} from './file.js'
import {httpObjective} from './http.js'

type Evaluator = (spec: EngineSpec) => Objective | Promise<Objective>

export const EVALUATORS: Record<EngineSpec['evaluate']['kind'], Evaluator> = {
  command: (spec) => commandObjective(spec, spec.evaluate as Extract<EngineSpec['evaluate'], {kind: 'command'}>),
  http: (spec) => httpObjective(spec, spec.evaluate as Extract<EngineSpec['evaluate'], {kind: 'http'}>),
  'retrieval-service': (spec) => {
    throw new InputError(`${spec.file}: evaluate.kind`, 'command or http (the retrieval-service adapter is not in this build yet)', '"retrieval-service"')
  },
}

export async function engineObjective(spec: EngineSpec): Promise<Objective> {
  return EVALUATORS[spec.evaluate.kind](spec)
}

/** Options of the study objective spec `{name: 'engine', options: {file}}` (stored with the study). */
export async function createEngineObjective(options: Record<string, unknown>): Promise<Objective> {
  if (typeof options.file !== 'string') throw new InputError('engine objective: file', 'the engine file path (--engine)', String(options.file))
  return engineObjective(loadEngineFile(options.file))
}
