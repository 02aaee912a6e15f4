/**
 * The flags many kt commands declare alike, and the one end of a run(): text for a person, or the
 * --json value. A command adopts them in place of a hand-written Flags.* of the same meaning:
 *
 *   static override flags = {seed: seedFlag('Seed of the split.'), storage: storageFlag({required: true})}
 *   async run() { ...; return reply(this, lines, json) }
 *
 * `--json` itself comes from KtCommand (src/cli/base.ts), and so does `--out` (outFlag). Each
 * helper takes the command's own description where commands word it differently; the defaults
 * here are the wording most commands share. `this.log` prints nothing under --json (oclif), so an
 * `if (!this.jsonEnabled())` around printing is needed only to skip costly text.
 */
import {Flags, type Interfaces} from '@oclif/core'
import type {KtCommand} from './base.js'
import {DEFAULT_SEED} from '../util/rng.js'
import {DEFAULT_STORAGE} from '../study/model.js'
import {DEFAULT_REGISTRY} from '../rank/defaults.js'

/** Highest TCP port number. */
const MAX_PORT = 65535

/** `--seed`: every random choice of the command, default DEFAULT_SEED. */
export function seedFlag(description: string) {
  return Flags.integer({description, default: DEFAULT_SEED})
}

/** `--port` of a server kt starts or reaches (0 allowed only where it means "any free port"). */
export function portFlag(description: string, defaultPort: number, min = 1) {
  return Flags.integer({description, default: defaultPort, min, max: MAX_PORT})
}

/** `--repetitions`/`--repeats` of a benchmark: timed passes, the median reported. */
export function repetitionsFlag(defaultCount: number, description = 'Timed repetitions (the median is reported).') {
  return Flags.integer({description, default: defaultCount, min: 1})
}

const STORAGE_DESCRIPTION =
  'Study storage: a SQLite file, or postgresql://user@host:port/db (password from PGPASSWORD or ~/.pgpass).'

/** `--storage`: a study store, default DEFAULT_STORAGE unless required. */
export function storageFlag(options: {description?: string; required: true}): Interfaces.OptionFlag<string>
export function storageFlag(options?: {description?: string}): Interfaces.OptionFlag<string>
export function storageFlag(options: {description?: string; required?: true} = {}): Interfaces.OptionFlag<string> {
  const description = options.description ?? STORAGE_DESCRIPTION
  return options.required
    ? Flags.string({description, required: true})
    : Flags.string({description, default: DEFAULT_STORAGE})
}

const DATA_DESCRIPTION = 'Dataset: LoCoMo JSON (.json), JSONL turns (.jsonl) or CSV turns (.csv).'

/** `--data`: a memory dataset (src/data/conversations reads all three formats). */
export function dataFlag(options: {description?: string; required: true}): Interfaces.OptionFlag<string>
export function dataFlag(options?: {description?: string}): Interfaces.OptionFlag<string | undefined>
export function dataFlag(
  options: {description?: string; required?: true} = {},
): Interfaces.OptionFlag<string | undefined> {
  const description = options.description ?? DATA_DESCRIPTION
  return options.required ? Flags.string({description, required: true}) : Flags.string({description})
}

/** `--format` of a memory dataset, when its extension does not say. */
export function dataFormatFlag(description = 'Input format (default: from the file extension).') {
  return Flags.string({description, options: ['locomo', 'jsonl', 'csv']})
}

/** `--registry`: the reranker's model registry folder, default DEFAULT_REGISTRY. */
export function registryFlag(description = 'Model registry folder.') {
  return Flags.string({description, default: DEFAULT_REGISTRY})
}

/**
 * The end of a run(): `text` (a line or lines) printed, and `json` returned, which oclif prints
 * under --json instead (KtCommand.log is silent then; KtCommand redacts both).
 */
export function reply<T>(command: KtCommand, text: string | readonly string[], json: T): T {
  for (const line of typeof text === 'string' ? [text] : text) command.log(line)
  return json
}
