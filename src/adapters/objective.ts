/**
 * The objective of an engine file: one factory per `evaluate.kind`, each returning the Objective
 * contract (src/search/types.ts) that the optimisers and the study runner see. A new kind is one
 * entry in EVALUATORS.
 */
import type {Objective} from '../space/objective.js'
import {InputError} from '../util/errors.js'
import {commandObjective} from './command.js'
import {
  checkEngineFingerprint,
  engineFingerprint,
  loadEngineFile,
  type EngineFingerprint,
  type EngineSpec,
} from './file.js'
import {httpObjective} from './http.js'
import {serviceObjectiveOf} from './retrieval-service.js'

/**
 * Options beside the engine file: for a retrieval service, the conversations kt drives through it
 * (data, format, questions, columns) and a held-out split (split, part); see retrieval-service.ts.
 */
export type EngineObjectiveOptions = Record<string, unknown>

type Evaluator = (spec: EngineSpec, options: EngineObjectiveOptions) => Objective | Promise<Objective>

export const EVALUATORS: Record<EngineSpec['evaluate']['kind'], Evaluator> = {
  command: (spec) => commandObjective(spec, spec.evaluate as Extract<EngineSpec['evaluate'], {kind: 'command'}>),
  http: (spec) => httpObjective(spec, spec.evaluate as Extract<EngineSpec['evaluate'], {kind: 'http'}>),
  'retrieval-service': (spec, options) => {
    if (typeof options.data !== 'string')
      throw new InputError(
        `${spec.file}: evaluate.kind`,
        'conversations for kt to drive through a retrieval service (--data FILE: LoCoMo .json, .jsonl or .csv)',
        'no --data',
      )
    return serviceObjectiveOf(spec, options)
  },
}

export async function engineObjective(spec: EngineSpec, options: EngineObjectiveOptions = {}): Promise<Objective> {
  return EVALUATORS[spec.evaluate.kind](spec, options)
}

/**
 * Options of the study objective spec `{name: 'engine', options: {file, fingerprint?, data?, split?, part?}}`
 * (stored with the study). A stored fingerprint must match the file as it is now (resume, workers).
 */
export async function createEngineObjective(options: Record<string, unknown>): Promise<Objective> {
  if (typeof options.file !== 'string')
    throw new InputError('engine objective: file', 'the engine file path (--engine)', String(options.file))
  const spec = loadEngineFile(options.file)
  checkEngineFingerprint(spec, options.fingerprint)
  return engineObjective(spec, options)
}

/** The stored options of a new study of an engine file: its absolute path and its fingerprint. */
export function engineStudyOptions(spec: EngineSpec): {file: string; fingerprint: EngineFingerprint} {
  return {file: spec.file, fingerprint: engineFingerprint(spec)}
}
