import {Args, Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'
import {DEFAULT_REGISTRY, RERANKER_NONINFERIORITY_MARGIN} from '../../rank/defaults.js'

export default class RerankDeploy extends KtCommand {
  static override summary =
    "Deploy a trained reranker if, on held-out data, it is non-inferior to the engine's own order (no reranker) and to the current model."
  static override description = `A model written by "kt rerank train --save" or "kt rerank tune --save" becomes the current version only if, on held-out data, the lower bound of the 95% paired bootstrap interval of its NDCG@10 minus the baseline's is at least -margin (default ${RERANKER_NONINFERIORITY_MARGIN}, the retrieval profiles' non-inferiority margin) against both the engine's own order with no reranker at all and the current version; otherwise it is rejected (exit code 1) and the current version stays. The held-out data is --holdout, else the test file the model records (kt rerank train/tune --test); the output says which. Data the model was trained on, or selected on (the validation file of early stopping and of kt rerank tune: its figures there are biased upward), is refused (exit code 2; recognised by content, so a renamed copy too), as are no held-out data and an unknown engine order. The engine's order is the logged engine_score of a kt feature log, or what --engine-order names. --force --reason deploys what the gate does not pass; the reason and what the gate said are kept with the version (a --force without a --reason is refused). Both comparisons are printed with their intervals and verdicts (and in --json). A model over other feature columns (names or order) than the current one, or without trees, is refused (exit code 2; use another --registry for another feature set). Deploying the current model again changes nothing (exit code 0). The last three versions are kept with their metrics. Writes are atomic. The examples use the models of "kt rerank train"'s examples; the LETOR fixture has no engine, and its documents are i.i.d., so its file order (--engine-order file) stands for an engine that ranks at random.`
  static override examples = [
    '<%= config.bin %> rerank deploy reports/ltr/small.json --registry reports/reranker-small --holdout fixtures/ltr/test.txt --engine-order file',
    {
      command:
        '<%= config.bin %> rerank deploy reports/ltr/small.json --registry reports/reranker-small --holdout fixtures/ltr/valid.txt --engine-order file',
      description:
        'Refused (exit 2): small.json stopped early on fixtures/ltr/valid.txt, so it cannot be judged there.',
    },
    '<%= config.bin %> rerank deploy reports/ltr/model.json --registry reports/reranker-small --engine-order file',
    {
      command: '<%= config.bin %> rerank deploy reports/ltr-log/model.json --json',
      description:
        "Rejected (exit 1): judged on its recorded test log (one held-out conversation, 22 judged questions), the interval cannot rule out a loss of more than 0.01 against the engine's own order.",
    },
    {
      command:
        '<%= config.bin %> rerank deploy reports/ltr-log/model.json --force --reason "demo: the fixture log is too small to judge it"',
      description:
        'Deploys it anyway to the default registry (read by kt eval --reranker deployed); the reason and what the gate said are kept with the version.',
    },
  ]
  static override args = {
    model: Args.string({
      description: 'Model file written by kt rerank train --save or kt rerank tune --save.',
      required: true,
    }),
  }
  static override flags = {
    registry: Flags.string({description: 'Model registry folder.', default: DEFAULT_REGISTRY}),
    holdout: Flags.string({
      description:
        'Held-out data to judge candidate, engine order and current model on: data the model was neither trained nor selected on (e.g. the test split kt rerank log writes). Default: the test file the model records.',
      aliases: ['valid'],
    }),
    'engine-order': Flags.string({
      description:
        "How the engine's own order (no reranker) is known in the held-out file: score (its engine_score; the default when it has one), file (each query's lines in engine order, first = top) or feature:NAME (that column, larger first).",
    }),
    margin: Flags.string({
      description: `Non-inferiority margin, absolute NDCG@10 (default ${RERANKER_NONINFERIORITY_MARGIN}).`,
    }),
    force: Flags.boolean({
      description:
        "Deploy even when the gate does not pass (no held-out data, the model's own training or validation data, an unknown engine order, not non-inferior); needs --reason.",
      default: false,
    }),
    reason: Flags.string({
      description: 'Why the deploy is forced (one line, recorded with the version).',
      dependsOn: ['force'],
    }),
  }

  async run(): Promise<unknown> {
    const {args, flags} = await this.parse(RerankDeploy)
    const {deploy, formatComparison} = await import('../../rank/deploy.js')
    const {readLtrFile} = await import('../../rank/parse.js')
    const {parseEngineOrder} = await import('../../rank/engine-order.js')
    const {InputError} = await import('../../util/errors.js')
    if (flags.force && (flags.reason === undefined || !flags.reason.trim()))
      throw new InputError('--reason', 'why the deploy is forced (recorded with the version), with --force', 'nothing')
    let margin: number | undefined
    if (flags.margin !== undefined) {
      margin = Number(flags.margin)
      if (flags.margin.trim() === '' || !Number.isFinite(margin) || margin < 0)
        throw new InputError('--margin', 'a non-negative absolute NDCG@10 difference, e.g. 0.01', flags.margin)
    }
    const engineOrder = flags['engine-order'] === undefined ? undefined : parseEngineOrder(flags['engine-order'])
    const outcome = deploy(flags.registry, args.model, {
      holdout: flags.holdout ? readLtrFile(flags.holdout) : undefined,
      engineOrder,
      margin,
      force: flags.force ? flags.reason : undefined,
    })
    if (!this.jsonEnabled()) {
      if (outcome.gate)
        this.log(`held-out data: ${outcome.gate.file} (${outcome.gate.chosen_by}); ${outcome.gate.rule}`)
      for (const c of outcome.comparisons) this.log(formatComparison(c))
      for (const note of outcome.notes) this.log(`note: ${note}`)
      this.log(outcome.reason)
      if (outcome.removed.length > 0) this.log(`removed old versions: ${outcome.removed.join(', ')}`)
      this.log(`current: ${outcome.current ?? 'none'} (${flags.registry})`)
    }
    if (!outcome.deployed && outcome.already === undefined) process.exitCode = 1
    return outcome
  }
}
