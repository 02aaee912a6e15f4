/**
 * The one rule of kt's HTTP servers (kt online serve, kt dashboard) about who may reach them: without
 * a token a server binds loopback only and answers only requests that name loopback in their Host
 * header, because a web page on the operator's machine can still reach a loopback port; a page that
 * rebinds its own DNS name to 127.0.0.1 sends that name as Host (DNS rebinding) and is refused.
 */
import {timingSafeEqual} from 'node:crypto'
import {InputError} from './errors.js'

/** Tokens shorter than this are refused: a guessable token guards nothing. */
const MIN_TOKEN_CHARS = 16

/** Whether `host` (a bind address) only accepts connections from this machine. */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
}

/** Whether a Host header names this machine's loopback (localhost, 127.x.x.x, [::1], with or without a port). */
function isLoopbackHostHeader(value: string): boolean {
  const m = /^(\[[^\]]*\]|[^:]*)(?::\d{1,5})?$/.exec(value)
  if (!m) return false
  const name = m[1].toLowerCase()
  return name === '[::1]' || isLoopback(name)
}

/**
 * Refuses (InputError on --host or --token) a bind beyond loopback without a token, and a token
 * shorter than MIN_TOKEN_CHARS.
 */
export function checkBind(host: string, token: string | undefined): void {
  if (!isLoopback(host) && !token)
    throw new InputError(
      '--host',
      `a loopback address (127.0.0.1, ::1, localhost), or a --token for ${host}`,
      'no token',
    )
  if (token !== undefined && token.length < MIN_TOKEN_CHARS)
    throw new InputError('--token', `at least ${MIN_TOKEN_CHARS} characters`, `${token.length}`)
}

/**
 * Why a request's Host header is refused by a server without a token (its one-line message), or
 * undefined when it names loopback. A request without any Host (HTTP/1.0) is refused too: the rule
 * is "loopback names only", not "any name but a foreign one".
 */
export function hostRefusal(hostHeader: string | undefined): string | undefined {
  if (hostHeader !== undefined && isLoopbackHostHeader(hostHeader)) return undefined
  return `Host: expected a loopback name (localhost, 127.0.0.1, [::1]; a server with --token takes any), got ${hostHeader === undefined ? 'no Host header' : JSON.stringify(hostHeader.slice(0, 100))}`
}

/** Whether `given` equals the server's token (compared in constant time: the comparison leaks no prefix). */
export function tokenMatches(given: string | undefined, token: string): boolean {
  if (given === undefined) return false
  const a = Buffer.from(given)
  const b = Buffer.from(token)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** The token of an `Authorization: Bearer <token>` header (the scheme is case-insensitive, RFC 7235 2.1), or undefined. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const m = /^bearer +(.*)$/i.exec(authorization ?? '')
  return m ? m[1] : undefined
}
