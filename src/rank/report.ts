import {InputError} from '../util/errors.js'
import {hashString} from '../util/rng.js'
import {trainingAdvice} from './advice.js'
import {compareScorers, type ScorerComparison} from './compare.js'
import {carveValidation, numDocs, numQueries} from './dataset.js'
import {
  scoreDataset,
  trainLambdaMart,
  type FeatureImportance,
  type LambdaMartModel,
  type LambdaMartParams,
} from './lambdamart.js'
import {
  bestSingleFeature,
  scoreLinear,
  scoreSingleFeature,
  tuneLinear,
  type LinearModel,
  type SingleFeatureModel,
} from './linear.js'
import {NDCG_CUTOFFS, PRIMARY_CUTOFF, reportEvaluator, type NdcgEvaluator, type NdcgReport} from './ndcg.js'
import {comparePeer, formatPeer, formatPeerTiming, type PeerReport} from './peer-comparison.js'
import {saveTrainedModel} from './provenance.js'
import {
  loadSplits,
  loggedPool,
  SPLIT_NAMES,
  withEngineScoreFeature,
  type SplitFiles,
  type SplitName,
  type Splits,
} from './splits.js'
import {formatMetric, signed, table} from './table.js'

/**
 * `kt rerank train`: trains LambdaMART on the training split and reports NDCG@1/3/5/10 on every
 * given split next to the two baselines tuned on the same training split (linear.ts), the NDCG@10
 * learning curve and feature importance by gain. A split that was not given is absent.
 */

export interface TrainReportOptions {
  files: SplitFiles
  params: LambdaMartParams
  /** Seeds the linear baseline's coordinate ascent (LambdaMART itself draws no random numbers). */
  seed: number
  /** Where to save the trained model (JSON), if anywhere. */
  save?: string
  /**
   * Append the logged engine score as one more feature column, ENGINE_SCORE_FEATURE (stacking:
   * the reranker then refines the engine's ranking instead of rebuilding it from the raw features).
   */
  engineScoreFeature?: boolean
  /** Carve this share of the training queries off as the validation split (no --valid file). */
  validFraction?: number
  /** Train the XGBoost peer with the same settings on the same files and compare (peer.ts). */
  peer?: 'xgboost'
  onProgress?: (text: string) => void
}

export interface TrainReport {
  splits: Partial<Record<SplitName, NdcgReport>>
  baselines: {
    linear: Partial<Record<SplitName, NdcgReport>>
    best_feature: Partial<Record<SplitName, NdcgReport>>
    /** Extra, only for feature logs that record it: the logging engine's own ranking. */
    engine?: Partial<Record<SplitName, NdcgReport>>
  }
  trees: number
  train_ms: number
  /** Extras beyond the shape. */
  ndcg_by_trees: ({trees: number} & Partial<Record<SplitName, number>>)[]
  importance: FeatureImportance[]
  baseline_models: {
    linear: {weights: Record<string, number>; note: string}
    best_feature: {feature: string; direction: 'descending' | 'ascending'}
  }
  queries: Partial<Record<SplitName, {total: number; judged: number; documents: number}>>
  convention: string
  /** The candidate pool of the training feature log, when it records one (saved with the model). */
  pool?: number
  /** LambdaMART against each baseline on every split but train, paired by query. */
  comparisons: Partial<Record<SplitName, ScorerComparison[]>>
  /** Things the user should know (e.g. why no tree was grown); printed on stderr. */
  warnings: string[]
  /** CPU time of LambdaMART's training in this process, ms. */
  train_cpu_ms: number
  /** Learning-rate, tree-count and regularisation advice read off the validation curve. */
  advice: string[]
  /** The peer's run beside kt's, with --peer. */
  peer_comparison?: PeerReport
  model?: string
}

const NO_RELEVANT_CONVENTION =
  'queries without any relevant document are skipped (left out of every mean, and give no gradients)'

