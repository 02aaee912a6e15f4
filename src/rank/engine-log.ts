import type {MemoryDataset} from '../data/conversations/types.js'
import {RetrievalEngine, type EngineOptions} from '../engine/retrieval/engine.js'
import {candidateFeatures} from '../engine/retrieval/features.js'
import {selectScoredQueries, type EvalQuery} from '../data/conversations/queries.js'
import type {Config} from '../space/types.js'
import {InputError} from '../util/errors.js'
import {Rng} from '../util/rng.js'
import {layoutNames, rerankerInputs, type QueryFeatureKind} from './query-features.js'
import type {SplitName} from './splits.js'

/**
 * Feature logs from the retrieval engine (`kt rerank log`): for every scored question of a memory
 * dataset, the engine's top `pool` candidate turns with their twelve CANDIDATE_FEATURES, the
 * engine's own fused score, and a label standing in for feedback: 1 if the turn is cited as the
 * question's evidence, else 0. Written as kt feature logs (parse.ts, form 3), each line carrying the
 * pool, which a model trained on the log records (query-level columns depend on it). Optional
 * query-level columns (query-features.ts) come from the same function the reranker uses at query
 * time.
 *
 * Splits keep conversations apart where possible, since queries of one conversation share turns:
 * the test split is whole held-out conversations (TEST_CONVERSATION_SHARE of them, at least one);
 * the other conversations' queries are shuffled (seeded) into train and valid (VALID_QUERY_SHARE).
 * With a single conversation all three splits are drawn from its queries (reported as such).
 */

const TEST_CONVERSATION_SHARE = 0.2
const VALID_QUERY_SHARE = 0.25
/** Label of an evidence turn (binary feedback: the turn was used). */
const EVIDENCE_LABEL = 1

interface FeatureLogRecord {
  qid: string
  label: number
  features: Record<string, number>
  doc: string
  engine_score: number
  /** The candidate pool the query-level columns were computed over (recorded in a trained model). */
  pool: number
}

/**
 * The engine's candidates for one query as feature-log records: the engine's features, then the
 * chosen query-level blocks (rerankerInputs, the query-time code path).
 */
function queryRecords(
  engine: RetrievalEngine,
  query: EvalQuery,
  config: Config,
  pool: number,
  queryFeatures: readonly QueryFeatureKind[] = [],
): FeatureLogRecord[] {
  const evidence = new Set(query.evidence)
  const layout = {queryFeatures, engineScore: false}
  const names = layoutNames(layout)
  const rows = candidateFeatures(engine, query.text, config, pool)
  const matrix = rerankerInputs(rows, layout)
  return rows.map((row, d) => {
    const features: Record<string, number> = {}
    names.forEach((name, f) => (features[name] = matrix[d * names.length + f]))
    return {
      qid: query.id,
      label: evidence.has(row.id) ? EVIDENCE_LABEL : 0,
      features,
      doc: row.id,
      engine_score: row.score,
      pool,
    }
  })
}

interface LogSplit {
  queries: EvalQuery[]
  conversations: string[]
}

/**
 * Assigns queries to train/valid/test (see the module comment). `testConversations` picks the
 * held-out conversations explicitly (e.g. the ones the engine's defaults were not tuned on).
 */
function splitForLog(
  queries: readonly EvalQuery[],
  seed: number,
  testConversations?: readonly string[],
): {splits: Record<SplitName, LogSplit>; unit: 'conversation' | 'query'} {
  const rng = new Rng(seed)
  const conversations = [...new Set(queries.map((q) => q.conversation))].sort()
  if (queries.length < 3)
    throw new InputError(
      'dataset',
      'at least 3 scored questions to split into train, valid and test',
      String(queries.length),
    )
  const convsOf = (qs: EvalQuery[]): string[] => [...new Set(qs.map((q) => q.conversation))].sort()
  for (const id of testConversations ?? []) {
    if (!conversations.includes(id))
      throw new InputError(
        '--test-conversations',
        `conversations with scored questions (${conversations.join(', ')})`,
        id,
      )
  }
  if (testConversations !== undefined && testConversations.length >= conversations.length) {
    throw new InputError(
      '--test-conversations',
      'at least one conversation left for train and valid',
      testConversations.join(','),
    )
  }
  const withValid = (test: EvalQuery[], rest: EvalQuery[], unit: 'conversation' | 'query') => {
    const validCount = Math.max(1, Math.round(VALID_QUERY_SHARE * rest.length))
    const of = (qs: EvalQuery[]): LogSplit => ({queries: qs, conversations: convsOf(qs)})
    return {unit, splits: {train: of(rest.slice(validCount)), valid: of(rest.slice(0, validCount)), test: of(test)}}
  }
  if (conversations.length >= 2) {
    const shuffled = rng.shuffle([...conversations])
    const testCount = Math.max(1, Math.round(TEST_CONVERSATION_SHARE * conversations.length))
    const testConvs = new Set(testConversations ?? shuffled.slice(0, testCount))
    const test = queries.filter((q) => testConvs.has(q.conversation))
    return withValid(test, rng.shuffle(queries.filter((q) => !testConvs.has(q.conversation))), 'conversation')
  }
  const shuffled = rng.shuffle([...queries])
  const testCount = Math.max(1, Math.round(TEST_CONVERSATION_SHARE * shuffled.length))
  return withValid(shuffled.slice(0, testCount), shuffled.slice(testCount), 'query')
}

export interface LogSummary {
  split: SplitName
  queries: number
  candidates: number
  /** Queries with at least one evidence turn among the candidates (the ones NDCG counts). */
  judged: number
  conversations: string[]
  text: string
}

/** Feature-log text for each split of a dataset (queries in dataset order within a split). */
export function engineFeatureLogs(
  dataset: MemoryDataset,
  config: Config,
  options: {
    pool: number
    seed: number
    engine?: EngineOptions
    testConversations?: readonly string[]
    queryFeatures?: readonly QueryFeatureKind[]
  },
): {unit: 'conversation' | 'query'; splits: LogSummary[]} {
  const {queries} = selectScoredQueries(dataset)
  const {splits, unit} = splitForLog(queries, options.seed, options.testConversations)
  const engines = new Map<string, RetrievalEngine>()
  const engineFor = (id: string): RetrievalEngine => {
    let engine = engines.get(id)
    if (!engine) {
      const conversation = dataset.conversations.find((c) => c.id === id)
      if (!conversation) throw new InputError(dataset.source, `a conversation ${id} for its questions`, 'none')
      engine = new RetrievalEngine(conversation, options.engine)
      engines.set(id, engine)
    }
    return engine
  }
  const order = new Map(queries.map((q, i) => [q.id, i]))
  const summaries = (['train', 'valid', 'test'] as const).map((name): LogSummary => {
    const chosen = [...splits[name].queries].sort((a, b) => order.get(a.id)! - order.get(b.id)!)
    const lines: string[] = []
    let candidates = 0
    let judged = 0
    for (const query of chosen) {
      const records = queryRecords(engineFor(query.conversation), query, config, options.pool, options.queryFeatures)
      candidates += records.length
      if (records.some((r) => r.label > 0)) judged++
      for (const record of records) lines.push(JSON.stringify(record))
    }
    return {
      split: name,
      queries: chosen.length,
      candidates,
      judged,
      conversations: splits[name].conversations,
      text: lines.length === 0 ? '' : lines.join('\n') + '\n',
    }
  })
  return {unit, splits: summaries}
}
