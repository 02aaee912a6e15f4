import {Flags} from '@oclif/core'
import {KtCommand} from '../cli/base.js'
import {InputError} from '../util/errors.js'
import {DEFAULT_REGISTRY} from '../rank/defaults.js'

export default class Eval extends KtCommand {
  static override summary =
    'Evaluate retrieval on a conversational memory dataset: the engine against plain BM25 and vector-only baselines (and, with --reranker, the engine followed by a learned reranker).'
  static override description =
    "Builds the memory engine for each conversation, ranks its turns for every question with evidence (LoCoMo category 5 and questions without evidence are skipped and counted), and reports evidence recall@k, hit@k, NDCG@10 and MRR per category and overall for the engine, plain BM25 and vector similarity; warm in-process latency per query (p50/p95/p99), index build time, and the query classifier against the LoCoMo categories. With --reranker, also the engine followed by a learned reranker (kt rerank train --save, or the registry's deployed version) on the same questions: the same metrics as one more system, a paired bootstrap interval of its difference from the engine, and its latency. --conversation restricts everything to some conversations (e.g. the reranker's held-out one)."
  static override examples = [
    '<%= config.bin %> eval --data fixtures/memory_small.json',
    '<%= config.bin %> eval --data fixtures/memory_small.json --k 1,5,10 --json',
    '<%= config.bin %> eval --data fixtures/memory_small.json --profile fixtures/profile-balanced-fusion.json --json',
    '<%= config.bin %> eval --data fixtures/memory_small.json --conversation synth-7-2 --reranker reports/ltr-qf/model.json',
    '<%= config.bin %> eval --data fixtures/memory_small.json --reranker deployed --registry reports/reranker --rerank-pool 30',
    '<%= config.bin %> eval --data fixtures/memory_small.json --against fixtures/profile-balanced-fusion.json',
    '<%= config.bin %> eval --engine examples/python-engine/engine.service.json --data fixtures/memory_small.json',
  ]
  static override flags = {
    data: Flags.string({
      description: 'Dataset: LoCoMo JSON (.json), JSONL turns (.jsonl) or CSV turns (.csv).',
      required: true,
    }),
    profile: Flags.string({
      description:
        'Retrieval profile JSON: a kt profile, or parameter values (others default), or {config, overrides}.',
    }),
    k: Flags.string({description: 'Cut-offs for recall@k and hit@k, comma-separated.', default: '1,5,10,20'}),
    format: Flags.string({
      description: 'Input format (default: from the file extension).',
      options: ['locomo', 'jsonl', 'csv'],
    }),
    columns: Flags.string({
      description: 'CSV column mapping, e.g. id=turn_id,session=sess,speaker=who,time=ts,text=utterance.',
    }),
    questions: Flags.string({
      description: 'JSONL questions {question, evidence, category, conversation?} for JSONL/CSV turns.',
    }),
    conversation: Flags.string({
      description:
        'Evaluate only these conversations (comma-separated ids), e.g. the ones a reranker was not trained on.',
    }),
    reranker: Flags.string({
      description:
        'Also evaluate the engine followed by this learned reranker: a model file (kt rerank train --save) or "deployed" (the registry\'s current version).',
    }),
    registry: Flags.string({
      description: 'Reranker registry folder read by --reranker deployed.',
      default: DEFAULT_REGISTRY,
    }),
    engine: Flags.string({
      description:
        "Evaluate an external engine instead of kt's: an engine file (kt_engine: 1) whose evaluate.kind is retrieval-service. --profile and --against then hold that engine's parameter values.",
    }),
    against: Flags.string({
      description:
        "Compare with a second retrieval profile on the same questions: every metric's difference (this minus --profile, or minus the defaults) with a paired bootstrap 95% interval.",
    }),
    'rerank-pool': Flags.integer({
      description:
        "Engine candidates the reranker reorders per query, at least the deepest cut-off and 10 (default: the pool the model's training log was written with, recorded in the model, else 50). A model with query-level columns refuses any other pool than its recorded one.",
    }),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(Eval)
    const ks = parseKs(flags.k)
    if (flags.engine !== undefined) return this.runEngine(flags, ks)
    const {loadMemoryDataset} = await import('../data/conversations/index.js')
    const {loadRetrievalProfile} = await import('../eval/profile.js')
    const {defaultRetrievalConfig} = await import('../engine/retrieval/engine.js')
    const {runEvaluation} = await import('../eval/harness.js')
    const {renderEvalReport} = await import('../eval/render.js')
    const {restrictConversations} = await import('../data/conversations/queries.js')
    const profile =
      flags.profile === undefined
        ? {config: defaultRetrievalConfig(), overrides: undefined}
        : loadRetrievalProfile(flags.profile)
    const loaded = loadMemoryDataset(flags.data, {
      format: flags.format as 'locomo' | 'jsonl' | 'csv' | undefined,
      columns: flags.columns === undefined ? undefined : parseColumns(flags.columns),
      questions: flags.questions,
    })
    const dataset =
      flags.conversation === undefined
        ? loaded
        : restrictConversations(loaded, parseIds(flags.conversation, '--conversation'), '--conversation')
    let rerank:
      | {
          reranker: import('../rank/apply.js').EngineReranker
          pool: number
          identity: import('../eval/reranked.js').RerankerIdentity
        }
      | undefined
    if (flags.reranker !== undefined) {
      const {loadReranker} = await import('../rank/search.js')
      const {checkPool, resolveRerankPool} = await import('../eval/reranked.js')
      const loadedModel = loadReranker(flags.reranker, flags.registry)
      const {pool, from, warning} = resolveRerankPool(flags['rerank-pool'], loadedModel)
      checkPool(pool, ks, from)
      // on stderr even under --json
      if (warning !== undefined) process.stderr.write(`kt: warning: ${warning}\n`)
      rerank = {reranker: loadedModel.reranker, pool, identity: loadedModel}
    }
    const progress = this.spinner(
      `evaluating ${dataset.questions.length} questions over ${dataset.conversations.length} conversations`,
    )
    const engine = {overrides: profile.overrides}
    const output =
      rerank === undefined
        ? runEvaluation(dataset, profile.config, {ks, engine})
        : (await import('../eval/reranked.js')).runRerankedEvaluation(dataset, profile.config, {...rerank, ks, engine})
    // no scored question means no measurement: an error, not a table of zeros
    if (output.queries === 0)
      throw new InputError(
        flags.data,
        'at least one question of categories 1-4 whose evidence names a turn of its conversation',
        `${dataset.questions.length} questions, none scorable`,
      )
    await progress.succeed(`evaluated ${output.queries} queries`)
    let against: import('../eval/compare.js').ProfileComparison | undefined
    if (flags.against !== undefined) {
      const {compareRows, comparedMetrics, renderComparison} = await import('../eval/compare.js')
      const {prepareEvaluation, evaluateSystem} = await import('../eval/harness.js')
      const other = loadRetrievalProfile(flags.against)
      // each profile with its own per-type overrides (they are built into the engines)
      const rows = (p: typeof profile) =>
        evaluateSystem(prepareEvaluation(dataset, {overrides: p.overrides}), 'engine', p.config, {ks}).rows
      against = compareRows(
        {name: flags.profile ?? 'defaults', rows: rows(profile)},
        {name: flags.against, rows: rows(other)},
        comparedMetrics(ks),
      )
      if (!this.jsonEnabled()) this.log(`${renderEvalReport(output)}\n\n${renderComparison(against)}`)
    } else if (!this.jsonEnabled()) this.log(renderEvalReport(output))
    return against ? {...output, against} : output
  }

