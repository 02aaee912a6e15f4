import {Flags} from '@oclif/core'
import {KtCommand} from '../cli/base.js'
import {DEFAULT_TARGET} from './deploy.js'

export default class Rollback extends KtCommand {
  static override summary = 'Restore the profile that the last deploy replaced.'
  static override description = 'Pops the newest profile from TARGET/history/ and makes it active again (active.json, active.env, active.sh).'
  static override examples = ['<%= config.bin %> rollback', '<%= config.bin %> rollback --target /srv/agent/importance --json']
  static override flags = {target: Flags.string({description: 'Deployment folder.', default: DEFAULT_TARGET})}

  async run(): Promise<unknown> {
    const {flags} = await this.parse(Rollback)
    const {rollback} = await import('../deploy/target.js')
    const {IMPORTANCE_SPACE} = await import('../engine/importance/space.js')
    const outcome = rollback(IMPORTANCE_SPACE, flags.target)
    this.log(`rolled back to ${outcome.active} in ${flags.target}/active.env (${outcome.history} older profile(s) left)`)
    return {target: flags.target, ...outcome}
  }
}
