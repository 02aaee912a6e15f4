import {Args, Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'
import {DEFAULT_REGISTRY} from '../../rank/defaults.js'

export default class RerankDeploy extends KtCommand {
  static override summary = 'Deploy a trained reranker if its validation NDCG@10 is not worse than the engine\'s own order (no reranker) and the current model.'
  static override description = 'A model written by "kt rerank train --save" becomes the current version only if its validation NDCG@10 is at least the better of the engine\'s own order with no reranker at all and the current version; otherwise it is rejected (exit code 1) and the current version stays. The engine\'s order is read from the validation data (--valid, else the validation file the model was trained with): the logged engine_score of a kt feature log, or what --engine-order names; when it is unknown the deploy is refused (exit code 2) unless --force, which is recorded with the version. Both comparisons are printed with a paired bootstrap interval over the judged queries. By default the NDCG stored with each model is compared; with --valid, both models are re-scored on that file (its columns picked by the model\'s feature names) so the comparison uses the same queries. A model over other feature columns (names or order) than the current one, or without trees, is refused (exit code 2; use another --registry for another feature set). Deploying the current model again changes nothing (exit code 0). The last three versions are kept with their metrics. Writes are atomic. The examples use the models of "kt rerank train"\'s examples; the LETOR fixture has no engine, and its documents are i.i.d., so its file order (--engine-order file) stands for an engine that ranks at random.'
  static override examples = [
    '<%= config.bin %> rerank deploy reports/ltr/small.json --registry reports/reranker-small --engine-order file',
    '<%= config.bin %> rerank deploy reports/ltr/model.json --registry reports/reranker-small --valid fixtures/ltr/valid.txt --engine-order file',
    '<%= config.bin %> rerank deploy reports/ltr-log/model.json',
  ]
  static override args = {
    model: Args.string({description: 'Model file written by kt rerank train --save.', required: true}),
  }
  static override flags = {
    registry: Flags.string({description: 'Model registry folder.', default: DEFAULT_REGISTRY}),
    valid: Flags.string({description: 'Compare candidate and current on this data file instead of their stored validation NDCG (and the candidate with the engine\'s own order on it; default: the validation file the model was trained with).'}),
    'engine-order': Flags.string({description: 'How the engine\'s own order (no reranker) is known in the validation file: score (its engine_score; the default when it has one), file (each query\'s lines in engine order, first = top) or feature:NAME (that column, larger first).'}),
    force: Flags.boolean({description: 'Deploy even when the engine\'s own order is unknown (the comparison with it is skipped; recorded with the version). The comparison with the current model still applies.', default: false}),
    reason: Flags.string({description: 'Why the deploy is forced (recorded with the version).', dependsOn: ['force']}),
  }

  async run(): Promise<unknown> {
    const {args, flags} = await this.parse(RerankDeploy)
    const {deploy, formatComparison} = await import('../../rank/registry.js')
    const {readLtrFile} = await import('../../rank/parse.js')
    const {parseEngineOrder} = await import('../../rank/engine-order.js')
    const engineOrder = flags['engine-order'] === undefined ? undefined : parseEngineOrder(flags['engine-order'])
    const outcome = deploy(flags.registry, args.model, {
      compareOn: flags.valid ? readLtrFile(flags.valid) : undefined,
      engineOrder,
      force: flags.force ? (flags.reason ?? 'forced without a reason') : undefined,
    })
    if (!this.jsonEnabled()) {
      for (const c of outcome.comparisons) this.log(formatComparison(c))
      this.log(outcome.reason)
      if (outcome.removed.length > 0) this.log(`removed old versions: ${outcome.removed.join(', ')}`)
      this.log(`current: ${outcome.current ?? 'none'} (${flags.registry})`)
    }
    if (!outcome.deployed && outcome.already === undefined) process.exitCode = 1
    return outcome
  }
}
