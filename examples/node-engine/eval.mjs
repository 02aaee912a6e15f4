// kt's command protocol for the Node memory engine: one evaluation per run. kt sets the
// parameters in their environment variables (engine.json) plus KT_TIER, KT_BUDGET, KT_TRIAL_ID,
// KT_SEED; the metrics go to stdout as the last line, a JSON object. Logs go to stderr.
//
//   NODEMEM_W_BM25=0.5 NODEMEM_W_RECENCY=0.5 KT_TIER=unit node eval.mjs
import {readFileSync} from 'node:fs'
import {performance} from 'node:perf_hooks'
import {MemoryEngine, configFromEnv} from './memengine.mjs'

const K = 10
const RECALL_AT = [1, 3, 10]
const TIERS = {
  smoke: (ci, qi) => ci < 2 && (qi === 0 || qi === 2),
  unit: (ci, qi) => qi < 3,
  full: () => true,
}
const TIMED_REPEATS = 3

function tierName() {
  if (process.env.KT_TIER in TIERS) return process.env.KT_TIER
  const budget = Number(process.env.KT_BUDGET || 9)
  return budget <= 1 ? 'smoke' : budget <= 3 ? 'unit' : 'full'
}

function percentile(values, q) {
  const s = [...values].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.max(0, Math.round(q * (s.length - 1))))]
}

const config = configFromEnv(process.env)
const tier = tierName()
const data = JSON.parse(readFileSync(new URL('./conversations.json', import.meta.url), 'utf8'))
const engine = new MemoryEngine()
const hits = Object.fromEntries(RECALL_AT.map((k) => [k, 0]))
let rr = 0
let asked = 0
const times = []
data.conversations.forEach((conv, ci) => {
  engine.ingest(conv.id, conv.turns)
  conv.questions.forEach((q, qi) => {
    if (!TIERS[tier](ci, qi)) return
    asked++
    let best = Infinity
    let ids = []
    for (let r = 0; r < TIMED_REPEATS; r++) {
      const t0 = performance.now()
      ids = engine.search(conv.id, q.text, K, config)
      best = Math.min(best, performance.now() - t0)
    }
    times.push(best)
    const ranks = q.evidence.map((e) => ids.indexOf(e) + 1).filter((r) => r > 0)
    const first = ranks.length ? Math.min(...ranks) : Infinity
    for (const k of RECALL_AT) if (first <= k) hits[k]++
    if (ranks.length) rr += 1 / first
  })
})
process.stderr.write(`tier ${tier}: ${asked} questions, config ${JSON.stringify(config)}\n`)
const metrics = Object.fromEntries(RECALL_AT.map((k) => [`recall@${k}`, hits[k] / asked]))
Object.assign(metrics, {
  mrr: rr / asked,
  p50_ms: percentile(times, 0.5),
  p99_ms: percentile(times, 0.99),
  questions: asked,
})
console.log(JSON.stringify(metrics))
