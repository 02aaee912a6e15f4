import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'
import {DEFAULT_REGISTRY} from '../../rank/defaults.js'

export default class RerankList extends KtCommand {
  static override summary = 'List the reranker versions kept in the model registry and which one is current.'
  static override description =
    'Every kept model file is read and checked (JSON, model structure, the number of trees the index lists); a broken file is marked in the table, reported in one line on stderr, and makes the exit code 1.'
  static override examples = [
    '<%= config.bin %> rerank list',
    '<%= config.bin %> rerank list --registry reports/reranker-small --json',
  ]
  static override flags = {
    registry: Flags.string({description: 'Model registry folder.', default: DEFAULT_REGISTRY}),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(RerankList)
    const {readConsistent, versionProblem} = await import('../../rank/registry.js')
    const {formatMetric: fmt, table} = await import('../../rank/table.js')
    // lock-free: read again if a deploy or rollback replaced the index meanwhile
    const {index, versions} = readConsistent(flags.registry, (index) => ({
      index,
      versions: index.versions.map((v) => {
        const problem = versionProblem(flags.registry, v)
        return {...v, file_ok: problem === undefined, ...(problem === undefined ? {} : {problem})}
      }),
    }))
    if (!this.jsonEnabled()) {
      if (versions.length === 0) this.log(`no reranker deployed in ${flags.registry}`)
      else {
        const rows = [...versions]
          .reverse()
          .map((v) => [
            v.id === index.current ? `${v.id} *` : v.id,
            fmt(v.metrics.valid?.['ndcg@10']),
            fmt(v.metrics.test?.['ndcg@10']),
            String(v.trees),
            v.file_ok ? 'ok' : 'BROKEN',
            v.deployed_at,
            v.source,
          ])
        this.log(
          table(
            ['version', 'valid NDCG@10', 'test NDCG@10', 'trees', 'file', 'deployed at', 'from'],
            rows,
            [0, 4, 5, 6],
          ),
        )
        this.log('* current')
      }
    }
    // one line per broken file, on stderr even under --json (whose versions carry it as `problem`)
    for (const v of versions) if (v.problem !== undefined) process.stderr.write(`kt: ${v.problem}\n`)
    if (versions.some((v) => !v.file_ok)) process.exitCode = 1
    return {registry: flags.registry, current: index.current, versions}
  }
}
