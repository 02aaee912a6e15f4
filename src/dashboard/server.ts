/**
 * `kt dashboard`: a read-only web UI over a study store, served by Node's own http module. Pages
 * are one HTML shell plus kt's page script (assets/web/); vega, vega-lite and vega-embed come from
 * the installed packages. Every route is GET (or HEAD); the store is opened read-only.
 *
 * JSON endpoints:
 *   GET /api/studies                      the studies list
 *   GET /api/studies/NAME                 one study: column-wise trials, front, profiles, per-type, chart specs
 *                                         (from the study's cache, src/dashboard/study-cache.ts: a request after
 *                                         no commit reads nothing; after new trials, only those)
 *   GET /api/studies/NAME/importance      fANOVA parameter importance (?target=loss or a metric)
 *   GET /api/compare?study=A&study=B      several studies' views and the side-by-side chart specs
 *   GET /api/version                      per-study change signatures: pages poll it and refetch on change
 */
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import {existsSync, readFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {Worker} from 'node:worker_threads'
import {gzipSync} from 'node:zlib'
import {isIP} from 'node:net'
import {join} from 'node:path'
import type {AddressInfo} from 'node:net'
import {InputError} from '../util/errors.js'
import {bearerToken, checkBind, hostRefusal, tokenMatches} from '../util/loopback.js'
import {studyImportance, type ImportanceTrial, type StudyImportance} from '../search/importance.js'
import type {ParamSpace} from '../space/index.js'
import type {StudyReader, StudySummary} from '../study/reader.js'
import {vendorScriptPath, VENDOR_SCRIPTS, WEB_ASSETS_DIR, type VendorScript} from '../report/vendor.js'
import {studyListEntry, type StudyView} from './views.js'
import {StudyCache} from './study-cache.js'
import {checkStudyName} from '../study/name.js'
import {ColumnBlocks, studyBodyChunks} from './body.js'
import {compareChart, compareFrontChart, importanceChart, studyCharts} from './charts.js'

const importanceWorkerFile = fileURLToPath(new URL('./importance-worker.js', import.meta.url))

/**
 * fANOVA importance on a worker thread (a forest on thousands of trials takes seconds, and the
 * server must keep answering the pages' polls meanwhile); in this thread when running from the
 * TypeScript sources (tests), where there is no compiled worker.
 */
function importanceOffThread(
  space: ParamSpace | undefined,
  trials: readonly ImportanceTrial[],
  target: string,
  seed: number,
): Promise<StudyImportance> {
  if (!existsSync(importanceWorkerFile) || !import.meta.url.endsWith('.js'))
    return Promise.resolve().then(() => studyImportance(space, trials, {target, seed}))
  return new Promise((resolve, reject) => {
    const worker = new Worker(importanceWorkerFile)
    const slim = trials.map((t) => ({
      id: t.id,
      status: t.status,
      budget: t.budget,
      loss: t.loss,
      config: t.config,
      metrics: t.metrics,
    }))
    worker.once(
      'message',
      (msg: {result?: StudyImportance; error?: string; input?: {where: string; expected: string; got?: string}}) => {
        void worker.terminate()
        if (msg.result) resolve(msg.result)
        else
          reject(msg.input ? new InputError(msg.input.where, msg.input.expected, msg.input.got) : new Error(msg.error))
      },
    )
    worker.once('error', (e) => {
      void worker.terminate()
      reject(e)
    })
    worker.postMessage({id: 0, space, trials: slim, target, seed})
  })
}

/** How often pages poll /api/version (ms): a trial finished elsewhere shows within two polls' time of 2 s. */
export const POLL_MS = 1000

export interface DashboardOptions {
  readonly reader: StudyReader
  readonly port?: number
  readonly host?: string
  readonly seed?: number
  /**
   * Read every study and build its page data right after the server starts, so that the first
   * request finds it ready (default true; kt bench dashboard turns it off to time the cold path).
   */
  readonly warm?: boolean
  /**
   * When large bodies go out gzipped (to clients that accept it): 'remote' (default) only to
   * clients not on loopback, where compressing costs more than sending; 'always'; 'never'.
   */
  readonly gzip?: 'remote' | 'always' | 'never'
  /**
   * Required to bind beyond loopback (checkBind, shared with kt online serve): requests then carry it
   * as `Authorization: Bearer <token>` or the cookie a page URL with `?token=<token>` sets once.
   * Without it the server answers only requests whose Host names loopback (DNS rebinding).
   */
  readonly token?: string
}

export interface Dashboard {
  readonly url: string
  readonly server: Server
  /** Resolves when the start-up warm-up (DashboardOptions.warm) is done. */
  readonly warmed: Promise<void>
  /** What the last refresh of a study's cache read (kt bench dashboard prints it). */
  refreshStats(study: string): StudyCache['lastRefresh'] | undefined
  close(): Promise<void>
}

const PAGE_ASSETS: Record<string, string> = {
  'dashboard.js': 'text/javascript',
  'charts.js': 'text/javascript',
  'kt.css': 'text/css',
}

/** A body cached until its key (the study's version, with its siblings') changes, and its gzip, made on first demand. */
interface Cached {
  key: string
  /** The body, or its chunks in order (a study's: most are cached column blocks shared with the previous body). */
  body: string | Buffer | Buffer[]
  gzip?: Buffer
  /** The reader's change counter when the body was last known current: the same counter skips every read. */
  counter?: string
}

/** Bodies at least this large go out gzipped to clients that get gzip (DashboardOptions.gzip). */
const GZIP_MIN_BYTES = 64 * 1024
/** zlib level 1: a 10,000-trial study's 4 MB compress to about a third in ~15 ms; level 6 saves another 10% for 6x the time. */
const GZIP_LEVEL = 1

function isLoopback(address: string | undefined): boolean {
  if (!address) return false
  const a = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address
  return a === '::1' || (isIP(a) === 4 && a.startsWith('127.'))
}

export async function startDashboard(o: DashboardOptions): Promise<Dashboard> {
  const reader = o.reader
  const seed = o.seed ?? 42
  const gzipRule = o.gzip ?? 'remote'
  const caches = new Map<string, StudyCache>()
  const blocks = new Map<string, ColumnBlocks>()
  const studyCache = new Map<string, Cached>()
  const importanceCache = new Map<string, Cached>()
  const importanceJobs = new Map<string, Promise<string>>()
  const staticCache = new Map<string, Buffer>()
  let listCache: Cached | undefined

  const staticFile = (path: string): Buffer => {
    let b = staticCache.get(path)
    if (!b) staticCache.set(path, (b = readFileSync(path)))
    return b
  }

  /** The study's cache brought up to date, or undefined when there is no such study. */
  const loaded = async (name: string, counter: string | undefined): Promise<StudyCache | undefined> => {
    let c = caches.get(name)
    if (!c) caches.set(name, (c = new StudyCache(reader, name)))
    if ((await c.refresh(counter)) === 'missing') {
      caches.delete(name)
      blocks.delete(name)
      return undefined
    }
    return c
  }

  /** Routed studies: the per-type studies share the name prefix (PREFIX-all, PREFIX-<type>). */
  const siblingsOf = async (name: string, counter: string | undefined): Promise<StudyCache[]> => {
    if (!name.endsWith('-all')) return []
    const prefix = name.slice(0, -'-all'.length)
    const out: StudyCache[] = []
    for (const n of Object.keys(await reader.versions())) {
      if (n === name || !n.startsWith(`${prefix}-`)) continue
      const sib = await loaded(n, counter)
      if (sib) out.push(sib)
    }
    return out
  }

  const viewOf = async (
    name: string,
    counter: string | undefined,
  ): Promise<{cache: StudyCache; view: () => StudyView; key: string} | undefined> => {
    const cache = await loaded(name, counter)
    if (!cache) return undefined
    const sibs = await siblingsOf(name, counter)
    const key = [cache.version, ...sibs.map((s) => `${s.name}=${s.version}`)].join('\n')
    return {cache, key, view: () => cache.view(sibs.map((s) => ({name: s.name, trials: s.trials})))}
  }

  const studyBody = async (name: string): Promise<Cached | undefined> => {
    const counter = await reader.changeCounter()
    const hit = studyCache.get(name)
    if (hit && counter !== undefined && hit.counter === counter) return hit
    const got = await viewOf(name, counter)
    if (!got) {
      studyCache.delete(name)
      return undefined
    }
    if (hit && hit.key === got.key) {
      hit.counter = counter
      return hit
    }
    const view = got.view()
    let b = blocks.get(name)
    if (!b) blocks.set(name, (b = new ColumnBlocks()))
    const entry: Cached = {
      key: got.key,
      counter,
      body: studyBodyChunks(
        {version: got.cache.version!, view, charts: studyCharts(view), pollMs: POLL_MS},
        b,
        got.cache.takeChangedFrom(),
      ),
    }
    studyCache.set(name, entry)
    return entry
  }

  const studiesList = async (): Promise<Cached> => {
    const counter = await reader.changeCounter()
    if (listCache && counter !== undefined && listCache.counter === counter) return listCache
    const list: StudySummary[] = await reader.listStudies()
    const studies = []
    for (const s of list) {
      const c = await loaded(s.name, counter)
      studies.push(studyListEntry(s, c?.trials ?? []))
    }
    const body = JSON.stringify({
      location: reader.location,
      studies,
      versions: await reader.versions(),
      poll_ms: POLL_MS,
    })
    return (listCache = {key: '', body, counter})
  }

  const routes = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost')
    const send = (status: number, type: string, body: string | Buffer, cache = 'no-store'): void => {
      res.writeHead(status, {
        'content-type': `${type}; charset=utf-8`,
        'cache-control': cache,
        'x-content-type-options': 'nosniff',
      })
      res.end(req.method === 'HEAD' ? undefined : body)
    }
    const json = (status: number, body: unknown): void =>
      send(status, 'application/json', typeof body === 'string' ? body : JSON.stringify(body))
    const sendCached = (entry: Cached): void => {
      const chunks = Array.isArray(entry.body)
        ? entry.body
        : [typeof entry.body === 'string' ? Buffer.from(entry.body) : entry.body]
      const length = chunks.reduce((n, c) => n + c.length, 0)
      const gzip = gzipRule === 'always' || (gzipRule === 'remote' && !isLoopback(req.socket.remoteAddress))
      if (gzip && length >= GZIP_MIN_BYTES && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
        entry.gzip ??= gzipSync(Buffer.concat(chunks, length), {level: GZIP_LEVEL})
        res.writeHead(200, {
          'content-type': 'application/json; charset=utf-8',
          'content-encoding': 'gzip',
          'content-length': entry.gzip.length,
          'cache-control': 'no-store',
          vary: 'accept-encoding',
        })
        res.end(req.method === 'HEAD' ? undefined : entry.gzip)
        return
      }
      res.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': length,
        'cache-control': 'no-store',
        vary: 'accept-encoding',
      })
      if (req.method === 'HEAD') return void res.end()
      // one writev for all the chunks
      res.cork()
      for (const c of chunks) res.write(c)
      res.uncork()
      res.end()
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD')
      return json(405, {error: 'the dashboard is read-only: GET only'})
    }
    const admission = admit(req, url, o.token)
    if (admission.status === 303) {
      res.writeHead(303, {location: admission.location, 'set-cookie': admission.cookie, 'cache-control': 'no-store'})
      return void res.end()
    }
    if (admission.status !== 200) return json(admission.status, {error: admission.error})
    let path: string
    try {
      path = decodeURIComponent(url.pathname)
    } catch {
      return json(400, {error: `${url.pathname}: expected a path with valid percent-encoding`})
    }
    if (path === '/' || path === '/study' || path === '/compare')
      return send(200, 'text/html', pageShell(reader.location))
    if (path.startsWith('/study/')) return send(200, 'text/html', pageShell(reader.location))
    if (path === '/favicon.ico') return send(204, 'image/x-icon', '')
    if (path.startsWith('/vendor/')) {
      const name = path.slice('/vendor/'.length)
      if (!Object.hasOwn(VENDOR_SCRIPTS, name)) return json(404, {error: `no vendor script ${name}`})
      return send(200, 'text/javascript', staticFile(vendorScriptPath(name as VendorScript)), 'max-age=3600')
    }
    if (path.startsWith('/assets/')) {
      const name = path.slice('/assets/'.length)
      const type = Object.hasOwn(PAGE_ASSETS, name) ? PAGE_ASSETS[name] : undefined
      if (!type) return json(404, {error: `no asset ${name}`})
      return send(200, type, staticFile(join(WEB_ASSETS_DIR, name)))
    }
    if (path === '/api/version') return json(200, {versions: await reader.versions(), poll_ms: POLL_MS})
    if (path === '/api/studies') return sendCached(await studiesList())
    if (path === '/api/compare') {
      const names = url.searchParams
        .getAll('study')
        .flatMap((s) => s.split(','))
        .filter(Boolean)
      if (names.length < 1) return json(400, {error: 'name the studies: /api/compare?study=A&study=B'})
      const views: StudyView[] = []
      const counter = await reader.changeCounter()
      for (const n of names) {
        const v = await viewOf(n, counter)
        if (!v) return json(404, {error: `no study ${n} in ${reader.location}`})
        views.push(v.view())
      }
      const charts: Record<string, unknown> = {
        trials: compareChart(views, 'order'),
        budget: compareChart(views, 'budget_so_far'),
      }
      const fronts = compareFrontChart(views)
      if (fronts) charts.front = fronts
      return json(200, {views, charts, versions: await reader.versions(), poll_ms: POLL_MS})
    }
    const m = /^\/api\/studies\/(.+?)(\/importance)?$/s.exec(path)
    if (m) {
      const name = checkStudyName(m[1], `${reader.location}: study`)
      if (!m[2]) {
        const entry = await studyBody(name)
        if (entry === undefined) return json(404, {error: `no study ${name} in ${reader.location}`})
        return sendCached(entry)
      }
      const target = url.searchParams.get('target') ?? 'loss'
      const cache = await loaded(name, await reader.changeCounter())
      if (!cache) return json(404, {error: `no study ${name} in ${reader.location}`})
      const version = cache.version!
      const key = `${name}\u0000${target}`
      const hit = importanceCache.get(key)
      if (hit && hit.key === version) return json(200, hit.body)
      // one fit per study and target at a time (a forest takes seconds of a core): a request while one
      // runs gets its result, even if trials arrived since (the body names its version and trial count);
      // the page asks again on its next redraw and then starts a fit of the newer trials
      let job = importanceJobs.get(key)
      if (!job) {
        const study = cache.record!
        const rows = [...cache.trials]
        const fit = (async () => {
          const imp: StudyImportance = await importanceOffThread(study.space as ParamSpace, rows, target, seed)
          const body = JSON.stringify({
            version,
            importance: imp,
            chart: importanceChart(
              target === 'loss' ? `the loss (${(study.objective as {name?: string}).name ?? 'objective'})` : target,
            ),
          })
          importanceCache.set(key, {key: version, body})
          return body
        })()
        importanceJobs.set(key, (job = fit))
        void fit.catch(() => undefined).finally(() => importanceJobs.delete(key))
      }
      try {
        return json(200, await job)
      } catch (error) {
        if (error instanceof InputError) return json(400, {error: error.message})
        throw error
      }
    }
    return json(404, {error: `no page ${path}`})
  }

  const server = createServer((req, res) => {
    routes(req, res).catch((error: Error) => {
      if (!res.headersSent)
        res.writeHead(error instanceof InputError ? 400 : 500, {'content-type': 'application/json; charset=utf-8'})
      res.end(JSON.stringify({error: error.message.split('\n')[0]}))
    })
  })
  const host = o.host ?? '127.0.0.1'
  checkBind(host, o.token)
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      reject(
        error.code === 'EADDRINUSE'
          ? new InputError(`--port ${o.port}`, 'a free port', `port in use on ${host}`)
          : error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND'
            ? new InputError(`--host ${host}`, 'an address of this machine', error.code)
            : error,
      )
    }
    server.once('error', onError)
    server.listen(o.port ?? 0, host, () => {
      server.off('error', onError)
      resolve()
    })
  })
  const addr = server.address() as AddressInfo
  const shown = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address
  // the warm-up reads every study once, one at a time; requests meanwhile wait on the study's cache, not on the warm-up
  const warmed =
    o.warm === false
      ? Promise.resolve()
      : (async () => {
          for (const s of await reader.listStudies()) await studyBody(s.name)
        })().catch(() => undefined)
  return {
    url: `http://${shown}:${addr.port}/`,
    server,
    warmed,
    refreshStats: (study) => caches.get(study)?.lastRefresh,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
      await warmed
    },
  }
}

