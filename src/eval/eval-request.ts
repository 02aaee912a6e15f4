/**
 * `kt eval` as one call: the dataset loaded and restricted (--conversation, --category); kt's engine
 * (a profile, a learned reranker) or an engine file's retrieval service evaluated on it; with
 * --against, a second profile compared on the same questions, overall and per category.
 */
import {loadMemoryDataset} from '../data/conversations/index.js'
import {restrictConversations} from '../data/conversations/queries.js'
import type {MemoryDataset} from '../data/conversations/types.js'
import type {MetricValues} from '../data/conversations/metrics.js'
import {defaultRetrievalConfig} from '../engine/retrieval/engine.js'
import {loadServiceEngine} from '../adapters/retrieval-service.js'
import {loadReranker} from '../rank/search.js'
import {defaultConfig} from '../space/index.js'
import {InputError} from '../util/errors.js'
import {compareWithCategories, renderCategoryComparison, restrictCategories} from './categories.js'
import {comparedMetrics, renderComparison} from './compare.js'
import {evaluateSystem, prepareEvaluation, runEvaluation} from './harness.js'
import {loadRetrievalProfile} from './profile.js'
import {renderEvalReport} from './render.js'
import {checkPool, resolveRerankPool, runRerankedEvaluation} from './reranked.js'
import {evaluateService, evaluationQuestions, loadEngineProfile, renderServiceEval} from './service-eval.js'

export interface EvalRequest {
  readonly data: string
  readonly ks: readonly number[]
  readonly format?: 'locomo' | 'jsonl' | 'csv'
  readonly columns?: Record<string, string>
  readonly questions?: string
  readonly conversations?: readonly string[]
  readonly categories?: readonly string[]
  readonly profile?: string
  readonly against?: string
  /** An engine file whose evaluate.kind is retrieval-service, instead of kt's engine. */
  readonly engine?: string
  readonly reranker?: {readonly model: string; readonly registry: string; readonly pool?: number}
}

/** The command's side: a progress line for the evaluation, warnings on stderr. */
export interface EvalProgress {
  start(text: string): {succeed(text: string): Promise<void>; fail(): Promise<void>}
  warn(text: string): void
}

/** The JSON answer and the text report of one `kt eval`. */
export interface EvalResponse {
  readonly json: unknown
  readonly text: string
}

export async function runEvalRequest(req: EvalRequest, progress: EvalProgress): Promise<EvalResponse> {
  if (req.engine !== undefined && req.reranker !== undefined)
    throw new InputError(
      '--reranker',
      "no --reranker with --engine (the reranker reorders kt's own candidates)",
      req.reranker.model,
    )
  return req.engine === undefined ? evaluateKt(req, progress) : evaluateEngine(req, req.engine, progress)
}

/** The request's dataset, restricted to its conversations and categories. */
function loadDataset(req: EvalRequest): MemoryDataset {
  const loaded = loadMemoryDataset(req.data, {format: req.format, columns: req.columns, questions: req.questions})
  const byConversation = req.conversations
    ? restrictConversations(loaded, [...req.conversations], '--conversation')
    : loaded
  return req.categories ? restrictCategories(byConversation, req.categories, '--category') : byConversation
}

/** No scored question means no measurement: an error, not a table of zeros. */
function checkScored(req: EvalRequest, dataset: MemoryDataset, queries: number): void {
  if (queries === 0)
    throw new InputError(
      req.data,
      'at least one question of categories 1-4 whose evidence names a turn of its conversation',
      `${dataset.questions.length} questions, none scorable`,
    )
}

/** The two profiles' per-question rows compared, overall and per category. */
function compared(req: EvalRequest, dataset: MemoryDataset, rows: MetricValues[], otherRows: MetricValues[]) {
  return compareWithCategories(
    {name: req.profile ?? 'defaults', rows},
    {name: req.against!, rows: otherRows},
    dataset,
    comparedMetrics(req.ks),
  )
}

async function evaluateKt(req: EvalRequest, progress: EvalProgress): Promise<EvalResponse> {
  const {ks} = req
  const profile =
    req.profile === undefined
      ? {config: defaultRetrievalConfig(), overrides: undefined}
      : loadRetrievalProfile(req.profile)
  const dataset = loadDataset(req)
  let rerank
  if (req.reranker !== undefined) {
    const model = loadReranker(req.reranker.model, req.reranker.registry)
    const {pool, from, warning} = resolveRerankPool(req.reranker.pool, model)
    checkPool(pool, ks, from)
    if (warning !== undefined) progress.warn(warning)
    rerank = {reranker: model.reranker, pool, identity: model}
  }
  const spinner = progress.start(
    `evaluating ${dataset.questions.length} questions over ${dataset.conversations.length} conversations`,
  )
  const engine = {overrides: profile.overrides}
  const output =
    rerank === undefined
      ? runEvaluation(dataset, profile.config, {ks, engine})
      : runRerankedEvaluation(dataset, profile.config, {...rerank, ks, engine})
  checkScored(req, dataset, output.queries)
  await spinner.succeed(`evaluated ${output.queries} queries`)
  if (req.against === undefined) return {json: output, text: renderEvalReport(output)}
  const other = loadRetrievalProfile(req.against)
  // each profile with its own per-type overrides (they are built into the engines)
  const rows = (p: typeof profile) =>
    evaluateSystem(prepareEvaluation(dataset, {overrides: p.overrides}), 'engine', p.config, {ks}).rows
  const against = compared(req, dataset, rows(profile), rows(other))
  const text = `${renderEvalReport(output)}\n\n${renderComparison(against)}\n\n${renderCategoryComparison(against)}`
  return {json: {...output, against}, text}
}

/** An engine file's retrieval service scored on the dataset, with per-question results so kt compare can pair it. */
async function evaluateEngine(req: EvalRequest, file: string, progress: EvalProgress): Promise<EvalResponse> {
  const {engine, spec} = loadServiceEngine(
    file,
    'kt eval (a command or http engine computes its own metrics: tune it with kt search --engine)',
  )
  const config = req.profile === undefined ? defaultConfig(engine.space) : loadEngineProfile(req.profile, engine.space)
  const otherConfig = req.against === undefined ? undefined : loadEngineProfile(req.against, engine.space)
  const dataset = loadDataset(req)
  const spinner = progress.start(
    `evaluating ${engine.name} on ${dataset.questions.length} questions over ${dataset.conversations.length} conversations`,
  )
  try {
    const evaluated = await evaluateService(spec, dataset, config, {ks: req.ks})
    checkScored(req, dataset, evaluated.output.queries)
    const other = otherConfig && (await evaluateService(spec, dataset, otherConfig, {ks: req.ks, minTimings: 1}))
    const against = other && compared(req, dataset, evaluated.rows, other.rows)
    await spinner.succeed(`evaluated ${evaluated.output.queries} queries`)
    const name = req.profile ?? 'defaults'
    const questions = evaluationQuestions({[name]: evaluated}, {engine: file, data: req.data}, name)
    let text = renderServiceEval(evaluated.output)
    if (against) text += `\n\n${renderComparison(against)}\n\n${renderCategoryComparison(against)}`
    return {json: against ? {...evaluated.output, against, questions} : {...evaluated.output, questions}, text}
  } catch (error) {
    await spinner.fail()
    throw error
  }
}
