/**
 * `kt online serve`: the online learner and the deployed reranker as an HTTP JSON service for
 * many tenants (Node's own http module). This file owns the sockets (limits, timeouts, malformed
 * HTTP, shutdown); service.ts the routes. Every tenant call goes through the library
 * (src/online/library.ts), exactly as the CLI does; the events of all tenants go to one Journal
 * (src/online/journal.ts: one pwrite and one fdatasync per batch, the tenant logs written behind it),
 * so a batch of requests pays one flush, and a choose or feedback is answered only once durable.
 *
 * Endpoints (src/online/README.md, "The service", has the request and response bodies):
 *   POST /tenants                 create a tenant {tenant, profile?|config?, ...TenantSpec}
 *   GET  /tenants/{id}            status
 *   POST /tenants/{id}/choose     {query_id?, type?} -> configuration and query id
 *   POST /tenants/{id}/feedback   {query_id, used: true} | {query_id, label: G}
 *   GET  /rerank                  the deployed model: version, feature names
 *   POST /rerank                  {features: [[...], ...]} (or float64 rows as application/octet-stream) -> scores, order
 *   POST /noop                    reads the body and answers {} (the HTTP overhead reference of `kt bench serve`)
 *   GET  /healthz, GET /metrics   liveness; Prometheus text
 *
 * Errors are JSON {error: {code, message, retry}} with a 4xx status (429 with Retry-After for a
 * connection over the limit), 503 (with Retry-After) when the server cannot apply the request
 * now and it may be sent again, or 500 when the fault is on the server (a damaged tenant state:
 * the client's message names no server path, the log line has the whole error); each is logged
 * as one JSON line.
 */
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import type {Socket} from 'node:net'
import type {Journal} from '../journal.js'
import {InputError} from '../../util/errors.js'
import {checkBind} from '../../util/loopback.js'
import type {ServiceMetrics} from './metrics.js'
import {DEFAULT_MAX_CONNECTIONS, FD_RESERVE, fdBudget, openFileLimit} from './fd-budget.js'
import {RETRY_AFTER_S, endSocket, httpErrorOf, jsonError} from './http.js'
import {Service, type LogLine} from './service.js'

/** A connection with no traffic for this long is closed (idle floods cannot hold slots forever). */
const IDLE_TIMEOUT_MS = 30_000
/** Complete request headers must arrive within this (slow-header floods). */
const HEADERS_TIMEOUT_MS = 10_000
/** The whole request, body included, must arrive within this (slow-body floods). */
const REQUEST_TIMEOUT_MS = 30_000
/**
 * How often Node checks connections against those two limits. Its default, 30 s, let a slow
 * request live up to 30 s past HEADERS_TIMEOUT_MS (cut after about 27 s, not 10); checked every
 * second, a request is cut within a second of its limit.
 */
const TIMEOUT_CHECK_MS = 1000
/**
 * After SIGTERM, connections still open this long are closed (requests in flight had their
 * chance: a journal flush takes milliseconds). Keep-alive clients that keep retrying would
 * otherwise hold the server open until a supervisor's SIGKILL (Docker waits 10 s), which skips the
 * snapshots.
 */
export const SHUTDOWN_GRACE_MS = 2000
export interface ServeOptions {
  dir: string
  host?: string
  port?: number
  /** Required unless host is a loopback address: clients send `Authorization: Bearer <token>`. */
  token?: string
  /** Reranker registry (POST /rerank serves its current version); absent: /rerank answers 503 no_model. */
  registry?: string
  maxBodyBytes?: number
  maxConnections?: number
  /** The open-file limit the descriptor budget is derived from (default: the process's, from /proc/self/limits). */
  fdLimit?: number
  idleTimeoutMs?: number
  /** Defaults HEADERS_TIMEOUT_MS and REQUEST_TIMEOUT_MS (408 when exceeded; checked every TIMEOUT_CHECK_MS or a quarter of the headers timeout, whichever is shorter). */
  headersTimeoutMs?: number
  requestTimeoutMs?: number
  snapshotEvery?: number
  /** Remembered queries per open tenant at most (default DEFAULT_MAX_PENDING_PER_TENANT; src/online/serve/memory.ts). */
  maxPendingPerTenant?: number
  /** Remembered queries over all open tenants at most (default DEFAULT_MAX_PENDING_TOTAL). */
  maxPendingTotal?: number
  /** A tenant with no request for this long is closed (default DEFAULT_IDLE_TENANT_MS). */
  idleTenantMs?: number
  /** Bytes of one journal segment (default SEGMENT_BYTES; smaller ones reach checkpoints, and a full disk, sooner). */
  segmentBytes?: number
  /**
   * Origins (scheme://host[:port], as browsers send them) whose requests are served; a request with
   * any other Origin header is refused 403 (a web page's cross-site request: CSRF). Default none.
   */
  allowOrigins?: string[]
  /** One line per error (default: stderr). */
  log?: (line: string) => void
}