/** The cookie a page URL with ?token= sets, so that the page's own requests carry the token. */
const TOKEN_COOKIE = 'kt_dashboard_token'

type Admission = {status: 200} | {status: 303; location: string; cookie: string} | {status: 401 | 403; error: string}

/**
 * Whether a request is served: without a token only when its Host names loopback; with one when it
 * carries the token (Bearer header or cookie), or a `?token=` that sets the cookie (303 to the URL without it).
 */
function admit(req: IncomingMessage, url: URL, token: string | undefined): Admission {
  if (token === undefined) {
    const refused = hostRefusal(req.headers.host)
    return refused ? {status: 403, error: refused} : {status: 200}
  }
  if (tokenMatches(bearerToken(req.headers.authorization), token)) return {status: 200}
  if (tokenMatches(cookieValue(req.headers.cookie, TOKEN_COOKIE), token)) return {status: 200}
  if (tokenMatches(url.searchParams.get('token') ?? undefined, token)) {
    url.searchParams.delete('token')
    return {
      status: 303,
      location: `${url.pathname}${url.search}`,
      cookie: `${TOKEN_COOKIE}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`,
    }
  }
  return {
    status: 401,
    error: "expected the dashboard's token: Authorization: Bearer <token>, or open a page with ?token=<token>",
  }
}

/** One cookie's value from a Cookie header, or undefined. */
function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim())
      } catch {
        return undefined
      }
    }
  }
  return undefined
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'})[c]!)
}

/** The one HTML shell of every page; the page script routes on location.pathname. */
function pageShell(location: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>kt dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/kt.css">
<script src="/vendor/vega.min.js"></script>
<script src="/vendor/vega-lite.min.js"></script>
<script src="/vendor/vega-embed.min.js"></script>
<script src="/assets/charts.js"></script>
</head><body data-store="${escapeHtml(location)}">
<header><a href="/" class="brand">kt dashboard</a> <span class="store">${escapeHtml(location)}</span> <span id="live" class="live" title="polls for changes every ${POLL_MS} ms">live</span></header>
<main id="app"><p>Loading…</p></main>
<script src="/assets/dashboard.js"></script>
</body></html>
`
}
