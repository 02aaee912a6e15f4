import {Command, Flags, Errors, Interfaces} from '@oclif/core'
import {refuseNonFolder} from '../util/fs.js'
import {failureLine} from './failure.js'
import {redactDeep, redactPasswords} from '../util/redact.js'
import {exitOnSignal} from './interrupt.js'

// oclif's FlagOutput and ArgOutput, which its package does not export
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type FlagOutput = {[name: string]: any}
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type ArgOutput = {[name: string]: any}

/**
 * Shared behaviour of every kt command: a `--json` flag (oclif prints run()'s return value),
 * every failure as one line on stderr with its exit code (2 bad input, 3 a kt bug; the stack only
 * with KT_DEBUG=1), and a progress spinner on stderr that stays silent under --json.
 */
export abstract class KtCommand extends Command {
  static override enableJsonFlag = true

  override async init(): Promise<void> {
    await super.init()
    exitOnSignal()
  }

  /** Every command's parse, plus the one rule all `--out` flags share: a file there is refused (exit 2). */
  protected override async parse<F extends FlagOutput, B extends FlagOutput, A extends ArgOutput>(
    options?: Interfaces.Input<F, B, A>,
    argv?: string[],
  ): Promise<Interfaces.ParserOutput<F, B, A>> {
    const parsed = await super.parse(options, argv)
    const out = (parsed.flags as Record<string, unknown>).out
    if (typeof out === 'string') refuseNonFolder(out)
    return parsed
  }

  /** Every printed line without URL passwords (redactPasswords, the one rule). */
  override log(message = '', ...args: unknown[]): void {
    super.log(redactPasswords(message), ...args)
  }

  /** The --json output without URL passwords. */
  override toSuccessJson(result: unknown): unknown {
    return redactDeep(result)
  }

  protected spinner(text: string): Progress {
    return new Progress(text, this.jsonEnabled())
  }

  protected override async catch(error: Error & {exitCode?: number}): Promise<unknown> {
    // this.exit(n) (also from inside run()) is how oclif ends a command: not a failure
    if (error instanceof Errors.ExitError) throw error
    const flagNames = Object.keys((this.constructor as typeof Command).flags ?? {})
    const {line, exitCode} = failureLine(error, flagNames)
    process.stderr.write(`kt: ${line}\n`)
    if (process.env.KT_DEBUG === '1' && error?.stack) process.stderr.write(`${error.stack}\n`)
    this.exit(exitCode)
  }
}

/** Shortest gap between two plain progress lines (terminals without a width get lines, not a spinner). */
const LINE_PROGRESS_INTERVAL_MS = 2000

type Spinner = {text: string; succeed(t?: string): void; fail(t?: string): void; stop(): void}

/**
 * Progress on stderr via ora, loaded lazily so `kt --help` stays fast. A terminal that reports
 * 0 columns (a pseudo-terminal nobody sized, e.g. under `script`) gets plain lines at most every
 * LINE_PROGRESS_INTERVAL_MS instead: ora divides by the width to count the lines it must clear,
 * and with 0 it clears forever.
 */
export class Progress {
  private spinnerPromise: Promise<Spinner | undefined>
  private lastLineAt = -Infinity
  private readonly lines: boolean

  constructor(text: string, silent: boolean) {
    // a spinner only where someone watches: a terminal, not --json, not KT_NO_PROGRESS
    const watched = !silent && !process.env.KT_NO_PROGRESS && process.stderr.isTTY === true
    this.lines = watched && !((process.stderr.columns ?? 0) > 0)
    this.spinnerPromise =
      !watched || this.lines
        ? Promise.resolve(undefined)
        : import('ora').then(({default: ora}) => ora({text, stream: process.stderr}).start())
    if (this.lines) this.line(text)
  }

  private line(text: string, force = false): void {
    const now = Date.now()
    if (!force && now - this.lastLineAt < LINE_PROGRESS_INTERVAL_MS) return
    this.lastLineAt = now
    process.stderr.write(`${text}\n`)
  }

  async update(text: string): Promise<void> {
    if (this.lines) return this.line(text)
    const s = await this.spinnerPromise
    if (s) s.text = text
  }

  async succeed(text?: string): Promise<void> {
    if (this.lines) return text === undefined ? undefined : this.line(text, true)
    const s = await this.spinnerPromise
    s?.succeed(text)
  }

  /** Stops the spinner and clears its line (the error message that follows says what failed). */
  async fail(): Promise<void> {
    const s = await this.spinnerPromise
    s?.stop()
  }
}

/** What every `--out` help text starts with (test/cli/out-folder.test.ts checks each command's). */
export const OUT_FLAG_PREFIX = 'Output folder, created if missing (a file there is refused, exit 2)'

/**
 * The one `--out` flag: always a folder (never a file), with the fixed names written inside it
 * listed in `contents`. KtCommand.parse refuses an existing file; write through outFolder()
 * (src/util/fs.ts) and writeFileAtomic.
 */
export function outFlag(contents: string, options: {required: true}): Interfaces.OptionFlag<string>
export function outFlag(contents: string, options: {default: string}): Interfaces.OptionFlag<string>
export function outFlag(contents: string): Interfaces.OptionFlag<string | undefined>
export function outFlag(
  contents: string,
  options: {required?: true; default?: string} = {},
): Interfaces.OptionFlag<string | undefined> {
  return Flags.string({description: `${OUT_FLAG_PREFIX}: ${contents}`, ...options}) as Interfaces.OptionFlag<
    string | undefined
  >
}

export const commonFlags = {
  seed: Flags.integer({
    description: 'Seed for every random choice (same seed and inputs give the same report).',
    default: 42,
  }),
  out: outFlag(
    'report.json, report.md, the charts, the profiles and the phase checkpoints (default reports/<run-id>/).',
  ),
  plan: Flags.string({description: 'Study plan JSON (default phases/plan.default.json).'}),
}
