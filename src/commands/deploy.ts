import {Args, Flags} from '@oclif/core'
import {KtCommand} from '../cli/base.js'

/** Default deployment folder; one per parameter space, so importance and retrieval profiles live side by side. */
export const DEFAULT_TARGET_ROOT = 'reports/deployed'

export default class Deploy extends KtCommand {
  static override summary = 'Deploy a profile: make it the active one, keeping the replaced profile for rollback.'
  static override description = 'Validates the profile against its parameter space (importance or retrieval: weights in [0, 1] summing to 1 within 1e-9, every parameter in range), then writes TARGET/active.json, active.env and active.sh; the profile it replaces goes to TARGET/history/. Undo with `kt rollback`. The default TARGET is reports/deployed/<space>.'
  static override examples = [
    {
      description: "After tuning the Python example (kt search --engine examples/python-engine/engine.json ... --out /tmp/kt-py): its profile, in the engine's own variable names.",
      command: '<%= config.bin %> deploy /tmp/kt-py/profiles/high-throughput.json --engine examples/python-engine/engine.json --target /tmp/kt-py/deployed',
    },
    '<%= config.bin %> deploy reports/seed42-plan9b926bf7b784/profiles/retrieval-high-throughput.json',
    '<%= config.bin %> deploy reports/seed42-plan9b926bf7b784/profiles/optimum.json --force --target /srv/agent/importance --json',
  ]
  static override args = {profile: Args.string({description: 'profile JSON written by phase 6', required: true})}
  static override flags = {
    target: Flags.string({description: 'Deployment folder (default reports/deployed/<space of the profile>).'}),
    engine: Flags.string({description: 'The engine file (kt_engine: 1) of a profile written by kt search --engine: its parameters and their env names.'}),
    force: Flags.boolean({description: 'Deploy even though the profile\'s run failed its validation.', default: false}),
  }

  async run(): Promise<unknown> {
    const {args, flags} = await this.parse(Deploy)
    const {deployProfile} = await import('../deploy/target.js')
    const {spaceOfProfileFile} = await import('../deploy/spaces.js')
    const space = flags.engine ? (await import('../engines/file.js')).loadEngineFile(flags.engine).space : spaceOfProfileFile(args.profile)
    const target = flags.target ?? `${DEFAULT_TARGET_ROOT}/${space.id.replace(/[^A-Za-z0-9._-]+/g, '-')}`
    const outcome = deployProfile(space, args.profile, target, {force: flags.force})
    this.log(`deployed ${outcome.active} to ${target}/active.env${outcome.previous ? ` (replaced ${outcome.previous}; kt rollback --target ${target} restores it)` : ''}`)
    return {target, space: space.id, ...outcome}
  }
}
