/**
 * How kt talks to a retrieval service: three messages (reset, ingest, search), each a JSON object
 * answered by a JSON object, over keep-alive HTTP (`POST <url>/<op>`) or as JSON lines over a
 * child process's stdin/stdout (`{"op": "<op>", ...}` in, one line out, in order).
 *
 * A transport returns the reply's raw text; the caller parses it (so a reply that is not JSON can
 * be reported with its byte offset). A child process kt starts (the stdio engine, or an HTTP
 * server the engine file asks kt to start) runs in its own process group, and the whole group is
 * killed when the transport closes, when kt exits, or when the process misbehaves: no orphans.
 */
import type {ChildProcess} from 'node:child_process'
import {connect as netConnect, type Socket} from 'node:net'
import {freePort} from '../util/net.js'
import {releaseGroup, signalGroup, spawnGroup} from './process-groups.js'
import {inheritedEnv} from './inherited-env.js'
import {performance} from 'node:perf_hooks'
import {createInterface} from 'node:readline'

export type ServiceOp = 'reset' | 'ingest' | 'search'

export interface ServiceTransport {
  /** Sends one message and resolves with the reply's text; rejects on a transport failure. */
  send(op: ServiceOp, body: Record<string, unknown>): Promise<string>
  close(): Promise<void>
  /** What the transport talks to, for messages. */
  readonly label: string
  /** The process kt started for it, if any. */
  readonly pid?: number
}

/** A failure of the transport itself (not of the engine's answer). */
export class ServiceError extends Error {
  override name = 'ServiceError'

  constructor(
    message: string,
    /** The program's last stderr line when it is a program kt started that stopped or went silent. */
    readonly lastStderrLine?: string,
  ) {
    super(message)
  }
}

/** Milliseconds between SIGTERM and SIGKILL when a child process group is stopped. */
const KILL_GRACE_MS = 500
/** Stderr lines of a child process kept for error messages. */
const STDERR_TAIL_LINES = 20

/** A child process in its own group, its stderr tail kept, stopped as a whole. */
class ManagedProcess {
  readonly child: ChildProcess
  private readonly stderrTail: string[] = []
  private exited = false
  readonly exit: Promise<{code: number | null; signal: NodeJS.Signals | null}>

  constructor(argv: readonly string[], options: {cwd?: string; env?: NodeJS.ProcessEnv; stdin?: boolean}) {
    if (argv.length === 0) throw new ServiceError('an empty command')
    this.child = spawnGroup(argv, {
      cwd: options.cwd,
      env: options.env ?? inheritedEnv(),
      stdio: [options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    })
    this.exit = new Promise((resolve) => {
      this.child.once('error', (error) => {
        this.stderrTail.push(`kt: could not start ${argv[0]}: ${error.message}`)
        this.exited = true
        if (this.child.pid !== undefined) releaseGroup(this.child.pid)
        resolve({code: null, signal: null})
      })
      this.child.once('exit', (code, signal) => {
        this.exited = true
        resolve({code, signal})
      })
    })
    this.child.stderr?.setEncoding('utf8')
    createInterface({input: this.child.stderr!}).on('line', (line) => {
      this.stderrTail.push(line)
      if (this.stderrTail.length > STDERR_TAIL_LINES) this.stderrTail.shift()
    })
  }

  get running(): boolean {
    return !this.exited
  }

  stderr(): string {
    return this.stderrTail.join('\n')
  }

  /** The last non-blank line the program wrote to stderr (what an error message quotes), or undefined. */
  lastStderrLine(): string | undefined {
    for (let i = this.stderrTail.length - 1; i >= 0; i--)
      if (this.stderrTail[i].trim()) return this.stderrTail[i].trim()
    return undefined
  }

  /** SIGTERM to the group, SIGKILL after KILL_GRACE_MS; resolves when the leader has exited. */
  async stop(): Promise<void> {
    const pid = this.child.pid
    if (pid === undefined) return
    signalGroup(pid, 'SIGTERM')
    const timer = setTimeout(() => signalGroup(pid, 'SIGKILL'), KILL_GRACE_MS)
    await this.exit
    clearTimeout(timer)
    // the leader is gone; anything it left in its group goes too
    signalGroup(pid, 'SIGKILL')
    releaseGroup(pid)
  }
}

/** Default per-message timeout (a search or an ingest of one conversation). */
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000
/** Connection attempts on a refused or reset connection, and the first backoff (doubling). */
const CONNECT_RETRIES = 3
const RETRY_BACKOFF_MS = 50

/**
 * Keep-alive HTTP/1.1 over one TCP connection, one message at a time: a minimal client (request
 * line, Host, Content-Type, Content-Length; replies with Content-Length or chunked bodies), because
 * Node's http client costs about four times as much CPU per request and kt's side of a search
 * must stay under 0.1 ms (kt bench adapters). A connection the server closed is reopened; a
 * refused or reset connection before any reply byte is retried with backoff; a reply, even an
 * error status, is final.
 */
class HttpTransport implements ServiceTransport {
  private readonly host: string
  private readonly port: number
  private readonly prefix: string
  private socket: Socket | undefined
  private buffer: Buffer = Buffer.alloc(0)
  private pending:
    | {resolve: (r: {status: number; body: string; close: boolean}) => void; reject: (e: Error) => void; got: boolean}
    | undefined
  private queue: Promise<unknown> = Promise.resolve()

