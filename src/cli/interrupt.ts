/**
 * SIGINT and SIGTERM for a command that stops cleanly (kt search, kt worker): the first signal
 * aborts `signal`; the command finishes what it stores and exits with `exitCode()` (README "Exit
 * codes": 130 after SIGINT, 143 after SIGTERM, as shells report 128 + the signal's number).
 */
import {EXIT_INTERRUPTED} from '../util/errors.js'

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
