/** What the in-process server tests share: a JSON call over fetch, and a server whose log lines are kept. */
import {startServer, type RunningServer, type ServeOptions} from '../../src/online/serve/server.js'

export interface Answer {
  status: number
  json: any
  headers: Headers
}

/** One request; a body is sent as JSON (Content-Type application/json) unless it is already a string. */
export async function call(
  s: RunningServer,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const typed = body === undefined ? headers : {'content-type': 'application/json', ...headers}
  const r = await fetch(`${s.url}${path}`, {
    method,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    headers: typed,
  })
  const text = await r.text()
  return {status: r.status, json: text.startsWith('{') ? JSON.parse(text) : text, headers: r.headers}
}

/** A server over `dir` whose log lines are collected in `lines`. */
export async function serve(lines: string[], options: Partial<ServeOptions> & {dir: string}): Promise<RunningServer> {
  return startServer({port: 0, log: (line) => lines.push(line), ...options})
}
