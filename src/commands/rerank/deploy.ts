import {Args, Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'
import {DEFAULT_REGISTRY} from '../../rank/defaults.js'

export default class RerankDeploy extends KtCommand {
  static override summary = 'Deploy a trained reranker if its validation NDCG@10 is not worse than the current one\'s.'
  static override description = 'A model written by "kt rerank train --save" becomes the current version only if its validation NDCG@10 is at least the current version\'s; otherwise it is rejected (exit code 1) and the current version stays. By default the NDCG stored with each model is compared; with --valid, both models are re-scored on that file (its columns picked by the model\'s feature names) so the comparison uses the same queries. A model over other feature columns (names or order) than the current one, or without trees, is refused (exit code 2; use another --registry for another feature set). Deploying the current model again changes nothing (exit code 0). The last three versions are kept with their metrics. Writes are atomic. The examples use the models of "kt rerank train"\'s examples.'
  static override examples = [
    '<%= config.bin %> rerank deploy /tmp/ltr/small.json --registry /tmp/reranker',
    '<%= config.bin %> rerank deploy /tmp/ltr/model.json --registry /tmp/reranker --valid fixtures/ltr/valid.txt',
    '<%= config.bin %> rerank deploy /tmp/ltr-log/model.json',
  ]
  static override args = {
    model: Args.string({description: 'Model file written by kt rerank train --save.', required: true}),
  }
  static override flags = {
    registry: Flags.string({description: 'Model registry folder.', default: DEFAULT_REGISTRY}),
    valid: Flags.string({description: 'Compare candidate and current on this data file instead of their stored validation NDCG.'}),
  }

  async run(): Promise<unknown> {
    const {args, flags} = await this.parse(RerankDeploy)
    const {deploy} = await import('../../rank/registry.js')
    const {readLtrFile} = await import('../../rank/parse.js')
    const outcome = deploy(flags.registry, args.model, {compareOn: flags.valid ? readLtrFile(flags.valid) : undefined})
    if (!this.jsonEnabled()) {
      this.log(outcome.reason)
      if (outcome.removed.length > 0) this.log(`removed old versions: ${outcome.removed.join(', ')}`)
      this.log(`current: ${outcome.current ?? 'none'} (${flags.registry})`)
    }
    if (!outcome.deployed && outcome.already === undefined) process.exitCode = 1
    return outcome
  }
}
