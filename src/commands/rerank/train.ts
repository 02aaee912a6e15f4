import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'
import {DEFAULT_EARLY_STOP} from '../../rank/defaults.js'

export default class RerankTrain extends KtCommand {
  static override summary =
    'Train the LambdaMART reranker and compare it with tuned linear fusion and the best single feature.'
  static override description = `Reads learning-to-rank data (LETOR "label qid:Q 1:v ..." text, libsvm text with a FILE.query group file, or kt feature logs *.jsonl), trains LambdaMART on --data and reports NDCG@1/3/5/10 on each given split for LambdaMART, linear fusion tuned by coordinate ascent on the training split, and the single feature that ranks the training split best. Also prints NDCG@10 against the number of trees and feature importance by split gain. Queries without a relevant document are skipped in every mean. With --save, writes the model (with its metrics, the data files and their sha256, and the candidate pool when the data is a "kt rerank log" feature log) for "kt rerank deploy", which judges it on the --test file, never on --data or --valid. When not even one tree can be grown (e.g. fewer documents than twice --min-data), a warning on stderr says why and the report shows 0 trees. The examples run in order after "kt rerank generate --out /tmp/ltr ..." and "kt rerank log --out /tmp/ltr-log ..." (see their examples).`
  static override examples = [
    '<%= config.bin %> rerank train --data fixtures/ltr/train.txt --valid fixtures/ltr/valid.txt --test fixtures/ltr/test.txt',
    '<%= config.bin %> rerank train --data fixtures/ltr/train.txt --test fixtures/ltr/test.txt --depth 6 --leaves 64 --min-data 1 --min-hessian 1 --l2 1 --truncation 0 --peer xgboost',
    '<%= config.bin %> rerank train --data fixtures/ltr/train.txt --valid fixtures/ltr/valid.txt --trees 10 --save reports/ltr/small.json',
    '<%= config.bin %> rerank train --data reports/ltr/train.txt --valid reports/ltr/valid.txt --test reports/ltr/test.txt --save reports/ltr/model.json --json',
    '<%= config.bin %> rerank train --data reports/ltr-log/train.jsonl --valid reports/ltr-log/valid.jsonl --test reports/ltr-log/test.jsonl --engine-score-feature --min-data 5 --save reports/ltr-log/model.json',
    '<%= config.bin %> rerank train --data reports/ltr-log/train.jsonl --valid reports/ltr-log/valid.jsonl --test reports/ltr-log/test.jsonl --engine-score-feature --boost-from engine_score --min-data 5 --l2 10',
    '<%= config.bin %> rerank train --data reports/ltr-qf/train.jsonl --valid reports/ltr-qf/valid.jsonl --min-data 5 --trees 30 --save reports/ltr-qf/model.json',
  ]
  static override flags = {
    data: Flags.string({description: 'Training data file.', required: true}),
    valid: Flags.string({
      description:
        'Validation data file (early stopping; the model is selected on it, so kt rerank deploy refuses to judge it there).',
    }),
    test: Flags.string({
      description:
        'Held-out test data file (recorded in the saved model: the data kt rerank deploy judges it on by default).',
    }),
    'valid-fraction': Flags.string({
      description:
        "Without --valid: carve this share of --data's queries off (seeded by --seed) as the validation split.",
    }),
    trees: Flags.integer({description: 'Boosting rounds (trees) at most.', default: 100, min: 1}),
    'learning-rate': Flags.string({description: 'Shrinkage applied to every leaf value.', default: '0.1'}),
    leaves: Flags.integer({description: 'Most leaves per tree.', default: 31, min: 2}),
    depth: Flags.integer({description: 'Deepest leaf depth (0: no limit).', default: 0, min: 0}),
    'min-data': Flags.integer({description: 'Fewest documents in a leaf.', default: 20, min: 1}),
    truncation: Flags.integer({
      description:
        "Truncation level k of the NDCG@k the gradients target (0: none, every pair counts, as in XGBoost 1.7's rank:ndcg).",
      default: 10,
      min: 0,
    }),
    sigma: Flags.string({description: 'Sigmoid steepness of the pairwise lambdas.', default: '1'}),
    'max-bins': Flags.integer({
      description: 'Histogram bins per feature (at most 255).',
      default: 255,
      min: 2,
      max: 255,
    }),
    'early-stop': Flags.integer({
      description: `Stop after this many trees without validation NDCG@10 gain and keep the best prefix (0: off). Default: ${DEFAULT_EARLY_STOP} with --valid, off without.`,
      min: 0,
    }),
    l2: Flags.string({description: 'L2 penalty on leaf values (XGBoost lambda, LightGBM lambda_l2).', default: '0'}),
    'min-hessian': Flags.string({
      description: 'Smallest Hessian sum in a leaf (XGBoost min_child_weight, LightGBM min_sum_hessian_in_leaf).',
      default: '0.001',
    }),
    'feature-fraction': Flags.string({
      description: 'Share of the feature columns each tree may split on, drawn per tree with --seed (1: all).',
      default: '1',
    }),
    'boost-from': Flags.string({
      description:
        'Start boosting from a fitted linear score of this feature column (e.g. engine_score with --engine-score-feature): the trees refine that ranking, and early stopping may keep none of them.',
    }),
    peer: Flags.string({
      description:
        "Also train this peer with the same settings on the same LETOR files and compare: xgboost (needs Debian's python3-xgboost). Quality against XGBoost on its default 2 threads (its scores depend on the thread count), with a paired interval; training time against XGBoost on 1 thread (CPU) and on 2 (wall), in the report's last section, for information: the 2x training-time target is judged by kt bench rerank (training alone, on MQ2008), so this command exits 0 whatever the ratio.",
      options: ['xgboost'],
    }),
    seed: Flags.integer({
      description: "Seed of the linear baseline's coordinate ascent and of the per-tree feature draws.",
      default: 42,
    }),
    save: Flags.string({description: 'Write the trained model (JSON, with its metrics) to this path.'}),
    'engine-score-feature': Flags.boolean({
      description:
        "Feature logs only: add the logged engine_score as one more feature (the reranker refines the engine's ranking).",
      default: false,
    }),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(RerankTrain)
    const {InputError} = await import('../../util/errors.js')
    const {DEFAULT_LAMBDAMART} = await import('../../rank/lambdamart.js')
    const {runTrainReport, formatTrainReport} = await import('../../rank/report.js')
    const positive = (name: string, text: string): number => {
      const value = Number(text)
      if (!Number.isFinite(value) || value <= 0) throw new InputError(`--${name}`, 'a positive number', text)
      return value
    }
    const nonNegative = (name: string, text: string): number => {
      const value = Number(text)
      if (!Number.isFinite(value) || value < 0) throw new InputError(`--${name}`, 'a number >= 0', text)
      return value
    }
    const validFraction =
      flags['valid-fraction'] === undefined ? undefined : positive('valid-fraction', flags['valid-fraction'])
    if (validFraction !== undefined && validFraction >= 1)
      throw new InputError('--valid-fraction', 'a share in (0, 1)', flags['valid-fraction']!)
    const hasValid = flags.valid !== undefined || validFraction !== undefined
    if ((flags['early-stop'] ?? 0) > 0 && !hasValid)
      throw new InputError('--early-stop', 'a --valid file to stop on', 'none')
    const featureFraction = positive('feature-fraction', flags['feature-fraction'])
    if (featureFraction > 1) throw new InputError('--feature-fraction', 'a share in (0, 1]', flags['feature-fraction'])
    const params = {
      ...DEFAULT_LAMBDAMART,
      trees: flags.trees,
      learningRate: positive('learning-rate', flags['learning-rate']),
      maxLeaves: flags.leaves,
      maxDepth: flags.depth,
      minDataInLeaf: flags['min-data'],
      truncation: flags.truncation,
      sigma: positive('sigma', flags.sigma),
      maxBins: flags['max-bins'],
      earlyStoppingRounds: flags['early-stop'] ?? (hasValid ? DEFAULT_EARLY_STOP : 0),
      l2: nonNegative('l2', flags.l2),
      minSumHessianInLeaf: nonNegative('min-hessian', flags['min-hessian']),
      featureFraction,
      featureSeed: flags.seed,
      boostFrom: flags['boost-from'] ?? '',
    }
    const spinner = this.spinner('kt rerank: reading data')
    try {
      const report = runTrainReport({
        files: {train: flags.data, valid: flags.valid, test: flags.test},
        params,
        seed: flags.seed,
        save: flags.save,
        engineScoreFeature: flags['engine-score-feature'],
        peer: flags.peer as 'xgboost' | undefined,
        validFraction,
        onProgress: (text) => void spinner.update(`kt rerank: ${text}`),
      })
      await spinner.succeed(`kt rerank: trained ${report.trees} trees in ${report.train_ms} ms`)
      // on stderr even under --json, where the JSON carries them too
      for (const warning of report.warnings) process.stderr.write(`kt: warning: ${warning}\n`)
      if (!this.jsonEnabled()) this.log(formatTrainReport(report))
      return report
    } catch (error) {
      await spinner.fail()
      throw error
    }
  }
}
