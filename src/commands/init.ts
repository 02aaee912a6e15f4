import {Flags} from '@oclif/core'
import {KtCommand} from '../cli/base.js'

export default class Init extends KtCommand {
  static override summary =
    'Start tuning your own engine: write a working engine skeleton, its engine file, a plan and next steps into the current folder.'
  static override description =
    "Writes, into the current folder and never over an existing file (one line, exit 2, nothing written), a small memory engine (BM25 + recency, from kt's examples) behind the chosen protocol: command (one process per trial), http (a server you start; one POST per trial) or retrieval-service (kt drives the benchmark on memory.json, a small bundled dataset). Also engine.json (two example parameters, tiers, objectives, profiles), plan.json for kt run (retrieval-service) and KT-README.md with the next steps. The files run as written: kt search --engine engine.json (and kt eval --engine for a retrieval service) succeed straight away."
  static override examples = [
    {
      description: 'A Python retrieval service in a new folder, then its defaults scored.',
      command:
        'mkdir -p reports/init-py && cd reports/init-py && <%= config.bin %> init --engine retrieval-service --lang python --name my-engine && <%= config.bin %> eval --engine engine.json --data memory.json',
    },
    {
      description: 'A Node engine run once per trial, tuned with a budget of 2.',
      command:
        'mkdir -p reports/init-node && cd reports/init-node && <%= config.bin %> init --engine command --lang node && <%= config.bin %> search --engine engine.json --budget 2',
    },
  ]
  static override flags = {
    engine: Flags.string({
      description: 'How kt evaluates the engine: command, http or retrieval-service.',
      options: ['command', 'http', 'retrieval-service'],
      required: true,
    }),
    lang: Flags.string({description: 'The language of the skeleton.', options: ['python', 'node'], default: 'python'}),
    name: Flags.string({description: "The engine's name (studies and reports carry it).", default: 'my-engine'}),
    port: Flags.integer({description: "The port of the http kind's server.", default: 8765, min: 1, max: 65535}),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(Init)
    const {initEngine} = await import('../engines/scaffold.js')
    const written = initEngine({
      kind: flags.engine as import('../engines/scaffold.js').EngineKind,
      lang: flags.lang as import('../engines/scaffold.js').EngineLang,
      name: flags.name,
      dir: process.cwd(),
      port: flags.port,
    })
    if (!this.jsonEnabled()) this.log(`wrote ${written.join(', ')}; next steps in KT-README.md`)
    return {written}
  }
}
