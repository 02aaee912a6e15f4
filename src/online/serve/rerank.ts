/**
 * POST and GET /rerank: the deployed reranker of a registry (src/rank/registry.ts), re-read when
 * the registry's index changes, scored by its packed ensemble (src/rank/packed.ts).
 */
import type {IncomingMessage} from 'node:http'
import {statSync} from 'node:fs'
import {join} from 'node:path'
import {describeValue} from '../../util/errors.js'
import {PackedEnsemble} from '../../rank/packed.js'
import {bestFirst} from '../../rank/apply.js'
import {fromSavedModel} from '../../rank/model.js'
import {currentVersion, readRegistry, readVersionModel, REGISTRY_INDEX} from '../../rank/registry.js'
import {type Answer, HttpError, badRequest, expectJson, mediaType, parseJson} from './http.js'

/** How often the deployed reranker's registry index is checked for a new version. */
export const REGISTRY_CHECK_MS = 1000
/** Candidates per /rerank request at most (the body limit bounds it too). */
const MAX_RERANK_CANDIDATES = 10_000

/** The deployed reranker, re-read when the registry index changes. */
export class RerankerHolder {
  private checkedAt = 0
  private indexMtime = -1
  model: {version: string; packed: PackedEnsemble; featureNames: string[]} | null = null
  /**
   * Set while the registry's last change could not be read (a garbage index, a bad model file):
   * the last good model keeps serving (a broken deploy must not take ranking down; `kt rerank
   * deploy` checks what it writes, so this is damage on disk), health and metrics say so, and the
   * error is logged once per change. No good model yet: /rerank answers 503 model_unavailable.
   */
  damaged: string | undefined

  constructor(
    private readonly dir: string | undefined,
    private readonly onError: (message: string, serving: string | null) => void = () => undefined,
  ) {
    this.refresh(true)
  }

  /** For /healthz: current (serving the registry's version), stale (serving an older one), unavailable, none. */
  get state(): 'current' | 'stale' | 'unavailable' | 'none' {
    if (this.damaged !== undefined) return this.model ? 'stale' : 'unavailable'
    return this.model ? 'current' : 'none'
  }

  refresh(force = false): void {
    if (!this.dir) return
    const now = Date.now()
    if (!force && now - this.checkedAt < REGISTRY_CHECK_MS) return
    this.checkedAt = now
    let mtime: number
    try {
      mtime = statSync(join(this.dir, REGISTRY_INDEX)).mtimeMs
    } catch {
      // no index: nothing deployed (not damage)
      this.model = null
      this.damaged = undefined
      this.indexMtime = -1
      return
    }
    if (mtime === this.indexMtime) return
    this.indexMtime = mtime
    try {
      const version = currentVersion(readRegistry(this.dir))
      if (!version) {
        this.model = null
        this.damaged = undefined
        return
      }
      const saved = readVersionModel(this.dir, version)
      const packed = new PackedEnsemble(fromSavedModel(saved))
      this.model = {version: version.id, packed, featureNames: saved.feature_names}
      this.damaged = undefined
    } catch (error) {
      // logged once: the index is read again only when it changes
      this.damaged = (error as Error)?.message ?? String(error)
      this.onError(this.damaged, this.model?.version ?? null)
    }
  }
}

/** The rows of a parsed `{features: [[...], ...]}` body, row-major; null is a missing value (NaN goes right at every split, as in training). */
function rowsFromJson(parsed: unknown, width: number): Float64Array {
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
    for (const key of Object.keys(parsed))
      if (key !== 'features')
        throw badRequest(`POST /rerank: ${key.slice(0, 40)}: expected only features, got an unknown field`)
  const features = (parsed as {features?: unknown} | null)?.features
  if (!Array.isArray(features) || features.length === 0 || features.length > MAX_RERANK_CANDIDATES)
    throw badRequest(
      `POST /rerank: features: expected 1..${MAX_RERANK_CANDIDATES} rows, got ${describeValue(features)}`,
    )
  const count = features.length
  const rows = new Float64Array(count * width)
  for (let r = 0; r < count; r++) {
    const row = features[r]
    if (!Array.isArray(row) || row.length !== width)
      throw badRequest(
        `POST /rerank: features[${r}]: expected ${width} numbers (the model's feature_names), got ${describeValue(row)}`,
      )
    for (let f = 0; f < width; f++) {
      const v = row[f]
      // JSON.parse reads 1e400 as Infinity; kt rerank train refuses it too
      if (v !== null && (typeof v !== 'number' || !Number.isFinite(v)))
        throw badRequest(
          `POST /rerank: features[${r}][${f}]: expected a finite number or null, got ${describeValue(v)}`,
        )
      rows[r * width + f] = v === null ? Number.NaN : v
    }
  }
  return rows
}

