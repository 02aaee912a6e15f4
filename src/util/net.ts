/**
 * Loopback ports: the one free-port picker every server kt or its tests start uses (PostgreSQL,
 * engine services, the dashboard and HTTP tests), and the port it never hands out.
 */
import {createServer} from 'node:net'

/**
 * The default port of `kt db start` (one above PostgreSQL's own 5432, so a system server is left
 * alone). The `--help` examples and README name it; freePort never returns it, so a server a test
 * or benchmark starts can never take it from `kt db start` (test/cli/examples.ts runs those).
 */
export const DEFAULT_DB_PORT = 5433

/**
 * A free TCP port on `host` (the OS picks it from its ephemeral range, 32768-60999 by default but
 * configurable, and it is released before the caller binds it), never DEFAULT_DB_PORT.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (;;) {
    const port = await anyFreePort(host)
    if (port !== DEFAULT_DB_PORT) return port
  }
}

function anyFreePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.once('error', reject)
    server.listen(0, host, () => {
      const address = server.address()
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      )
    })
  })
}
