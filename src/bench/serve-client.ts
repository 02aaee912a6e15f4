/**
 * A minimal HTTP/1.1 keep-alive client over one TCP connection, one request at a time: what the
 * load generator of `kt bench serve` and the kill -9 campaign use. Node's http client costs tens
 * of microseconds per request in its own bookkeeping; a load generator must cost the server's
 * machine as little as it can (the same cores run both).
 *
 * It understands exactly what `kt online serve` sends: a status line, headers with Content-Length,
 * a body; `connection: close` ends the connection after the response.
 */
import {connect, type Socket} from 'node:net'

export interface RawResponse {
  status: number
  body: Buffer
  headers: string
}

const HEADER_END = Buffer.from('\r\n\r\n')
const CONTENT_LENGTH = /\r\ncontent-length: *(\d+)/i

/** The Content-Length of a response head (0 without one); the exact lowercase spelling kt's server sends is found without a regular expression. */
function contentLength(headers: string): number {
  const at = headers.indexOf('\r\ncontent-length: ')
  if (at >= 0) {
    const from = at + 18
    const to = headers.indexOf('\r', from)
    return Number(to < 0 ? headers.slice(from) : headers.slice(from, to))
  }
  const m = CONTENT_LENGTH.exec(headers)
  return m ? Number(m[1]) : 0
}

export class RawClient {
  private socket: Socket | undefined
  private buffer: Buffer = Buffer.alloc(0)
  private waiting: {resolve: (r: RawResponse) => void; reject: (e: Error) => void} | undefined

  constructor(
    public port: number,
    private readonly host = '127.0.0.1',
    private readonly token?: string,
  ) {}

  private open(): Socket {
    const socket = connect({port: this.port, host: this.host, noDelay: true})
    socket.on('data', (chunk: Buffer) => this.onData(chunk))
    const fail = (error: Error): void => {
      if (this.socket === socket) this.socket = undefined
      const w = this.waiting
      this.waiting = undefined
      this.buffer = Buffer.alloc(0)
      w?.reject(error)
    }
    socket.on('error', fail)
    socket.on('close', () =>
      fail(Object.assign(new Error('connection closed before a response'), {code: 'ECONNRESET'})),
    )
    this.socket = socket
    return socket
  }

  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk])
    const end = this.buffer.indexOf(HEADER_END)
    if (end < 0 || !this.waiting) return
    const headers = this.buffer.toString('latin1', 0, end)
    const length = contentLength(headers)
    if (this.buffer.length < end + 4 + length) return
    const status = Number(headers.slice(9, 12))
    const body = this.buffer.subarray(end + 4, end + 4 + length)
    this.buffer = this.buffer.subarray(end + 4 + length)
    const w = this.waiting
    this.waiting = undefined
    if (headers.includes('close') && /\r\nconnection: *close/i.test(headers)) {
      const s = this.socket
      this.socket = undefined
      s?.removeAllListeners('close')
      s?.on('close', () => undefined)
      s?.destroy()
      this.buffer = Buffer.alloc(0)
    }
    w.resolve({status, body, headers})
  }

  /** Sends one request and resolves with the response; rejects on a connection error (not answered: retry). */
  request(
    method: string,
    path: string,
    body?: string | Buffer,
    contentType = 'application/json',
  ): Promise<RawResponse> {
    if (this.waiting) return Promise.reject(new Error('RawClient: one request at a time'))
    const socket = this.socket ?? this.open()
    return new Promise((resolve, reject) => {
      this.waiting = {resolve, reject}
      const auth = this.token ? `authorization: Bearer ${this.token}\r\n` : ''
      const length = body === undefined ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.length
      const head = `${method} ${path} HTTP/1.1\r\nhost: ${this.host}\r\n${auth}content-type: ${contentType}\r\ncontent-length: ${length}\r\n\r\n`
      // One write per request: a string body goes out with the head as one UTF-8 string (the head is ASCII).
      if (typeof body === 'string' || body === undefined) socket.write(body ? head + body : head)
      else socket.write(Buffer.concat([Buffer.from(head, 'latin1'), body]))
    })
  }

  /** The response body as JSON. */
  static json(response: RawResponse): unknown {
    return JSON.parse(response.body.toString('utf8'))
  }

  close(): void {
    const s = this.socket
    this.socket = undefined
    s?.removeAllListeners('close')
    s?.on('close', () => undefined)
    s?.destroy()
  }
}
