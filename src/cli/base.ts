import {Command, Flags, Errors} from '@oclif/core'
import {AcceptanceError, InputError} from '../util/errors.js'

/**
 * Shared behaviour of every kt command: a `--json` flag (oclif prints run()'s return value),
 * user errors as one line on stderr with exit code 2, and a progress spinner on stderr that
 * stays silent under --json.
 */
export abstract class KtCommand extends Command {
  static override enableJsonFlag = true

  protected spinner(text: string): Progress {
    return new Progress(text, this.jsonEnabled())
  }

  protected override async catch(error: Error & {exitCode?: number}): Promise<unknown> {
    if (error instanceof InputError) {
      process.stderr.write(`kt: ${error.message.replace(/\s*\n\s*/g, ' ')}\n`)
      this.exit(2)
    }
    if (error instanceof AcceptanceError) {
      process.stderr.write(`kt: ${error.message}\n`)
      this.exit(1)
    }
    // oclif's parse errors (unknown flag, bad value, missing argument) span several lines: fold
    // them into one, without the "See more help" hint
    if (error instanceof Errors.CLIError && /Nonexistent flag|Unexpected argument|Expected|Missing .*required|Parsing --|must be|is not one of/i.test(error.message)) {
      const line = error.message.split('\n').map((l) => l.trim()).filter((l) => l && !/^See more help/.test(l)).join(' ')
      process.stderr.write(`kt: ${line}\n`)
      this.exit(2)
    }
    return super.catch(error)
  }
}

/** Progress on stderr via ora, loaded lazily so `kt --help` stays fast. */
export class Progress {
  private spinnerPromise: Promise<{text: string; succeed(t?: string): void; fail(t?: string): void; stop(): void} | undefined>

  constructor(text: string, silent: boolean) {
    // a spinner only where someone watches: a terminal, not --json, not KT_NO_PROGRESS
    this.spinnerPromise = silent || process.env.KT_NO_PROGRESS || !process.stderr.isTTY
      ? Promise.resolve(undefined)
      : import('ora').then(({default: ora}) => ora({text, stream: process.stderr}).start())
  }

  async update(text: string): Promise<void> {
    const s = await this.spinnerPromise
    if (s) s.text = text
  }

  async succeed(text?: string): Promise<void> {
    const s = await this.spinnerPromise
    s?.succeed(text)
  }

  /** Stops the spinner and clears its line (the error message that follows says what failed). */
  async fail(): Promise<void> {
    const s = await this.spinnerPromise
    s?.stop()
  }
}

export const commonFlags = {
  seed: Flags.integer({description: 'Seed for every random choice (same seed and inputs give the same report).', default: 42}),
  out: Flags.string({description: 'Output folder (default reports/<run-id>/).'}),
  plan: Flags.string({description: 'Study plan JSON (default phases/plan.default.json).'}),
}
