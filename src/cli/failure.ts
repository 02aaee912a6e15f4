/**
 * Every way a kt command can fail, as one printable line and an exit code: a user's bad input
 * (InputError, oclif's flag and argument errors) exits 2 with a "did you mean" where a known
 * word is close; an explicit `this.error(msg, {exit})` keeps its code; anything else is a kt bug,
 * exit 3, never a stack trace (KT_DEBUG=1 prints it).
 */
import {Errors} from '@oclif/core'
import {
  AcceptanceError,
  EXIT_CRITERION,
  EXIT_INPUT,
  EXIT_INTERNAL,
  EXIT_INTERRUPTED,
  InputError,
  InterruptedError,
  oneLine,
} from '../util/errors.js'
import {closest} from '../util/suggest.js'
import {redactPasswords} from '../util/redact.js'

/** ANSI colour codes oclif puts in some messages. */

const ANSI = /\u001b\[[0-9;]*m/g

/** The one printable line of a failure and its exit code, with every URL password redacted. */
export function failureLine(error: unknown, flagNames: readonly string[] = []): {line: string; exitCode: number} {
  const {line, exitCode} = unredactedFailureLine(error, flagNames)
  return {line: redactPasswords(line), exitCode}
}

function unredactedFailureLine(error: unknown, flagNames: readonly string[]): {line: string; exitCode: number} {
  if (error instanceof InputError) return {line: oneLine(error.message), exitCode: EXIT_INPUT}
  // a gate or acceptance criterion said no (kt deploy): exit 1, the reason on one line
  if (error instanceof AcceptanceError) return {line: oneLine(error.message), exitCode: EXIT_CRITERION}
  if (error instanceof InterruptedError) return {line: oneLine(error.message), exitCode: EXIT_INTERRUPTED}
  if (error instanceof Errors.CLIError) {
    const message = error.message.replace(ANSI, '')
    const parts = message
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !/^See more help/.test(l) && !/^The following errors? occurred:?$/.test(l))
    let line = parts.join(' ')
    const nonexistent = (error as {flags?: unknown}).flags
    if (/^Nonexistent flags?:/.test(line) && Array.isArray(nonexistent)) {
      line = `unknown flag${nonexistent.length === 1 ? '' : 's'} ${nonexistent.map((f) => `${f}${flagSuggestion(String(f), flagNames)}`).join(', ')}`
    }
    const choice = /^Expected --([\w-]+)=(.*) to be one of: (.*)$/s.exec(line)
    if (choice) {
      const choices = choice[3].split(',').map((c) => c.trim())
      const near = closest(choice[2], choices)
      line = `--${choice[1]}: expected one of ${choices.join(', ')}, got ${JSON.stringify(choice[2])}${near ? ` (did you mean "${near}"?)` : ''}`
    }
    const exit = (error as {oclif?: {exit?: number | false}}).oclif?.exit
    return {line: oneLine(line), exitCode: typeof exit === 'number' ? exit : EXIT_INPUT}
  }
  const e = error as {name?: unknown; message?: unknown} | null | undefined
  const text =
    e && typeof e === 'object' && typeof e.message === 'string'
      ? `${String(e.name ?? 'Error')}: ${e.message}`
      : String(error)
  return {line: oneLine(`internal error (a bug in kt; KT_DEBUG=1 prints the stack): ${text}`), exitCode: EXIT_INTERNAL}
}

function flagSuggestion(typed: string, flagNames: readonly string[]): string {
  const name = typed.replace(/^-+/, '').replace(/=.*$/, '')
  const near = closest(name, flagNames)
  return near ? ` (did you mean --${near}?)` : ''
}