/**
 * Float64 little-endian rows, back to back, checked as the JSON path checks its rows: NaN is a
 * missing value (JSON's null: it goes right at every split), +-Infinity is refused (the JSON path
 * refuses 1e400, which JSON.parse reads as Infinity; kt rerank train refuses non-finite features).
 */
function rowsFromFloat64(body: Buffer, width: number): Float64Array {
  if (body.length % (8 * width) !== 0 || body.length === 0)
    throw badRequest(
      `POST /rerank: expected float64 rows of ${width} values (${8 * width} bytes each), got ${body.length} bytes`,
    )
  const count = body.length / (8 * width)
  if (count > MAX_RERANK_CANDIDATES)
    throw badRequest(`POST /rerank: expected at most ${MAX_RERANK_CANDIDATES} rows, got ${count}`)
  const rows = new Float64Array(count * width)
  for (let i = 0; i < rows.length; i++) {
    const v = body.readDoubleLE(i * 8)
    if (v === Number.POSITIVE_INFINITY || v === Number.NEGATIVE_INFINITY)
      throw badRequest(
        `POST /rerank: features[${Math.floor(i / width)}][${i % width}]: expected a finite number or NaN (a missing value, as null in JSON), got ${describeValue(v)}`,
      )
    rows[i] = v
  }
  return rows
}

/** The model to score with, or the 503 that says why there is none. */
function servingModel(
  model: RerankerHolder['model'],
  holder: RerankerHolder,
  what: string,
  registry: string | undefined,
): NonNullable<RerankerHolder['model']> {
  if (model) return model
  if (holder.damaged !== undefined)
    throw new HttpError(
      503,
      'model_unavailable',
      `${what}: expected a readable reranker registry, got one the server cannot read (the server's log says why)`,
      true,
      `${what}: ${holder.damaged}`,
    )
  throw new HttpError(
    503,
    'no_model',
    `${what}: expected a deployed reranker in ${registry ?? '(no --registry)'}, got none`,
    true,
  )
}

/**
 * GET /rerank: the deployed model's version and features. POST /rerank: the scores in row order and
 * the rows best first, from the model current when the request came; JSON rows, or float64 rows as
 * application/octet-stream (a type a page can send across sites without a preflight: the router's
 * Origin and Host checks keep pages out of this one).
 */
export async function rerankRoute(
  holder: RerankerHolder,
  registry: string | undefined,
  req: IncomingMessage,
  readBody: () => Promise<Buffer>,
): Promise<Answer> {
  holder.refresh()
  if (req.method === 'GET') {
    const m = servingModel(holder.model, holder, 'GET /rerank', registry)
    return {
      status: 200,
      body: {model: m.version, feature_names: m.featureNames, width: m.packed.width, trees: m.packed.roots.length},
    }
  }
  const binary = mediaType(req) === 'application/octet-stream'
  if (!binary) expectJson(req, 'POST /rerank')
  const current = holder.model
  const body = await readBody()
  const model = servingModel(current, holder, 'POST /rerank', registry)
  const width = model.packed.width
  const rows = binary ? rowsFromFloat64(body, width) : rowsFromJson(parseJson(body, 'POST /rerank'), width)
  const count = rows.length / width
  const scores = model.packed.scoreAll(rows, count, new Float64Array(count))
  const text = JSON.stringify({model: model.version, scores: Array.from(scores), order: bestFirst(scores)})
  return {status: 200, body: null, text, type: 'application/json'}
}
