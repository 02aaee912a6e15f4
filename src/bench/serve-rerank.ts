/**
 * The rerank part of `kt bench serve`: POST /rerank against POST /noop with the same 50-candidate
 * body (JSON with 6 decimals, JSON with full-precision doubles, float64 rows), new candidates for
 * every pair, and the model's in-process share (scoring, JSON.parse) beside it.
 */
import {join} from 'node:path'
import {Rng} from '../util/rng.js'
import {toSavedModel, writeModel} from '../rank/model.js'
import {deploy} from '../rank/deploy.js'
import {
  BENCH_DEPTH as RERANK_DEPTH,
  BENCH_TREES as RERANK_TREES,
  MQ2008_FEATURES as RERANK_FEATURES,
  REQUEST_CANDIDATES as RERANK_CANDIDATES,
  randomCompleteTree,
} from './rerank.js'
import {PackedEnsemble} from '../rank/packed.js'
import {RawClient} from './serve-client.js'
import {quantileSorted} from './serve-load.js'

/** The target: µs beyond HTTP per 50-candidate request. */
export const TARGET_RERANK_US = 50
/** Different 50-candidate sets the in-process scoring time cycles through (the HTTP timing draws new ones for every request). */
const RERANK_BODIES = 64
/** Untimed /noop + /rerank pairs per body form before the timed ones. */
const RERANK_WARMUP_REQUESTS = 300
/** Decimals of the JSON body's features (what a client printing rounded features sends). */
const RERANK_JSON_DECIMALS = 6

interface RerankEndpointTiming {
  body_bytes: number
  noop_median_us: number
  rerank_median_us: number
  beyond_http_us: number
  meets_target: boolean
}

export interface RerankEndpointReport {
  candidates: number
  features: number
  trees: number
  requests: number
  /** Candidate sets: every request has new ones. */
  bodies: number
  /** Scoring the 50 rows in this process, no HTTP (median µs): the model's own part of the difference (the packed walk the server runs). */
  model_scoring_us: number
  /** Parsing one 6-decimal JSON body in this process, no HTTP (median µs): JSON.parse, as the server reads it. */
  json_reading_us: number
  /** The same for one full-precision JSON body. */
  json_full_precision_reading_us: number
  /** JSON, features printed with RERANK_JSON_DECIMALS decimals. */
  json: RerankEndpointTiming
  /** JSON, features printed as full-precision doubles (up to 17 significant digits). */
  json_full_precision: RerankEndpointTiming
  /** float64 rows (application/octet-stream). */
  binary: RerankEndpointTiming
}

/** A deployed reranker for the bench: random complete trees (the worst case for their size). */
export function benchRegistry(dir: string, seed: number): {registry: string; packed: PackedEnsemble} {
  const rng = new Rng(seed)
  const names = Array.from({length: RERANK_FEATURES}, (_, i) => `f${i + 1}`)
  const trees = Array.from({length: RERANK_TREES}, () => randomCompleteTree(RERANK_DEPTH, RERANK_FEATURES, rng))
  const packed = new PackedEnsemble({featureNames: names, trees})
  const modelPath = join(dir, 'bench-model.json')
  // Random trees rank nothing well: the validation NDCG the registry's gate asks for is recorded as 0.
  writeModel(modelPath, toSavedModel({featureNames: names, trees}, {}, {valid: {'ndcg@10': 0}}, {}))
  const registry = join(dir, 'registry')
  deploy(registry, modelPath, {force: 'kt bench serve: random trees, timed only (no ranking quality to compare)'})
  return {registry, packed}
}

/** Median µs of scoring one candidate set in this process (no HTTP), cycling through the sets; `before` runs untimed before each, with that set. */
function timeScoring(
  score: (rows: Float64Array, count: number, out: Float64Array) => void,
  sets: Float64Array[],
  count: number,
  repetitions: number,
  before?: (rows: Float64Array) => void,
): number {
  const out = new Float64Array(count)
  const times = new Float64Array(repetitions)
  for (let i = 0; i < repetitions; i++) {
    before?.(sets[i % sets.length])
    const a = performance.now()
    score(sets[i % sets.length], count, out)
    times[i] = (performance.now() - a) * 1000
  }
  return quantileSorted(times.sort(), 0.5)
}

/** Median µs of JSON.parse of one body, cycling through the bodies. */
function timeReading(bodies: Buffer[], repetitions: number): number {
  const times = new Float64Array(repetitions)
  for (let i = 0; i < repetitions; i++) {
    const a = performance.now()
    JSON.parse(bodies[i % bodies.length].toString('utf8'))
    times[i] = (performance.now() - a) * 1000
  }
  return quantileSorted(times.sort(), 0.5)
}

