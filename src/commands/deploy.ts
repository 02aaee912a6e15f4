import {Args, Flags} from '@oclif/core'
import {KtCommand} from '../cli/base.js'

export const DEFAULT_TARGET = 'reports/deployed'

export default class Deploy extends KtCommand {
  static override summary = 'Deploy a profile: make it the active one, keeping the replaced profile for rollback.'
  static override description = 'Validates the profile (weights in [0, 1] summing to 1 within 1e-9, every parameter in range), then writes TARGET/active.json, active.env and active.sh; the profile it replaces goes to TARGET/history/. Undo with `kt rollback`.'
  static override examples = ['<%= config.bin %> deploy reports/seed42-plan0123abcd4567/profiles/optimum.json', '<%= config.bin %> deploy profile.json --target /srv/agent/importance --json']
  static override args = {profile: Args.string({description: 'profile JSON written by phase 6', required: true})}
  static override flags = {target: Flags.string({description: 'Deployment folder.', default: DEFAULT_TARGET})}

  async run(): Promise<unknown> {
    const {args, flags} = await this.parse(Deploy)
    const {deployProfile} = await import('../deploy/target.js')
    const {IMPORTANCE_SPACE} = await import('../engine/importance/space.js')
    const outcome = deployProfile(IMPORTANCE_SPACE, args.profile, flags.target)
    this.log(`deployed ${outcome.active} to ${flags.target}/active.env${outcome.previous ? ` (replaced ${outcome.previous}; kt rollback restores it)` : ''}`)
    return {target: flags.target, ...outcome}
  }
}
