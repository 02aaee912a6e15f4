import {Flags} from '@oclif/core'
import {KtCommand} from '../cli/base.js'
import {DEFAULT_TARGET_ROOT} from './deploy.js'

export default class Rollback extends KtCommand {
  static override summary = 'Restore the profile that the last deploy replaced.'
  static override description = 'Pops the newest profile from TARGET/history/ and makes it active again (active.json, active.env, active.sh).'
  static override examples = ['<%= config.bin %> rollback', '<%= config.bin %> rollback --space retrieval', '<%= config.bin %> rollback --target /srv/agent/importance --json']
  static override flags = {
    space: Flags.string({description: 'Parameter space whose default folder to use (reports/deployed/<space>); the folder\'s own active profile decides how it is read.', options: ['importance', 'retrieval'], default: 'importance'}),
    target: Flags.string({description: 'Deployment folder (default reports/deployed/<space>).'}),
    engine: Flags.string({description: 'The engine file (kt_engine: 1) whose profiles the folder holds (default folder reports/deployed/engine-<name>).'}),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(Rollback)
    const {rollback} = await import('../deploy/target.js')
    const {spaceById, spaceOfProfileFile} = await import('../deploy/spaces.js')
    const {existsSync} = await import('node:fs')
    const {join} = await import('node:path')
    const engineSpace = flags.engine ? (await import('../engines/file.js')).loadEngineFile(flags.engine).space : undefined
    const target = flags.target ?? `${DEFAULT_TARGET_ROOT}/${engineSpace ? engineSpace.id.replace(/[^A-Za-z0-9._-]+/g, '-') : flags.space}`
    // the deployment itself says which space it holds; --space only picks the default folder
    const active = join(target, 'active.json')
    const space = engineSpace ?? (existsSync(active) ? spaceOfProfileFile(active) : spaceById(flags.space))
    const outcome = rollback(space, target)
    this.log(`rolled back to ${outcome.active} in ${target}/active.env (${outcome.history} older profile(s) left)`)
    return {target, space: space.id, ...outcome}
  }
}
