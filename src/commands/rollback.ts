import {Flags} from '@oclif/core'
import {KtCommand} from '../cli/base.js'
import {defaultTarget} from './deploy.js'

export default class Rollback extends KtCommand {
  static override summary = 'Restore the profile that the last deploy replaced.'
  static override description =
    "Pops the newest replaced profile from TARGET's history and makes it active again (active.json, active.env, active.sh), under TARGET/lock; the rollback is recorded in TARGET/index.json. The restored profile is re-checked (schema, space, safe values) before it is written; an engine profile against the engine file recorded when it was deployed (absolute path and table fingerprint; --engine names another)."
  static override examples = [
    {
      description:
        'After the `kt deploy` examples: the importance folder (reports/deployed/importance) goes back from the baseline to the optimum.',
      command: '<%= config.bin %> rollback',
    },
    {
      description: 'The retrieval folder: from the routed profile back to retrieval-high-throughput.',
      command: '<%= config.bin %> rollback --space retrieval',
    },
    {
      description:
        "A folder of an engine's profiles (the Python example's): back to high-throughput, in its own variable names.",
      command:
        '<%= config.bin %> rollback --target reports/kt-py/deployed --engine examples/python-engine/engine.json --json',
    },
  ]
  static override flags = {
    space: Flags.string({
      description: 'Parameter space whose default folder to use (reports/deployed/<space>).',
      options: ['importance', 'retrieval'],
      default: 'importance',
    }),
    target: Flags.string({description: 'Deployment folder (default reports/deployed/<space>).'}),
    engine: Flags.string({
      description:
        'The engine file (kt_engine: 1) whose profiles the folder holds (default folder reports/deployed/engine-<name>).',
    }),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(Rollback)
    const {rollback} = await import('../deploy/target.js')
    const engineSpace = flags.engine
      ? (await import('../adapters/file.js')).loadEngineFile(flags.engine).space
      : undefined
    const target = flags.target ?? defaultTarget(engineSpace ? engineSpace.id : flags.space)
    const outcome = rollback(target, {space: engineSpace})
    this.log(`rolled back to ${outcome.active} in ${target}/active.env (${outcome.history} older profile(s) left)`)
    return outcome
  }
}
