/**
 * kt's retrieval engine (src/engine/retrieval) described as a retrieval service, the structure an
 * engine file's service has, and answered in this process through the same three messages
 * (reset, ingest, search): phase 1's conformance suite checks it by the code that checks any engine.
 */
import {DEFAULT_TUNING_METRIC} from '../data/conversations/metrics.js'
import type {Conversation, Session, Turn} from '../data/conversations/types.js'
import {estimatedLatencyMs} from '../engine/retrieval/cost.js'
import {RetrievalEngine} from '../engine/retrieval/engine.js'
import {RETRIEVAL_SPACE} from '../engine/retrieval/space.js'
import {defaultConfig, type Config} from '../space/index.js'
import type {RetrievalServiceSpec} from './retrieval-service.js'
import type {InProcessService} from './service-transport.js'

/** kt's retrieval engine as a retrieval service: no ingest-time parameter, a deterministic cost model for P99. */
export function ktRetrievalService(): RetrievalServiceSpec {
  return {
    name: 'retrieval',
    space: RETRIEVAL_SPACE,
    ingestParams: [],
    transport: {transport: 'in-process', serve: retrievalService},
    metric: DEFAULT_TUNING_METRIC,
    latency: 'cost_model',
    properties: [
      {
        id: 'recall-monotone-in-k',
        description: 'recall@k never falls as k grows (a deeper ranking extends a shallower one)',
        metric: 'recall@k',
        over: 'k',
        direction: 'non-decreasing',
      },
    ],
  }
}

/** The ingest message's turns, one session per run of turns with the same time (LoCoMo turns carry their session's date). */
function conversationOf(
  id: string,
  turns: ReadonlyArray<{id: string; speaker: string; text: string; time: string | null}>,
): Conversation {
  const sessions: Session[] = []
  const out: Turn[] = []
  let last: number | null | undefined
  for (const t of turns) {
    const time = t.time === null ? null : Date.parse(t.time)
    if (sessions.length === 0 || time !== last) sessions.push({id: String(sessions.length + 1), time})
    last = time
    out.push({id: t.id, session: sessions.at(-1)!.id, speaker: t.speaker, text: t.text, time})
  }
  return {id, sessions, turns: out}
}

/** One service state: an engine per ingested conversation; a search of a conversation never ingested finds nothing. */
function retrievalService(): InProcessService {
  const engines = new Map<string, RetrievalEngine>()
  const defaults = defaultConfig(RETRIEVAL_SPACE)
  return (op, body) => {
    const id = String(body.conversation_id)
    if (op === 'reset') engines.clear()
    else if (op === 'ingest') engines.set(id, new RetrievalEngine(conversationOf(id, body.turns as never)))
    else {
      const engine = engines.get(id)
      if (!engine) return {ids: [], cost_ms: estimatedLatencyMs(0)}
      const ranked = engine.search(String(body.query), {...defaults, ...(body.config as Config)}, Number(body.k))
      return {ids: engine.ids(ranked), cost_ms: estimatedLatencyMs(engine.lastWork)}
    }
    return {}
  }
}
