import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'

export default class RerankTune extends KtCommand {
  static override summary =
    "Search LambdaMART's learning rate, leaves, min-data, L2, feature fraction and truncation with kt's optimiser on validation NDCG@10."
  static override description = `Runs a study (BOHB by default, with the number of trees as the fidelity) over the reranker's regularisation, each fit stopping early on --valid; the configuration with the best validation NDCG@10 at the full tree count is chosen if it beats kt rerank train's defaults on --valid, else the defaults are kept. With --test, both are scored once on the test split and the difference gets a paired bootstrap interval. --save writes the chosen model for kt rerank deploy, with the data files and their sha256: the deploy gate judges it on --test, never on the data it was tuned on.`
  static override examples = [
    '<%= config.bin %> rerank tune --data fixtures/ltr/train.txt --valid fixtures/ltr/valid.txt --test fixtures/ltr/test.txt --trials 30 --trees 30',
    '<%= config.bin %> rerank tune --data fixtures/ltr/train.txt --valid-fraction 0.25 --trials 20 --trees 30 --save reports/ltr-tuned.json --json',
  ]
  static override flags = {
    data: Flags.string({description: 'Training data file.', required: true}),
    valid: Flags.string({description: 'Validation data file: every trial is scored and stopped early on it.'}),
    'valid-fraction': Flags.string({
      description:
        "Without --valid: carve this share of --data's queries off (seeded by --seed) as the validation split.",
      default: '0.2',
    }),
    test: Flags.string({description: 'Held-out test data file, scored once for the chosen and the default settings.'}),
    trials: Flags.integer({description: "Fits to run (BOHB counts each rung's fit).", default: 60, min: 1}),
    trees: Flags.integer({
      description: "Trees of a full fit (BOHB's smallest rung uses a ninth).",
      default: 100,
      min: 1,
    }),
    optimizer: Flags.string({description: 'The optimiser.', options: ['bohb', 'random'], default: 'bohb'}),
    seed: Flags.integer({description: 'Seed of the optimiser and of the per-tree feature draws.', default: 42}),
    save: Flags.string({description: 'Write the chosen model (JSON, with its metrics) to this path.'}),
    'engine-score-feature': Flags.boolean({
      description: 'Feature logs only: add the logged engine_score as one more feature.',
      default: false,
    }),
    'boost-from': Flags.string({
      description: 'Start boosting from a fitted linear score of this feature column (e.g. engine_score).',
    }),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(RerankTune)
    const {DEFAULT_LAMBDAMART} = await import('../../rank/lambdamart.js')
    const {loadSplits, withEngineScoreFeature} = await import('../../rank/splits.js')
    const {METRIC_DIGITS, signed} = await import('../../rank/table.js')
    const {tuneLambdaMart} = await import('../../rank/tune.js')
    const {trainLambdaMart} = await import('../../rank/lambdamart.js')
    const {snakeKeys} = await import('../../util/json-keys.js')
    const {saveTrainedModel} = await import('../../rank/provenance.js')
    const {carveValidation} = await import('../../rank/dataset.js')
    const {InputError} = await import('../../util/errors.js')
    const data = loadSplits({train: flags.data, valid: flags.valid, test: flags.test})
    if (flags['engine-score-feature'])
      for (const name of ['train', 'valid', 'test'] as const)
        if (data[name]) data[name] = withEngineScoreFeature(data[name]!)
    if (!data.valid) {
      const fraction = Number(flags['valid-fraction'])
      if (!(fraction > 0 && fraction < 1))
        throw new InputError('--valid-fraction', 'a share in (0, 1)', flags['valid-fraction'])
      Object.assign(data, carveValidation(data.train, fraction, flags.seed))
    }
    const spinner = this.spinner(`kt rerank tune: 0/${flags.trials} fits`)
    try {
      const result = tuneLambdaMart({
        train: data.train,
        valid: data.valid!,
        test: data.test,
        base: {
          ...DEFAULT_LAMBDAMART,
          trees: flags.trees,
          featureSeed: flags.seed,
          boostFrom: flags['boost-from'] ?? '',
        },
        optimizer: flags.optimizer as 'bohb' | 'random',
        trials: flags.trials,
        seed: flags.seed,
        onTrial: (done, best) =>
          void spinner.update(
            `kt rerank tune: ${done}/${flags.trials} fits, best full-size validation NDCG@10 ${Number.isNaN(best) ? '-' : best.toFixed(METRIC_DIGITS)}`,
          ),
      })
      await spinner.succeed(`kt rerank tune: ${result.trials.length} fits`)
      let model: string | undefined
      if (flags.save) {
        const outcome = trainLambdaMart(data.train, result.best.params, {valid: data.valid!})
        // valid (or the share of --data carved off as valid) selected the configuration: the deploy gate refuses to judge on it
        const files = {train: flags.data, valid: flags.valid, test: flags.test}
        const metrics = {valid: {'ndcg@10': result.best.valid_ndcg10}}
        saveTrainedModel(flags.save, outcome.model, {...result.best.params}, metrics, files, data.train.pool)
        model = flags.save
      }
      const out = {...result, model}
      if (!this.jsonEnabled()) this.log(formatTune(out, METRIC_DIGITS, signed))
      return snakeKeys(out)
    } catch (error) {
      await spinner.fail()
      throw error
    }
  }
}

function formatTune(
  r: {
    trials: unknown[]
    best: {config: Record<string, unknown>; valid_ndcg10: number; trees: number}
    defaults: {valid_ndcg10: number; trees: number}
    test?: {
      tuned: number
      defaults: number
      queries: number
      delta: {estimate: number | null; low: number | null; high: number | null; confidence: number}
    }
    model?: string
  },
  digits: number,
  signed: (x: number | null) => string,
): string {
  const kept = Object.keys(r.best.config).length === 0
  const lines = [
    `${r.trials.length} fits. Validation NDCG@10: defaults ${r.defaults.valid_ndcg10.toFixed(digits)} (${r.defaults.trees} trees), ${kept ? 'no searched configuration beat them: the defaults are kept' : `chosen ${r.best.valid_ndcg10.toFixed(digits)} (${r.best.trees} trees)`}.`,
  ]
  if (!kept)
    lines.push(
      `chosen: ${Object.entries(r.best.config)
        .map(([k, v]) => `${k}=${typeof v === 'number' && !Number.isInteger(v) ? v.toPrecision(3) : v}`)
        .join(' ')}`,
    )
  if (r.test)
    lines.push(
      `test (${r.test.queries} judged q): chosen ${r.test.tuned.toFixed(digits)} vs defaults ${r.test.defaults.toFixed(digits)}: ${signed(r.test.delta.estimate)} [${signed(r.test.delta.low)}, ${signed(r.test.delta.high)}] (absolute, paired bootstrap ${Math.round(100 * r.test.delta.confidence)}%)`,
    )
  if (r.model) lines.push(`Model saved to ${r.model}`)
  return lines.join('\n')
}
