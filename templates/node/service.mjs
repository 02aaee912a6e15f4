// Your engine as a retrieval service (engine.json, evaluate.kind "retrieval-service", transport
// "stdio"): kt starts it, sends JSON lines and reads one JSON line back for each:
//   {"op": "reset"}                                              -> {"ok": true}
//   {"op": "ingest", "conversation_id", "turns": [{id, speaker, text, time}], "config"} -> {"ok": true, "turns": n}
//   {"op": "search", "conversation_id", "query", "k", "config"} -> {"ids": [turn ids, best first]}
// `time` is an ISO 8601 UTC string or null; `config` holds the trial's values of the parameters
// engine.json declares (the others keep memengine.mjs's defaults). Logs go to stderr.
import {createInterface} from 'node:readline'
import {MemoryEngine, PARAMETERS} from './memengine.mjs'

const defaults = Object.fromEntries(Object.entries(PARAMETERS).map(([name, [, , value]]) => [name, value]))
const engine = new MemoryEngine()
const seconds = (time) => (time == null ? 0 : typeof time === 'number' ? time : Date.parse(time) / 1000)

function handle(msg) {
  if (msg.op === 'reset') {
    engine.reset()
    return {ok: true}
  }
  if (msg.op === 'ingest') {
    const turns = msg.turns.map((t) => ({id: t.id, speaker: t.speaker ?? '', text: t.text, time: seconds(t.time)}))
    engine.ingest(msg.conversation_id, turns)
    return {ok: true, turns: turns.length}
  }
  if (msg.op === 'search') {
    if (!engine.indexes.has(msg.conversation_id)) return {error: `conversation ${msg.conversation_id} was not ingested`}
    return {ids: engine.search(msg.conversation_id, msg.query, Number(msg.k), {...defaults, ...msg.config})}
  }
  return {error: `unknown message ${JSON.stringify(msg.op)} (reset, ingest or search)`}
}

for await (const line of createInterface({input: process.stdin})) {
  if (!line.trim()) continue
  let out
  try {
    out = handle(JSON.parse(line))
  } catch (error) {
    out = {error: String(error)}
  }
  process.stdout.write(`${JSON.stringify(out)}\n`)
}