/** Bodies made ahead at a time by the rerank timing (a few MB). */
const BODY_BATCH = 100

/** Median µs of POST /noop and POST /rerank with the same body, a new body (made before the clock starts) for every pair, each endpoint first in half the pairs. */
async function timeRerank(
  port: number,
  makeBody: () => Buffer,
  type: string,
  requests: number,
): Promise<RerankEndpointTiming> {
  const client = new RawClient(port)
  const noop = new Float64Array(requests)
  const rerank = new Float64Array(requests)
  let bytes = 0
  try {
    const time = async (path: string, body: Buffer): Promise<number> => {
      const a = performance.now()
      const r = await client.request('POST', path, body, type)
      const us = (performance.now() - a) * 1000
      if (r.status !== 200) throw new Error(`POST ${path}: ${r.status} ${r.body.toString().slice(0, 200)}`)
      return us
    }
    let batch: Buffer[] = []
    for (let i = 0; i < requests; i++) {
      // bodies are made in batches before their pairs run, so the pairs run back to back (making a
      // body between two pairs left the server idle and cold for the next request)
      if (i % BODY_BATCH === 0) batch = Array.from({length: Math.min(BODY_BATCH, requests - i)}, makeBody)
      const body = batch[i % BODY_BATCH]
      bytes += body.length
      // each endpoint goes first in half the pairs (a first request can meet colder caches)
      if (i % 2 === 0) {
        noop[i] = await time('/noop', body)
        rerank[i] = await time('/rerank', body)
      } else {
        rerank[i] = await time('/rerank', body)
        noop[i] = await time('/noop', body)
      }
    }
  } finally {
    client.close()
  }
  const n = quantileSorted(noop.sort(), 0.5)
  const m = quantileSorted(rerank.sort(), 0.5)
  return {
    body_bytes: Math.round(bytes / requests),
    noop_median_us: n,
    rerank_median_us: m,
    beyond_http_us: m - n,
    meets_target: m - n <= TARGET_RERANK_US,
  }
}

/** POST /rerank against POST /noop with 50-candidate bodies in each form, and the model's in-process share. */
export async function rerankEndpoint(
  port: number,
  packed: PackedEnsemble,
  requests: number,
  seed: number,
): Promise<RerankEndpointReport> {
  const rng = new Rng(seed)
  const candidates = (): number[][] =>
    Array.from({length: RERANK_CANDIDATES}, () => Array.from({length: RERANK_FEATURES}, () => rng.next()))
  const rounded = (): Buffer =>
    Buffer.from(
      JSON.stringify({features: candidates().map((row) => row.map((v) => Number(v.toFixed(RERANK_JSON_DECIMALS))))}),
    )
  const fullPrecision = (): Buffer => Buffer.from(JSON.stringify({features: candidates()}))
  const littleEndian = (): Buffer => {
    const bytes = Buffer.alloc(RERANK_CANDIDATES * RERANK_FEATURES * 8)
    candidates()
      .flat()
      .forEach((v, i) => bytes.writeDoubleLE(v, i * 8))
    return bytes
  }
  // warm-up, not counted: the server's JIT sees every route and body form
  // before the first timed request (the first form timed would otherwise pay for them)
  for (const [make, type] of [
    [rounded, 'application/json'],
    [fullPrecision, 'application/json'],
    [littleEndian, 'application/octet-stream'],
  ] as const) {
    await timeRerank(port, make, type, RERANK_WARMUP_REQUESTS)
  }
  const json = await timeRerank(port, rounded, 'application/json', requests)
  const full = await timeRerank(port, fullPrecision, 'application/json', requests)
  const binary = await timeRerank(port, littleEndian, 'application/octet-stream', requests)
  const flat = Array.from({length: RERANK_BODIES}, () => Float64Array.from(candidates().flat()))
  const readBodies = Array.from({length: RERANK_BODIES}, rounded)
  const fullBodies = Array.from({length: RERANK_BODIES}, fullPrecision)
  const modelScoring = timeScoring(
    (rows, count, out) => packed.scoreAll(rows, count, out),
    flat,
    RERANK_CANDIDATES,
    requests,
  )
  return {
    candidates: RERANK_CANDIDATES,
    features: RERANK_FEATURES,
    trees: RERANK_TREES,
    requests,
    bodies: 3 * requests,
    model_scoring_us: modelScoring,
    json_reading_us: timeReading(readBodies, requests),
    json_full_precision_reading_us: timeReading(fullBodies, requests),
    json,
    json_full_precision: full,
    binary,
  }
}