  constructor(
    url: string,
    private readonly timeoutMs: number = DEFAULT_REQUEST_TIMEOUT_MS,
    private readonly owned?: ManagedProcess,
  ) {
    const u = new URL(url)
    if (u.protocol !== 'http:') throw new ServiceError(`${url}: only http:// services (kt talks to them on loopback)`)
    this.host = u.hostname
    this.port = Number(u.port) || 80
    this.prefix = u.pathname.endsWith('/') ? u.pathname : `${u.pathname}/`
  }

  get label(): string {
    return `http://${this.host}:${this.port}${this.prefix}`
  }

  get pid(): number | undefined {
    return this.owned?.child.pid
  }

  send(op: ServiceOp, body: Record<string, unknown>): Promise<string> {
    const run = this.queue.then(() => this.sendWithRetry(op, JSON.stringify(body)))
    this.queue = run.catch(() => {})
    return run
  }

  private async sendWithRetry(op: ServiceOp, payload: string): Promise<string> {
    let delay = RETRY_BACKOFF_MS
    for (let attempt = 0; ; attempt++) {
      try {
        const r = await this.exchange(op, payload)
        if (r.status < 200 || r.status >= 300)
          throw new ServiceError(
            `POST ${this.prefix}${op} answered HTTP ${r.status}${r.body ? `: ${r.body.slice(0, 200).replace(/\s+/g, ' ')}` : ''}`,
          )
        return r.body
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code
        // only connection failures before any reply are retried: an answer, even an error status, is final
        if (
          attempt >= CONNECT_RETRIES ||
          (code !== 'ECONNREFUSED' && code !== 'ECONNRESET' && code !== 'EPIPE' && code !== 'KT_CLOSED')
        )
          throw error
        await new Promise((r) => setTimeout(r, delay))
        delay *= 2
      }
    }
  }

  private connect(): Promise<Socket> {
    if (this.socket && !this.socket.destroyed) return Promise.resolve(this.socket)
    return new Promise((resolve, reject) => {
      const socket = netConnect({host: this.host, port: this.port})
      socket.setNoDelay(true)
      // one idle timer per connection (re-armed by traffic), not one per message
      socket.setTimeout(this.timeoutMs)
      socket.on('timeout', () => {
        if (!this.pending) return
        socket.destroy()
        this.fail(new ServiceError(`${this.label}: no answer within ${this.timeoutMs} ms`))
      })
      const fail = (error: Error): void => reject(error)
      socket.once('error', fail)
      socket.once('connect', () => {
        socket.off('error', fail)
        this.buffer = Buffer.alloc(0)
        socket.on('data', (chunk: Buffer) => this.onData(chunk))
        socket.on('error', (error) => this.fail(error))
        socket.on('close', () => {
          if (this.socket === socket) this.socket = undefined
          // a reply without a length ends where the connection does (HTTP/1.0 servers)
          const end = this.buffer.indexOf('\r\n\r\n')
          if (this.pending && end >= 0) {
            const head = this.buffer.subarray(0, end).toString('latin1')
            if (!/\r\n(content-length|transfer-encoding):/i.test(head)) {
              const p = this.pending
              this.pending = undefined
              p.resolve({
                status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0),
                body: this.buffer.subarray(end + 4).toString('utf8'),
                close: true,
              })
              return
            }
          }
          this.fail(
            Object.assign(new ServiceError(`${this.label}: the server closed the connection before answering`), {
              code: 'KT_CLOSED',
            }),
          )
        })
        this.socket = socket
        resolve(socket)
      })
    })
  }

