/**
 * kt compare's inputs: two run folders or kt eval --engine --json outputs, read as they are; or,
 * with an engine file and a data file, two profiles of that engine evaluated now on the same data.
 */
import {loadEngineFile} from '../adapters/file.js'
import {serviceSpecOf} from '../adapters/retrieval-service.js'
import {evaluateService, evaluationQuestions, loadEngineProfile} from '../eval/service-eval.js'
import {loadQuestionResults, type QuestionResults} from '../eval/question-results.js'
import {loadMemoryDataset} from '../data/conversations/index.js'
import {InputError} from '../util/errors.js'
import {compareRuns, type CompareOptions, type RunComparison} from './compare-runs.js'

export interface CompareRequest extends CompareOptions {
  readonly base: string
  readonly head: string
  /** With data: BASE and HEAD are profiles of this engine, evaluated now. */
  readonly engine?: string
  readonly data?: string
  readonly progress?: (line: string) => void
}

/** Reads (or evaluates) both sides and compares them. */
export async function compareFromFiles(request: CompareRequest): Promise<RunComparison> {
  if ((request.engine === undefined) !== (request.data === undefined))
    throw new InputError(request.engine === undefined ? '--data' : '--engine', 'both --engine and --data, or neither')
  const sides =
    request.engine === undefined
      ? [loadQuestionResults(request.base), loadQuestionResults(request.head)]
      : await evaluateBoth(request.engine, request.data!, [request.base, request.head], request.progress)
  return compareRuns({label: request.base, results: sides[0]}, {label: request.head, results: sides[1]}, request)
}

async function evaluateBoth(
  engineFile: string,
  data: string,
  profiles: readonly string[],
  progress: (line: string) => void = () => {},
): Promise<QuestionResults[]> {
  const engine = loadEngineFile(engineFile)
  if (engine.evaluate.kind !== 'retrieval-service')
    throw new InputError(
      `${engineFile}: evaluate.kind`,
      '"retrieval-service" for kt compare --engine (kt scores the rankings question by question)',
      JSON.stringify(engine.evaluate.kind),
    )
  const spec = serviceSpecOf(engine)
  const configs = profiles.map((p) => loadEngineProfile(p, engine.space))
  const dataset = loadMemoryDataset(data)
  const out: QuestionResults[] = []
  for (const [i, config] of configs.entries()) {
    progress(`evaluating ${profiles[i]}`)
    const evaluated = await evaluateService(spec, dataset, config)
    out.push(evaluationQuestions({[profiles[i]]: evaluated}, {engine: engineFile, data}, profiles[i]))
  }
  return out
}
