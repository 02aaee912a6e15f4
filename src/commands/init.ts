import {Flags} from '@oclif/core'
import {KtCommand} from '../cli/base.js'
import {portFlag, reply} from '../cli/flags.js'
import {DEFAULT_INIT_PORT, ENGINE_KINDS, ENGINE_LANGS, initEngine} from '../adapters/scaffold.js'

export default class Init extends KtCommand {
  static override summary =
    'Start tuning your own engine: write a working engine skeleton, its engine file, a plan and next steps into the current folder.'
  static override description =
    "Writes, into the current folder and never over an existing file (one line, exit 2, nothing written), a small memory engine (BM25 + recency, from kt's examples) behind the chosen protocol: command (one process per trial), http (a server you start; one POST per trial) or retrieval-service (kt drives the benchmark on memory.json, a small bundled dataset). Also engine.json (two example parameters, tiers, objectives, profiles), plan.json for kt run --plan plan.json (for command and http engines without data: its verdict is not-validated) and KT-README.md with the next steps. The files run as written: kt search --engine engine.json (and kt eval --engine for a retrieval service) succeed straight away."
  static override examples = [
    {
      description: 'A Python retrieval service in a new empty folder, then its defaults scored.',
      command:
        'cd "$(mktemp -d)" && <%= config.bin %> init --engine retrieval-service --lang python --name my-engine && <%= config.bin %> eval --engine engine.json --data memory.json',
    },
    {
      description: 'A Node engine run once per trial, in a new empty folder, tuned with a budget of 2.',
      command:
        'cd "$(mktemp -d)" && <%= config.bin %> init --engine command --lang node && <%= config.bin %> search --engine engine.json --budget 2',
    },
  ]
  static override flags = {
    engine: Flags.option({
      description: 'How kt evaluates the engine: command, http or retrieval-service.',
      options: ENGINE_KINDS,
      required: true,
    })(),
    lang: Flags.option({description: 'The language of the skeleton.', options: ENGINE_LANGS, default: 'python'})(),
    name: Flags.string({description: "The engine's name (studies and reports carry it).", default: 'my-engine'}),
    port: portFlag("The port of the http kind's server.", DEFAULT_INIT_PORT),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(Init)
    const {engine: kind, lang, name, port} = flags
    const written = initEngine({kind, lang, name, port, dir: process.cwd()})
    return reply(this, `wrote ${written.join(', ')}; next steps in KT-README.md`, {written})
  }
}