  private async exchange(op: ServiceOp, payload: string): Promise<{status: number; body: string; close: boolean}> {
    const socket = await this.connect()
    return new Promise((resolve, reject) => {
      this.pending = {
        got: false,
        resolve: (r) => {
          if (r.close) socket.destroy()
          resolve(r)
        },
        reject,
      }
      socket.write(
        `POST ${this.prefix}${op} HTTP/1.1\r\nHost: ${this.host}:${this.port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`,
      )
    })
  }

  private fail(error: Error): void {
    const p = this.pending
    if (!p) return
    this.pending = undefined
    // a failure after reply bytes arrived is not a connection failure: no retry
    if (p.got) delete (error as NodeJS.ErrnoException).code
    p.reject(error)
  }

  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk])
    if (this.pending) this.pending.got = true
    const end = this.buffer.indexOf('\r\n\r\n')
    if (end < 0 || !this.pending) return
    const head = this.buffer.subarray(0, end).toString('latin1')
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0)
    const close = /\r\nconnection:\s*close/i.test(head) || head.startsWith('HTTP/1.0')
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head)
    let body: Buffer | undefined
    let used: number
    if (length) {
      const n = Number(length[1])
      if (this.buffer.length < end + 4 + n) return
      body = this.buffer.subarray(end + 4, end + 4 + n)
      used = end + 4 + n
    } else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
      const parts: Buffer[] = []
      let at = end + 4
      for (;;) {
        const line = this.buffer.indexOf('\r\n', at)
        if (line < 0) return
        const size = parseInt(this.buffer.subarray(at, line).toString('latin1'), 16)
        if (!Number.isFinite(size)) return this.fail(new ServiceError(`${this.label}: a malformed chunked reply`))
        if (this.buffer.length < line + 2 + size + 2) return
        if (size === 0) {
          used = line + 4
          break
        }
        parts.push(this.buffer.subarray(line + 2, line + 2 + size))
        at = line + 2 + size + 2
      }
      body = Buffer.concat(parts)
    } else return // no length: the body ends with the connection (the close handler)
    this.buffer = this.buffer.subarray(used)
    const p = this.pending
    this.pending = undefined
    p.resolve({status, body: body.toString('utf8'), close})
  }

  async close(): Promise<void> {
    this.socket?.destroy()
    this.socket = undefined
    await this.owned?.stop()
  }
}

/** JSON lines over a child's stdin/stdout: one message in flight at a time, replies in order. */
class StdioTransport implements ServiceTransport {
  private readonly lines: string[] = []
  private waiting: ((line: string | null) => void) | undefined
  private queue: Promise<unknown> = Promise.resolve()
  private ended = false

  constructor(
    private readonly proc: ManagedProcess,
    private readonly argv: readonly string[],
    private readonly timeoutMs: number = DEFAULT_REQUEST_TIMEOUT_MS,
  ) {
    proc.child.stdout!.setEncoding('utf8')
    const rl = createInterface({input: proc.child.stdout!})
    rl.on('line', (line) => {
      if (this.waiting) {
        const w = this.waiting
        this.waiting = undefined
        w(line)
      } else this.lines.push(line)
    })
    rl.on('close', () => {
      this.ended = true
      this.waiting?.(null)
      this.waiting = undefined
    })
    // a dead child makes writes fail with EPIPE; the read side reports it
    proc.child.stdin!.on('error', () => {})
  }

  get label(): string {
    return this.argv.join(' ')
  }

  get pid(): number | undefined {
    return this.proc.child.pid
  }

  send(op: ServiceOp, body: Record<string, unknown>): Promise<string> {
    const run = this.queue.then(() => this.exchange(op, body))
    this.queue = run.catch(() => {})
    return run
  }

  private async exchange(op: ServiceOp, body: Record<string, unknown>): Promise<string> {
    if (!this.proc.running || this.ended)
      throw new ServiceError(`${this.label} is not running${this.tail()}`, this.proc.lastStderrLine())
    this.proc.child.stdin!.write(`${JSON.stringify({op, ...body})}\n`)
    const line = this.lines.length > 0 ? this.lines.shift()! : await this.nextLine()
    if (line === null)
      throw new ServiceError(
        `${this.label} closed its output before answering ${op}${this.tail()}`,
        this.proc.lastStderrLine(),
      )
    return line
  }

  private nextLine(): Promise<string | null> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting = undefined
        // the reply stream is out of step now: nothing later can be trusted, so the process goes
        void this.proc.stop()
        reject(new ServiceError(`${this.label}: no answer within ${this.timeoutMs} ms (process stopped)`))
      }, this.timeoutMs)
      this.waiting = (line) => {
        clearTimeout(timer)
        resolve(line)
      }
    })
  }

  private tail(): string {
    const text = this.proc.stderr().trim()
    return text ? `; stderr: ${text.split('\n').slice(-3).join(' | ').slice(0, 300)}` : ''
  }

  async close(): Promise<void> {
    this.proc.child.stdin?.end()
    await this.proc.stop()
  }
}

