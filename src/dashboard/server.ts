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
import {readFileSync} from 'node:fs'
import {gzipSync} from 'node:zlib'
import {isIP} from 'node:net'
import {join} from 'node:path'
import type {AddressInfo} from 'node:net'
import {InputError} from '../util/errors.js'
import {bearerToken, checkBind, hostRefusal, tokenMatches} from '../util/loopback.js'
import type {StudyReader} from '../study/reader.js'
import {vendorScriptPath, VENDOR_SCRIPTS, WEB_ASSETS_DIR, type VendorScript} from '../report/vendor.js'
import type {StudyView} from './views.js'
import {DashboardData, POLL_MS, type Cached} from './data.js'
import type {StudyCache} from './study-cache.js'
import {checkStudyName} from '../study/name.js'
import {compareChart, compareFrontChart} from './charts.js'

type GzipRule = 'remote' | 'always' | 'never'

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
  readonly gzip?: GzipRule
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
  const data = new DashboardData(o.reader, o.seed ?? 42)
  const staticCache = new Map<string, Buffer>()
  const staticFile = (path: string): Buffer => {
    let b = staticCache.get(path)
    if (!b) staticCache.set(path, (b = readFileSync(path)))
    return b
  }
  const server = createServer((req, res) => {
    routes(data, o, staticFile, req, res).catch((error: Error) => {
      if (!res.headersSent)
        res.writeHead(error instanceof InputError ? 400 : 500, {'content-type': 'application/json; charset=utf-8'})
      res.end(JSON.stringify({error: error.message.split('\n')[0]}))
    })
  })
  const host = o.host ?? '127.0.0.1'
  checkBind(host, o.token)
  await listen(server, host, o.port)
  const addr = server.address() as AddressInfo
  const shown = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address
  // the warm-up reads every study once, one at a time; requests meanwhile wait on the study's cache, not on the warm-up
  const warmed =
    o.warm === false
      ? Promise.resolve()
      : (async () => {
          for (const s of await o.reader.listStudies()) await data.studyBody(s.name)
        })().catch(() => undefined)
  return {
    url: `http://${shown}:${addr.port}/`,
    server,
    warmed,
    refreshStats: (study) => data.refreshStats(study),
    close: async () => {
      await new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
      await warmed
    },
  }
}

/** Listens on host:port (0: any free port); a port in use or an address not of this machine is an InputError. */
function listen(server: Server, host: string, port: number | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      reject(
        error.code === 'EADDRINUSE'
          ? new InputError(`--port ${port}`, 'a free port', `port in use on ${host}`)
          : error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND'
            ? new InputError(`--host ${host}`, 'an address of this machine', error.code)
            : error,
      )
    }
    server.once('error', onError)
    server.listen(port ?? 0, host, () => {
      server.off('error', onError)
      resolve()
    })
  })
}

/** Sends a cached body: gzipped for clients that take it when the rule says so, else its chunks in one writev. */
function sendCached(req: IncomingMessage, res: ServerResponse, entry: Cached, gzipRule: GzipRule): void {
  const chunks = Array.isArray(entry.body)
    ? entry.body
    : [typeof entry.body === 'string' ? Buffer.from(entry.body) : entry.body]
  const length = chunks.reduce((n, c) => n + c.length, 0)
  const gzip =
    (gzipRule === 'always' || (gzipRule === 'remote' && !isLoopback(req.socket.remoteAddress))) &&
    length >= GZIP_MIN_BYTES &&
    /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))
  if (gzip) entry.gzip ??= gzipSync(Buffer.concat(chunks, length), {level: GZIP_LEVEL})
  const body = gzip ? [entry.gzip!] : chunks
  res.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    ...(gzip ? {'content-encoding': 'gzip'} : {}),
    'content-length': gzip ? entry.gzip!.length : length,
    'cache-control': 'no-store',
    vary: 'accept-encoding',
  })
  if (req.method === 'HEAD') return void res.end()
  // one writev for all the chunks
  res.cork()
  for (const c of body) res.write(c)
  res.uncork()
  res.end()
}

/** One response: a status, a content type and a body (nothing for HEAD). */
function sender(req: IncomingMessage, res: ServerResponse) {
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
  return {send, json}
}

/** The pages, their assets and the API: admission first (read-only, Host or token), then by path. */
async function routes(
  data: DashboardData,
  o: DashboardOptions,
  staticFile: (path: string) => Buffer,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost')
  const {send, json} = sender(req, res)
  const reader = data.reader
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
  if (path.startsWith('/api/')) return apiRoutes(data, o.gzip ?? 'remote', path, url, req, res)
  return json(404, {error: `no page ${path}`})
}

/** The JSON API: versions, the studies list, one study, its importance, a comparison. */
async function apiRoutes(
  data: DashboardData,
  gzipRule: GzipRule,
  path: string,
  url: URL,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const {json} = sender(req, res)
  const reader = data.reader
  if (path === '/api/version') return json(200, {versions: await reader.versions(), poll_ms: POLL_MS})
  if (path === '/api/studies') return sendCached(req, res, await data.studiesList(), gzipRule)
  if (path === '/api/compare') {
    const names = url.searchParams
      .getAll('study')
      .flatMap((s) => s.split(','))
      .filter(Boolean)
    if (names.length < 1) return json(400, {error: 'name the studies: /api/compare?study=A&study=B'})
    const views: StudyView[] = []
    const counter = await reader.changeCounter()
    for (const n of names) {
      const v = await data.viewOf(n, counter)
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
  if (!m) return json(404, {error: `no page ${path}`})
  const name = checkStudyName(m[1], `${reader.location}: study`)
  if (!m[2]) {
    const entry = await data.studyBody(name)
    if (entry === undefined) return json(404, {error: `no study ${name} in ${reader.location}`})
    return sendCached(req, res, entry, gzipRule)
  }
  try {
    const body = await data.importanceBody(name, url.searchParams.get('target') ?? 'loss')
    if (body === undefined) return json(404, {error: `no study ${name} in ${reader.location}`})
    return json(200, body)
  } catch (error) {
    if (error instanceof InputError) return json(400, {error: error.message})
    throw error
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
