/**
 * The HTTP side of `kt online serve` that knows nothing of tenants: errors as JSON answers, request
 * bodies (size-limited, typed, parsed), and the answers written straight to a socket before any
 * request exists (a refused connection, malformed HTTP).
 */
import type {IncomingMessage} from 'node:http'
import type {Socket} from 'node:net'
import {GateRefusedError} from '../../deploy/gate.js'
import {InputError} from '../../util/errors.js'
import {parseJsonText} from '../../util/json.js'
import {OnlineError, SERVER_SIDE_CODES} from '../online-error.js'

/** Retry-After (seconds) sent with 429 and 503 answers. */
export const RETRY_AFTER_S = 1

/** An HTTP answer to an error: status, code, message, and whether to retry. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retry = false,
    /** What the log line says instead of the message (server paths the client is not shown). */
    readonly logMessage = message,
  ) {
    super(message)
  }
}

/** A 400 bad_request. */
export function badRequest(message: string): HttpError {
  return new HttpError(400, 'bad_request', message)
}

/** The client's message for a server-side OnlineError (SERVER_SIDE_CODES); the log keeps the error's own, which names server paths. */
const SERVER_SIDE_MESSAGE: Record<string, string> = {
  state_damaged:
    "the tenant's stored state does not read back as it was written: the operator must restore it (the server's log names the file)",
  storage_failed: "the tenant's folder cannot be read or written on the server (the server's log says why)",
}

/** A profile the deploy gate refuses (POST /tenants): the request is well formed, its content is not accepted. */
const GATE_REFUSED_STATUS = 422

const ONLINE_STATUS: Record<string, number> = {
  bad_request: 400,
  unknown_tenant: 404,
  unknown_query: 404,
  tenant_exists: 409,
  already_settled: 409,
  duplicate_query_id: 409,
  not_accepted: 422,
  tenant_busy: 503,
  not_durable: 503,
}

/** The HTTP answer to whatever a request handler threw (an unexpected error is a 500 whose details only the log has). */
export function httpErrorOf(error: unknown): HttpError {
  if (error instanceof HttpError) return error
  if (error instanceof OnlineError && SERVER_SIDE_CODES.has(error.code))
    return new HttpError(500, error.code, SERVER_SIDE_MESSAGE[error.code], error.retry, error.message)
  if (error instanceof OnlineError)
    return new HttpError(ONLINE_STATUS[error.code] ?? 400, error.code, error.message, error.retry)
  if (error instanceof GateRefusedError) return new HttpError(GATE_REFUSED_STATUS, error.code, error.message)
  if (error instanceof InputError) return badRequest(error.message)
  const message = (error as Error)?.message ?? String(error)
  return new HttpError(500, 'internal', "internal error (the server's log has the details)", false, message)
}

export function jsonError(code: string, message: string, retry: boolean): string {
  return JSON.stringify({error: {code, message, retry}})
}

/** Writes a whole JSON error answer to a socket no request owns yet, and ends the connection. */
export function endSocket(socket: Socket, status: string, text: string, extraHeaders = ''): void {
  socket.end(
    `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n${extraHeaders}connection: close\r\n\r\n${text}`,
  )
}

/**
 * The media type of a request body (Content-Type without parameters, lower case), or '' when none
 * is declared. JSON endpoints take application/json only: a browser sends text/plain, form
 * encodings and multipart across sites without asking first (no CORS preflight), application/json
 * never, so the check keeps web pages from posting to the service.
 */
export function mediaType(req: IncomingMessage): string {
  const value = req.headers['content-type']
  if (value === undefined) return ''
  if (value === 'application/json') return value
  const semi = value.indexOf(';')
  return (semi < 0 ? value : value.slice(0, semi)).trim().toLowerCase()
}

/** A JSON endpoint's body type check: 415 for anything but application/json (see mediaType). */
export function expectJson(req: IncomingMessage, what: string): void {
  const type = mediaType(req)
  if (type !== 'application/json')
    throw new HttpError(
      415,
      'unsupported_media_type',
      `${what}: expected Content-Type application/json, got ${type === '' ? 'none' : JSON.stringify(type.slice(0, 80))}`,
    )
}

/** A request's body, refused past maxBody (413) whether or not it declared its length. */
export function readBody(req: IncomingMessage, maxBody: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'])
    if (declared > maxBody) {
      reject(new HttpError(413, 'body_too_large', `request body: expected at most ${maxBody} bytes, got ${declared}`))
      return
    }
    const chunks: Buffer[] = []
    let size = 0
    let failed = false
    req.on('data', (chunk: Buffer) => {
      if (failed) return
      size += chunk.length
      if (size > maxBody) {
        failed = true
        reject(new HttpError(413, 'body_too_large', `request body: expected at most ${maxBody} bytes, got more`))
        return
      }
      chunks.push(chunk)
    })
    req.on('end', () => {
      if (!failed) resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size))
    })
    req.on('error', (error) => {
      if (!failed) reject(badRequest(`request body: ${error.message}`))
    })
  })
}

/** A JSON body: kt's one JSON reader refuses nesting beyond MAX_JSON_DEPTH before anything recursive walks the value (its InputError answers 400). */
export function parseJson(body: Buffer, what: string): unknown {
  if (body.length === 0) throw badRequest(`${what}: expected a JSON body, got nothing`)
  return parseJsonText(what, body.toString('utf8'), {expected: 'JSON'})
}

/** A route's answer: a JSON body, or a text with its content type (default the Prometheus text format). */
export interface Answer {
  status: number
  body: unknown
  text?: string
  type?: string
}