export interface RunningServer {
  readonly server: Server
  readonly port: number
  readonly host: string
  readonly url: string
  readonly metrics: ServiceMetrics
  /** The write-ahead journal every tenant's events go through (one fdatasync per batch). */
  readonly journal: Journal
  /** Stops accepting, lets requests in flight finish, closes every tenant (snapshots). */
  close(): Promise<void>
}

/** Answers each request through the service, its errors as JSON with one log line, and counts it. */
function requestHandler(service: Service, timedOut: WeakSet<Socket>) {
  const {metrics, logLine} = service
  return (req: IncomingMessage, res: ServerResponse): void => {
    const started = performance.now()
    const route = {name: 'other'}
    const finish = (status: number, text: string, type: string, extra?: string[]): void => {
      // a flat [name, value, ...] array: Node copies no object and checks each header once
      const headers = ['content-type', type, 'content-length', String(Buffer.byteLength(text))]
      if (extra) headers.push(...extra)
      // shutting down: every answer ends its connection, so a client that keeps retrying cannot keep the server open
      if (service.closing && !headers.includes('connection')) headers.push('connection', 'close')
      res.writeHead(status, headers)
      res.end(text)
      metrics.request(route.name, status, (performance.now() - started) / 1000)
    }
    service.handle(req, res, route).then(
      (out) => {
        if (out.text !== undefined) finish(out.status, out.text, out.type ?? 'text/plain; version=0.0.4')
        else finish(out.status, JSON.stringify(out.body), 'application/json')
      },
      (error: unknown) => {
        if (timedOut.has(req.socket)) {
          // answered 408 and logged by clientError; the body read then failed as aborted: count it once, as 408
          metrics.request(route.name, 408, (performance.now() - started) / 1000)
          return
        }
        const e = httpErrorOf(error)
        logLine({
          level: e.status >= 500 ? 'error' : 'warn',
          method: req.method,
          path: (req.url ?? '').slice(0, 200),
          status: e.status,
          code: e.code,
          message: e.logMessage.slice(0, 500),
        })
        const headers = e.retry ? ['retry-after', String(RETRY_AFTER_S)] : []
        // A refused oversized body is not read to its end: close the connection after answering.
        if (e.status === 413) headers.push('connection', 'close')
        finish(e.status, jsonError(e.code, e.message, e.retry), 'application/json', headers)
        if (e.status === 413) res.on('finish', () => req.socket.destroy())
      },
    )
  }
}

/** Past maxConnections a new connection is answered 429 and closed; the others are counted and kept without Nagle's delay. */
function limitConnections(server: Server, service: Service, maxConnections: number): void {
  const sockets = new Set<Socket>()
  const {metrics, logLine} = service
  server.on('connection', (socket: Socket) => {
    if (sockets.size >= maxConnections) {
      metrics.connectionsRejected++
      logLine({
        level: 'warn',
        status: 429,
        code: 'overloaded',
        message: `connection refused: ${sockets.size} open connections, the limit is ${maxConnections}`,
      })
      const text = jsonError('overloaded', `expected at most ${maxConnections} open connections: retry later`, true)
      endSocket(socket, '429 Too Many Requests', text, `retry-after: ${RETRY_AFTER_S}\r\n`)
      socket.on('error', () => undefined)
      return
    }
    sockets.add(socket)
    metrics.connections = sockets.size
    socket.setNoDelay(true)
    socket.on('close', () => {
      sockets.delete(socket)
      metrics.connections = sockets.size
    })
  })
}

