/**
 * SIGINT and SIGTERM for a command that stops cleanly (kt search, kt worker): the first signal
 * aborts `signal`; the command finishes what it stores and exits with `exitCode()` (README "Exit
 * codes": 130 after SIGINT, 143 after SIGTERM, as shells report 128 + the signal's number).
 */
import {EXIT_INTERRUPTED} from '../util/errors.js'
import {descendantPids} from '../util/proc.js'

/** Exit code after SIGTERM (128 + 15). */
const EXIT_TERMINATED = 143

export interface Interrupt {
  readonly signal: AbortSignal
  /** 130 or 143 by the signal received; EXIT_INTERRUPTED when the stop came otherwise. */
  exitCode(): number
  /** Stops listening (call in finally). */
  dispose(): void
}

export function listenForInterrupt(): Interrupt {
  const controller = new AbortController()
  let received: NodeJS.Signals | undefined
  const stop = (name: NodeJS.Signals): void => {
    received ??= name
    controller.abort()
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  return {
    signal: controller.signal,
    exitCode: () => (received === 'SIGTERM' ? EXIT_TERMINATED : EXIT_INTERRUPTED),
    dispose: () => {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
    },
  }
}

/**
 * Every command's default (KtCommand.init): a SIGINT or SIGTERM that no handler of the command
 * takes (none listens, or a second signal after the first) ends kt at once with 130 / 143, after
 * sending SIGTERM to every process kt started, so that no server, engine or database it started
 * outlives it.
 */
export function exitOnSignal(): void {
  for (const name of ['SIGINT', 'SIGTERM'] as const)
    process.on(name, () => {
      if (process.listenerCount(name) > 1) return
      for (const pid of descendantPids(process.pid))
        try {
          process.kill(pid, 'SIGTERM')
        } catch {
          // gone already
        }
      process.exit(name === 'SIGTERM' ? EXIT_TERMINATED : EXIT_INTERRUPTED)
    })
}
