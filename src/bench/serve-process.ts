/**
 * `kt online serve` as a child process (for the bench, the kill -9 campaign and the tests): started
 * through the real CLI entry, its URL read from the "listening on" line, its stderr kept (one JSON
 * line per error).
 */
import {spawn, type ChildProcess} from 'node:child_process'
import {join} from 'node:path'
import {packageRoot} from '../util/paths.js'

/** How long a server may take to print its "listening on" line (oclif start-up under load included). */
const SERVER_START_TIMEOUT_MS = 30_000

export interface ServerProcess {
  child: ChildProcess
  port: number
  url: string
  /** Lines the server wrote to stderr so far. */
  stderrLines: string[]
  /** Resolves with the exit code or signal once the process has ended. */
  exited: Promise<{code: number | null; signal: NodeJS.Signals | null}>
}

/** Starts `kt online serve --port 0 <args>`; resolves once it listens. */
export function startServerProcess(args: string[], env: NodeJS.ProcessEnv = {}): Promise<ServerProcess> {
  const childEnv: NodeJS.ProcessEnv = {...process.env, KT_NO_PROGRESS: '1', ...env}
  // under vitest, NODE_ENV=test makes oclif load src/ through tsx: run the built CLI as users do
  delete childEnv.NODE_ENV
  const child = spawn(
    process.execPath,
    [join(packageRoot, 'bin', 'kt.js'), 'online', 'serve', '--port', '0', ...args],
    {stdio: ['ignore', 'pipe', 'pipe'], env: childEnv},
  )
  const stderrLines: string[] = []
  let errBuffer = ''
  child.stderr!.on('data', (chunk: Buffer) => {
    errBuffer += chunk.toString()
    const lines = errBuffer.split('\n')
    errBuffer = lines.pop()!
    stderrLines.push(...lines)
  })
  const exited = new Promise<{code: number | null; signal: NodeJS.Signals | null}>((resolve) =>
    child.on('exit', (code, signal) => resolve({code, signal})),
  )
  return new Promise((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`kt online serve did not start within ${SERVER_START_TIMEOUT_MS} ms: ${stderrLines.join(' ')}`))
    }, SERVER_START_TIMEOUT_MS)
    const onData = (chunk: Buffer): void => {
      out += chunk.toString()
      const m = /listening on (http:\/\/[^\s]+:(\d+))/.exec(out)
      if (m) {
        clearTimeout(timer)
        child.stdout!.off('data', onData)
        child.stdout!.resume()
        resolve({child, port: Number(m[2]), url: m[1], stderrLines, exited})
      }
    }
    child.stdout!.on('data', onData)
    void exited.then(({code, signal}) => {
      clearTimeout(timer)
      reject(
        new Error(
          `kt online serve exited (${code ?? signal}) before listening: ${[...stderrLines, errBuffer].join(' ').slice(0, 500)}`,
        ),
      )
    })
  })
}

/** Sends `signal` and waits for the process to end. */
export async function stopServerProcess(
  server: ServerProcess,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<{code: number | null; signal: NodeJS.Signals | null}> {
  if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill(signal)
  return server.exited
}