/** Placeholder in a service command or URL replaced by a free loopback port kt picked. */
const PORT_PLACEHOLDER = '{port}'
/** How long a server kt started may take to accept connections. */
const DEFAULT_STARTUP_TIMEOUT_MS = 15_000
const STARTUP_POLL_MS = 25

/** A service answered in this process (a built-in engine): one message in, its reply object out. */
export type InProcessService = (op: ServiceOp, body: Record<string, unknown>) => Record<string, unknown>

export interface TransportSpec {
  readonly transport: 'http' | 'stdio' | 'in-process'
  /** For in-process: a fresh service state per transport opened. */
  readonly serve?: () => InProcessService
  /** For http: the service's base URL (may contain {port} when kt starts the server). */
  readonly url?: string
  /** For stdio: the engine's argv; for http: a server kt starts and stops itself (optional). */
  readonly command?: readonly string[]
  /** Working folder of the command (absolute). */
  readonly cwd?: string
  readonly env?: Readonly<Record<string, string>>
  readonly timeoutMs?: number
  readonly startupTimeoutMs?: number
}

/** Opens the transport an engine file describes, starting its process if it names one. */
export async function openTransport(spec: TransportSpec): Promise<ServiceTransport> {
  if (spec.transport === 'in-process') return inProcessTransport(spec.serve!())
  const env = {...inheritedEnv(), ...(spec.env ?? {})}
  if (spec.transport === 'stdio') {
    if (!spec.command || spec.command.length === 0) throw new ServiceError('a stdio retrieval service needs a command')
    const proc = new ManagedProcess(spec.command, {cwd: spec.cwd, env, stdin: true})
    return new StdioTransport(proc, spec.command, spec.timeoutMs)
  }
  if (!spec.url) throw new ServiceError('an http retrieval service needs a url')
  if (!spec.command) return new HttpTransport(spec.url, spec.timeoutMs)
  const needsPort = spec.url.includes(PORT_PLACEHOLDER) || spec.command.some((a) => a.includes(PORT_PLACEHOLDER))
  const port = needsPort ? String(await freePort()) : ''
  const fill = (s: string): string => s.split(PORT_PLACEHOLDER).join(port)
  // stdin stays open: a server may watch it and exit when kt is gone (examples/python-engine --watch-stdin)
  const proc = new ManagedProcess(spec.command.map(fill), {
    cwd: spec.cwd,
    env: needsPort ? {...env, KT_SERVICE_PORT: port} : env,
    stdin: true,
  })
  const url = fill(spec.url)
  try {
    await waitForServer(url, proc, spec.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS)
  } catch (error) {
    await proc.stop()
    throw error
  }
  return new HttpTransport(url, spec.timeoutMs, proc)
}

/**
 * A service in this process behind the same text protocol: each message goes through JSON both
 * ways, so the service sees what a remote one would and kt checks its reply by the same code; a
 * thrown error is the service's `{"error": ...}` reply.
 */
function inProcessTransport(service: InProcessService): ServiceTransport {
  return {
    label: 'in-process',
    send: async (op, body) => {
      try {
        return JSON.stringify(service(op, JSON.parse(JSON.stringify(body)) as Record<string, unknown>))
      } catch (error) {
        return JSON.stringify({error: (error as Error).message})
      }
    },
    close: async () => {},
  }
}

/** Polls until the server accepts a TCP connection, its process dies, or the time is up. */
async function waitForServer(url: string, proc: ManagedProcess, timeoutMs: number): Promise<void> {
  const {hostname, port} = new URL(url)
  const {connect} = await import('node:net')
  const deadline = performance.now() + timeoutMs
  for (;;) {
    if (!proc.running)
      throw new ServiceError(
        `the service command exited before listening on ${url}${proc.stderr() ? `; stderr: ${proc.stderr().split('\n').slice(-3).join(' | ')}` : ''}`,
        proc.lastStderrLine(),
      )
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect({host: hostname, port: Number(port) || 80})
      socket.once('connect', () => {
        socket.destroy()
        resolve(true)
      })
      socket.once('error', () => resolve(false))
    })
    if (up) return
    if (performance.now() > deadline)
      throw new ServiceError(`the service did not listen on ${url} within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, STARTUP_POLL_MS))
  }
}