/** Trains, evaluates and (optionally) saves; everything the command prints. */
export function runTrainReport(options: TrainReportOptions): TrainReport {
  const progress = options.onProgress ?? (() => {})
  progress('reading data')
  const data = readTrainData(options)
  const pool = loggedPool(data)
  if (options.engineScoreFeature)
    for (const name of SPLIT_NAMES) if (data[name]) data[name] = withEngineScoreFeature(data[name]!)
  const present = SPLIT_NAMES.filter((name) => data[name] !== undefined)
  const evaluators = new Map(present.map((name) => [name, reportEvaluator(data[name]!)]))

  progress('training LambdaMART')
  const started = performance.now()
  const cpuStarted = process.cpuUsage()
  const evalSets = Object.fromEntries(present.filter((name) => name !== 'train').map((name) => [name, data[name]!]))
  const outcome = trainLambdaMart(data.train, options.params, evalSets, (t) => {
    if (t % 10 === 0) progress(`training LambdaMART: ${t} trees`)
  })
  const trainMs = performance.now() - started
  const cpu = process.cpuUsage(cpuStarted)
  const trainCpuMs = (cpu.user + cpu.system) / 1000

  progress('tuning the linear baseline (coordinate ascent)')
  const linear = tuneLinear(data.train, options.seed)
  const single = bestSingleFeature(data.train)
  const report: TrainReport = {
    splits: {},
    baselines: {linear: {}, best_feature: {}},
    trees: outcome.model.trees.length,
    train_ms: Math.round(trainMs),
    ndcg_by_trees: outcome.curve.map((point) => ({trees: point.trees, ...point.ndcg10})),
    importance: outcome.importance,
    baseline_models: {
      linear: {
        weights: Object.fromEntries(linear.featureNames.map((name, f) => [name, linear.weights[f]])),
        note: 'weights on training z-scores, L1 norm 1',
      },
      best_feature: {feature: single.feature, direction: single.sign > 0 ? 'descending' : 'ascending'},
    },
    queries: {},
    convention: NO_RELEVANT_CONVENTION,
    ...(pool === undefined ? {} : {pool}),
    comparisons: {},
    warnings:
      outcome.noTreeReason === undefined
        ? []
        : [`LambdaMART grew 0 trees: ${outcome.noTreeReason}; the model scores every document equally`],
    train_cpu_ms: Math.round(trainCpuMs),
    advice: trainingAdvice(outcome.curve, options.params, outcome.model.trees.length),
  }
  scoreSplits(report, data, evaluators, outcome.model, {linear, best_feature: single}, options.seed)
  if (options.peer) {
    progress(`training the ${options.peer} peer`)
    report.peer_comparison = comparePeer(data, options, outcome.model, {wall: trainMs, cpu: trainCpuMs}, present)
  }
  if (options.save) {
    const params = {...options.params, engineScoreFeature: options.engineScoreFeature === true}
    saveTrainedModel(
      options.save,
      outcome.model,
      params,
      report.splits as Record<string, NdcgReport>,
      options.files,
      pool,
    )
    report.model = options.save
  }
  return report
}

/** Fills the report's NDCG of the model and every baseline on each split, and the paired comparisons on all but train. */
function scoreSplits(
  report: TrainReport,
  data: Splits,
  evaluators: ReadonlyMap<SplitName, NdcgEvaluator>,
  model: LambdaMartModel,
  baselines: {linear: LinearModel; best_feature: SingleFeatureModel},
  seed: number,
): void {
  const hasEngineScores = [...evaluators.keys()].every((name) => data[name]!.engineScores !== undefined)
  if (hasEngineScores) report.baselines.engine = {}
  for (const [name, evaluator] of evaluators) {
    const split = data[name]!
    const scores = {
      model: scoreDataset(model, split),
      linear: scoreLinear(baselines.linear, split),
      best_feature: scoreSingleFeature(baselines.best_feature, split),
      engine: hasEngineScores ? split.engineScores! : undefined,
    }
    report.splits[name] = evaluator.report(scores.model)
    report.baselines.linear[name] = evaluator.report(scores.linear)
    report.baselines.best_feature[name] = evaluator.report(scores.best_feature)
    if (scores.engine) report.baselines.engine![name] = evaluator.report(scores.engine)
    if (name !== 'train') {
      const own = evaluator.perQuery(scores.model, PRIMARY_CUTOFF)
      const named = (['linear', 'best_feature', 'engine'] as const).filter((b) => scores[b] !== undefined)
      report.comparisons[name] = named.map((b) =>
        compareScorers(
          b,
          own,
          evaluator.perQuery(scores[b]!, PRIMARY_CUTOFF),
          hashString(`${seed}/comparison/${name}/${b}`),
        ),
      )
    }
    report.queries[name] = {total: numQueries(split), judged: evaluator.judgedQueries, documents: numDocs(split)}
  }
}

/** The splits to train and evaluate on, after the checks of --valid-fraction and --peer. */
function readTrainData(options: TrainReportOptions): Splits {
  const data = loadSplits(options.files)
  if (options.validFraction !== undefined) {
    if (data.valid) throw new InputError('--valid-fraction', 'no --valid file as well', options.files.valid!)
    if (options.peer)
      throw new InputError('--valid-fraction', `no --peer (the peer trains on the whole --data file)`, '--peer')
    Object.assign(data, carveValidation(data.train, options.validFraction, options.seed))
  }
  if (!options.peer) return data
  for (const name of SPLIT_NAMES) {
    if (/\.jsonl$/i.test(options.files[name] ?? ''))
      throw new InputError(
        `--peer ${options.peer}`,
        'LETOR text files (the peer reads no kt feature logs)',
        options.files[name]!,
      )
  }
  if (options.engineScoreFeature)
    throw new InputError(
      `--peer ${options.peer}`,
      'no --engine-score-feature (the peer reads the files as they are)',
      '--engine-score-feature',
    )
  return data
}

