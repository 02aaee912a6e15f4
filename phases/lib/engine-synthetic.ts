import {createHash} from 'node:crypto'
import {readFileSync} from 'node:fs'
import {generateMemoryDataset, memoryDatasetJson, type MemorySynthOptions} from '../../src/data/memory-synth/index.js'
import {loadMemoryDataset, parseMemoryDataset, type MemoryDataset} from '../../src/data/conversations/index.js'
import {selectScoredQueries} from '../../src/data/conversations/queries.js'
import {splitDataset, type SplitSpec} from '../../src/data/conversations/split.js'
import {aggregate} from '../../src/data/conversations/metrics.js'
import {defaultConfig} from '../../src/space/index.js'
import type {EngineSyntheticResult, ConversationLeakage} from '../../src/report/types.js'
import type {PlanEngine} from './plan-engine.js'

/**
 * Shape of the synthetic conversations phase 2 drives through a user's engine (the seed is the
 * run's): small enough to score in seconds, with every question category and multi-hop chains.
 */
const ENGINE_SYNTH_SHAPE = {conversations: 2, sessions: 8, turnsPerSession: 12} as const
/** The cut-off at which a planted fact counts as found (LoCoMo's recall@10 convention). */
const PLANTED_K = 10

/** What phase 2 needs of the engine a plan names: kt_plan 1 and 2 plans alike. */
export interface SyntheticInput {
  readonly engine: PlanEngine
  /** The plan's conversations: absolute path, and as reports name it. */
  readonly data: string
  readonly dataLabel: string
  readonly seed: number
  readonly split?: SplitSpec
  readonly progress: (line: string) => void
}

/**
 * Phase 2 for the engine a plan names: kt's seeded conversations with planted evidence (the memory
 * synthesiser) scored through the engine at its defaults, so a user sees it find planted facts
 * before real data; the fingerprints of the synthetic and the plan's conversations; and, with a
 * split, the leakage audit of the held-out conversations against the tuning ones.
 */
export async function engineSynthetic(input: SyntheticInput): Promise<EngineSyntheticResult> {
  const options: MemorySynthOptions = {seed: input.seed, ...ENGINE_SYNTH_SHAPE}
  const text = memoryDatasetJson(generateMemoryDataset(options))
  const again = memoryDatasetJson(generateMemoryDataset(options))
  const synthetic = parseMemoryDataset(`memory-synth seed ${input.seed}`, text, {format: 'locomo'})
  const data = loadMemoryDataset(input.data)
  input.progress(`phase 2: synthetic conversations through ${input.engine.name}`)
  return {
    engine: input.engine.name,
    generator: {
      kind: 'memory-synth',
      seed: input.seed,
      conversations: ENGINE_SYNTH_SHAPE.conversations,
      sessions: ENGINE_SYNTH_SHAPE.sessions,
      turns_per_session: ENGINE_SYNTH_SHAPE.turnsPerSession,
    },
    sha256: sha256(text),
    regenerates_identically: again === text,
    conversations: synthetic.conversations.length,
    turns: synthetic.conversations.reduce((n, c) => n + c.turns.length, 0),
    data: {
      file: input.dataLabel,
      sha256: sha256(readFileSync(input.data)),
      conversations: data.conversations.length,
      questions: data.questions.length,
    },
    ...(input.split ? {leakage: leakageOf(data, input.split)} : {}),
    scored: await scoreThrough(input.engine, synthetic),
  }
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex')
}

/** The engine at its defaults on every scored question: planted facts found in the top PLANTED_K, per category. */
async function scoreThrough(engine: PlanEngine, dataset: MemoryDataset): Promise<EngineSyntheticResult['scored']> {
  const queries = selectScoredQueries(dataset).queries
  const {rows} = await engine.score(dataset, defaultConfig(engine.space))
  const report = aggregate(queries, rows)
  const hit = `hit@${PLANTED_K}`
  const categories = Object.entries(report.by_category).map(([category, m]) => ({
    category,
    questions: m.n,
    found: Math.round(m[hit] * m.n),
    [`recall@${PLANTED_K}`]: m[`recall@${PLANTED_K}`],
  }))
  const overall = report.overall
  return {
    config: 'defaults',
    questions: overall.n,
    found: Math.round(overall[hit] * overall.n),
    k: PLANTED_K,
    metrics: Object.fromEntries(Object.entries(overall).filter(([key]) => key !== 'n')),
    by_category: categories as NonNullable<EngineSyntheticResult['scored']>['by_category'],
  }
}

/**
 * With the plan's split: held-out turns whose text is also a turn of the tuning conversations, and
 * held-out questions whose evidence is (a tuned engine may have seen the answer).
 */
function leakageOf(data: MemoryDataset, split: SplitSpec): ConversationLeakage {
  const train = splitDataset(data, split, 'train')
  const holdout = splitDataset(data, split, 'holdout')
  const norm = (t: string) => t.trim().toLowerCase()
  const tuned = new Set(train.conversations.flatMap((c) => c.turns.map((t) => norm(t.text))))
  const turns = holdout.conversations.flatMap((c) => c.turns)
  const byId = new Map(holdout.conversations.flatMap((c) => c.turns.map((t) => [`${c.id}/${t.id}`, t])))
  const questions = selectScoredQueries(holdout).queries
  const leaked = questions.filter((q) =>
    q.evidence.some((id) => {
      const turn = byId.get(`${q.conversation}/${id}`)
      return turn !== undefined && tuned.has(norm(turn.text))
    }),
  ).length
  return {
    tuning_conversations: train.conversations.length,
    holdout_conversations: holdout.conversations.length,
    holdout_turns: turns.length,
    turns_also_in_tuning: turns.filter((t) => tuned.has(norm(t.text))).length,
    holdout_questions: questions.length,
    questions_with_evidence_in_tuning: leaked,
    verdict: leaked > 0 ? 'leak' : 'ok',
  }
}