  /** `kt eval --engine`: a retrieval service scored on the dataset (and, with --against, compared). */
  private async runEngine(
    flags: {
      engine?: string
      data: string
      profile?: string
      against?: string
      format?: string
      columns?: string
      questions?: string
      conversation?: string
      reranker?: string
    },
    ks: number[],
  ): Promise<unknown> {
    if (flags.reranker !== undefined)
      throw new InputError(
        '--reranker',
        "no --reranker with --engine (the reranker reorders kt's own candidates)",
        flags.reranker,
      )
    const {loadEngineFile} = await import('../engines/file.js')
    const {serviceSpecOf} = await import('../engines/retrieval-service.js')
    const {evaluateService, evaluationQuestions, loadEngineProfile, renderServiceEval} =
      await import('../eval/service-eval.js')
    const {loadMemoryDataset} = await import('../data/conversations/index.js')
    const {restrictConversations} = await import('../data/conversations/queries.js')
    const {defaultConfig} = await import('../space/index.js')
    const engine = loadEngineFile(flags.engine!)
    if (engine.evaluate.kind !== 'retrieval-service')
      throw new InputError(
        `${flags.engine}: evaluate.kind`,
        '"retrieval-service" for kt eval (a command or http engine computes its own metrics: tune it with kt search --engine)',
        JSON.stringify(engine.evaluate.kind),
      )
    const spec = serviceSpecOf(engine)
    const config =
      flags.profile === undefined ? defaultConfig(engine.space) : loadEngineProfile(flags.profile, engine.space)
    const otherConfig = flags.against === undefined ? undefined : loadEngineProfile(flags.against, engine.space)
    const loaded = loadMemoryDataset(flags.data, {
      format: flags.format as 'locomo' | 'jsonl' | 'csv' | undefined,
      columns: flags.columns === undefined ? undefined : parseColumns(flags.columns),
      questions: flags.questions,
    })
    const dataset =
      flags.conversation === undefined
        ? loaded
        : restrictConversations(loaded, parseIds(flags.conversation, '--conversation'), '--conversation')
    const progress = this.spinner(
      `evaluating ${engine.name} on ${dataset.questions.length} questions over ${dataset.conversations.length} conversations`,
    )
    try {
      const evaluated = await evaluateService(spec, dataset, config, {ks})
      const {output, rows} = evaluated
      // no scored question means no measurement: an error, not a table of zeros
      if (output.queries === 0)
        throw new InputError(
          flags.data,
          'at least one question of categories 1-4 whose evidence names a turn of its conversation',
          `${dataset.questions.length} questions, none scorable`,
        )
      let against: import('../eval/compare.js').ProfileComparison | undefined
      if (otherConfig !== undefined) {
        const {compareRows, comparedMetrics} = await import('../eval/compare.js')
        const other = await evaluateService(spec, dataset, otherConfig, {ks, minTimings: 1})
        against = compareRows(
          {name: flags.profile ?? 'defaults', rows},
          {name: flags.against!, rows: other.rows},
          comparedMetrics(ks),
        )
      }
      await progress.succeed(`evaluated ${output.queries} queries`)
      if (!this.jsonEnabled()) {
        this.log(renderServiceEval(output))
        if (against) this.log(`\n${(await import('../eval/compare.js')).renderComparison(against)}`)
      }
      // per-question results, so kt compare can pair this evaluation with another one
      const name = flags.profile ?? 'defaults'
      const questions = evaluationQuestions({[name]: evaluated}, {engine: flags.engine!, data: flags.data}, name)
      return against ? {...output, against, questions} : {...output, questions}
    } catch (error) {
      await progress.fail()
      throw error
    }
  }
}

function parseKs(text: string): number[] {
  const ks = text.split(',').map((s) => s.trim())
  const values = ks.map(Number)
  values.forEach((k, i) => {
    if (!Number.isInteger(k) || k < 1)
      throw new InputError('--k', 'comma-separated positive integers', JSON.stringify(ks[i]))
  })
  return [...new Set(values)].sort((a, b) => a - b)
}

function parseIds(text: string, flag: string): string[] {
  const ids = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
  if (ids.length === 0) throw new InputError(flag, 'comma-separated ids', JSON.stringify(text))
  return ids
}

function parseColumns(text: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const pair of text.split(',')) {
    const m = /^\s*([a-z]+)\s*=\s*(.+?)\s*$/.exec(pair)
    if (!m) throw new InputError('--columns', 'field=column pairs separated by commas', JSON.stringify(pair))
    out[m[1]] = m[2]
  }
  return out
}