/** Malformed HTTP (not a request the handler could see): one line, a JSON 400 (408, 431), close. */
function answerMalformed(server: Server, logLine: LogLine, timedOut: WeakSet<Socket>): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy()
      return
    }
    const code = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400
    if (code === 408) timedOut.add(socket)
    logLine({
      level: 'warn',
      status: code,
      code: 'bad_http',
      message: `${error.code ?? 'malformed request'}: ${error.message}`.slice(0, 300),
    })
    const reason = code === 431 ? 'Request Header Fields Too Large' : code === 408 ? 'Request Timeout' : 'Bad Request'
    endSocket(
      socket,
      `${code} ${reason}`,
      jsonError('bad_http', `expected an HTTP/1.1 request, got ${error.code ?? 'something else'}`, false),
    )
  })
}

/** Listens on host:port; a port in use or refused, or an address not of this machine, is a one-line InputError. */
async function listen(server: Server, host: string, port: number): Promise<void> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen({host, port, backlog: 4096}, () => {
        server.off('error', reject)
        resolve()
      })
    })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const at = `${host.includes(':') ? `[${host}]` : host}:${port}`
    if (code === 'EADDRINUSE')
      throw new InputError(
        '--port',
        `a port free on ${host}`,
        `${at} already in use (EADDRINUSE: another process listens there)`,
      )
    if (code === 'EACCES')
      throw new InputError(
        '--port',
        `a port this user may bind on ${host} (1024 or above without privileges)`,
        `${at} refused (EACCES)`,
      )
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAFNOSUPPORT')
      throw new InputError('--host', 'an address of this machine', `${host} (${code})`)
    throw error
  }
}

export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1'
  checkBind(host, options.token)
  const fdLimit = options.fdLimit ?? openFileLimit()
  const budget = fdBudget(fdLimit, options.maxConnections)
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`))
  const logLine: LogLine = (fields) => log(JSON.stringify({t: new Date().toISOString(), ...fields}))
  if (budget.constrained)
    logLine({
      level: 'warn',
      code: 'fd_limit',
      message: `the open-file limit is ${fdLimit}: at most ${budget.connections} open connections and ${budget.tenants} open tenants (raise it, e.g. ulimit -n ${DEFAULT_MAX_CONNECTIONS + FD_RESERVE}, for ${DEFAULT_MAX_CONNECTIONS} connections)`,
    })
  const service = new Service(options, budget, fdLimit, logLine, log)
  const headersTimeout = options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS
  /** Sockets whose request the timeout check cut (clientError answered 408 and logged it). */
  const timedOut = new WeakSet<Socket>()
  const server = createServer(
    {
      keepAliveTimeout: IDLE_TIMEOUT_MS,
      headersTimeout,
      requestTimeout: Math.max(headersTimeout, options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS),
      connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_MS, Math.ceil(headersTimeout / 4)),
    },
    requestHandler(service, timedOut),
  )
  // A client that half-closes after its request (shutdown(SHUT_WR)) still gets the answer: Node's
  // default ends the socket at the client's FIN, dropping the answer of a choose already applied.
  ;(server as Server & {httpAllowHalfOpen: boolean}).httpAllowHalfOpen = true
  server.timeout = options.idleTimeoutMs ?? IDLE_TIMEOUT_MS
  limitConnections(server, service, budget.connections)
  answerMalformed(server, logLine, timedOut)
  try {
    await listen(server, host, options.port ?? 0)
  } catch (error) {
    await service.close()
    throw error
  }
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 0)
  return {
    server,
    port,
    host,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    metrics: service.metrics,
    journal: service.journal,
    async close() {
      service.closing = true
      await new Promise<void>((resolve) => {
        const grace = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS)
        server.close(() => {
          clearTimeout(grace)
          resolve()
        })
        server.closeIdleConnections()
      })
      await service.close()
    },
  }
}
