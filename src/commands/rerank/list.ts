import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'
import {DEFAULT_REGISTRY} from '../../rank/defaults.js'

export default class RerankList extends KtCommand {
  static override summary = 'List the reranker versions kept in the model registry and which one is current.'
  static override examples = ['<%= config.bin %> rerank list', '<%= config.bin %> rerank list --registry /tmp/reranker --json']
  static override flags = {
    registry: Flags.string({description: 'Model registry folder.', default: DEFAULT_REGISTRY}),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(RerankList)
    const {readRegistry} = await import('../../rank/registry.js')
    const {table} = await import('../../rank/report.js')
    const index = readRegistry(flags.registry)
    const fmt = (x: number | undefined): string => (x === undefined ? '-' : x.toFixed(4))
    if (!this.jsonEnabled()) {
      if (index.versions.length === 0) this.log(`no reranker deployed in ${flags.registry}`)
      else {
        const rows = [...index.versions].reverse().map((v) => [
          v.id === index.current ? `${v.id} *` : v.id,
          fmt(v.metrics.valid?.['ndcg@10']),
          fmt(v.metrics.test?.['ndcg@10']),
          String(v.trees),
          v.deployed_at,
          v.source,
        ])
        this.log(table(['version', 'valid NDCG@10', 'test NDCG@10', 'trees', 'deployed at', 'from'], rows, [0, 4, 5]))
        this.log('* current')
      }
    }
    return {registry: flags.registry, current: index.current, versions: index.versions}
  }
}