/** Curve checkpoints shown in the human table: 1, 5, 10, 20, 50, 100, 200, ... and the last. */
function curveCheckpoints(total: number): number[] {
  const marks = new Set<number>()
  for (let m = 1; m <= total; m *= 10) for (const k of [1, 2, 5]) if (k * m <= total) marks.add(k * m)
  marks.add(total)
  return [...marks].filter((m) => m >= 1).sort((a, b) => a - b)
}

/** The human-readable report. */
export function formatTrainReport(report: TrainReport): string {
  const lines: string[] = []
  const fmt = formatMetric
  const header = ['split', 'scorer', ...NDCG_CUTOFFS.map((k) => `NDCG@${k}`)]
  const rows: string[][] = []
  for (const name of SPLIT_NAMES) {
    const own = report.splits[name]
    if (!own) continue
    const q = report.queries[name]!
    const best = report.baseline_models.best_feature
    const scorers: [string, NdcgReport][] = [
      [`LambdaMART (${report.trees} trees)`, own],
      ['linear fusion (coordinate ascent)', report.baselines.linear[name]!],
      [`best feature (${best.feature}, ${best.direction})`, report.baselines.best_feature[name]!],
    ]
    const engine = report.baselines.engine?.[name]
    if (engine) scorers.push(["engine's own fused score (logged)", engine])
    scorers.forEach(([label, values], i) => {
      rows.push([
        i === 0 ? `${name} (${q.judged}/${q.total} q)` : '',
        label,
        ...NDCG_CUTOFFS.map((k) => fmt(values[`ndcg@${k}`])),
      ])
    })
  }
  lines.push(table(header, rows, 2))
  lines.push(`(j/n q) = judged of all queries. Convention: ${NO_RELEVANT_CONVENTION}.`)
  lines.push(...formatComparisons(report))
  if (report.peer_comparison) lines.push('', formatPeer(report.peer_comparison))
  if (report.advice.length > 0)
    lines.push('', 'Advice (from the validation curve):', ...report.advice.map((a) => `- ${a}`))

  const present = SPLIT_NAMES.filter((name) => report.splits[name])
  const byTrees = new Map(report.ndcg_by_trees.map((p) => [p.trees, p]))
  lines.push('', `NDCG@${PRIMARY_CUTOFF} against number of trees`)
  const lastTrees = report.ndcg_by_trees.length === 0 ? 0 : report.ndcg_by_trees[report.ndcg_by_trees.length - 1].trees
  const marks = [...(byTrees.has(0) ? [0] : []), ...curveCheckpoints(lastTrees)]
  lines.push(
    table(
      ['trees', ...present],
      marks.map((t) => [t === 0 ? '0 (base)' : String(t), ...present.map((s) => fmt(byTrees.get(t)?.[s]))]),
    ),
  )

  lines.push('', 'Feature importance (split gain)')
  lines.push(
    table(
      ['feature', 'gain', 'share', 'splits'],
      report.importance.map((f) => [f.feature, f.gain.toFixed(1), `${(100 * f.share).toFixed(1)}%`, String(f.splits)]),
    ),
  )
  if (report.model) lines.push('', `Model saved to ${report.model}`)
  lines.push(
    '',
    TIMING_HEADER,
    `- LambdaMART: ${report.train_ms} ms (${report.train_cpu_ms} ms of CPU) for ${report.trees} trees, one thread.`,
  )
  if (report.peer_comparison) lines.push(...formatPeerTiming(report.peer_comparison))
  return lines.join('\n')
}

/** The table of LambdaMART minus each baseline on every split but train (no lines when none was compared). */
function formatComparisons(report: TrainReport): string[] {
  const compared = SPLIT_NAMES.filter((name) => (report.comparisons[name] ?? []).length > 0)
  if (compared.length === 0) return []
  const first = report.comparisons[compared[0]]![0]
  const names = {linear: 'linear fusion', best_feature: 'best feature', engine: "engine's score", xgboost: 'xgboost'}
  const rows = compared.flatMap((name) =>
    report.comparisons[name]!.map((c, i) => [
      i === 0 ? `${name} (${c.queries} q)` : '',
      names[c.baseline],
      signed(c.delta),
      `[${signed(c.low)}, ${signed(c.high)}]`,
    ]),
  )
  return [
    '',
    `LambdaMART minus each baseline, NDCG@${PRIMARY_CUTOFF}: absolute difference of means, paired bootstrap ${Math.round(100 * first.confidence)}% interval over the split's judged queries`,
    table(['split', 'baseline', 'delta', 'interval'], rows, 2),
  ]
}

/** Heads the last section of the human report: everything above it is the same for the same seed and inputs. */
export const TIMING_HEADER = 'Timing (varies from run to run; everything above is deterministic):'
