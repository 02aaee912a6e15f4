import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'
import {DEFAULT_REGISTRY} from '../../rank/defaults.js'

export default class RerankRollback extends KtCommand {
  static override summary = 'Roll the reranker back to the previous kept version.'
  static override description =
    'The version deployed before the current one becomes current again; the rolled-back version is removed from the registry. Fails (exit 2) when there is no earlier version.'
  static override examples = ['<%= config.bin %> rerank rollback --registry reports/reranker-small']
  static override flags = {
    registry: Flags.string({description: 'Model registry folder.', default: DEFAULT_REGISTRY}),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(RerankRollback)
    const {rollback} = await import('../../rank/registry.js')
    const outcome = rollback(flags.registry)
    if (!this.jsonEnabled()) this.log(`rolled back: ${outcome.removed} removed, current is ${outcome.current}`)
    return outcome
  }
}
