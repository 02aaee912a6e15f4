import {Flags} from '@oclif/core'
import {KtCommand} from '../cli/base.js'
import {InputError} from '../util/errors.js'
import {dataFlag, dataFormatFlag, registryFlag, reply} from '../cli/flags.js'

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
    '<%= config.bin %> eval --data fixtures/memory_small.json --category temporal,multi-hop --against fixtures/profile-balanced-fusion.json',
    '<%= config.bin %> eval --engine examples/python-engine/engine.service.json --data fixtures/memory_small.json',
  ]
  static override flags = {
    data: dataFlag({required: true}),
    profile: Flags.string({
      description:
        'Retrieval profile JSON: a kt profile, or parameter values (others default), or {config, overrides}.',
    }),
    k: Flags.string({description: 'Cut-offs for recall@k and hit@k, comma-separated.', default: '1,5,10,20'}),
    format: dataFormatFlag(),
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
    registry: registryFlag('Reranker registry folder read by --reranker deployed.'),
    engine: Flags.string({
      description:
        "Evaluate an external engine instead of kt's: an engine file (kt_engine: 1) whose evaluate.kind is retrieval-service. --profile and --against then hold that engine's parameter values.",
    }),
    category: Flags.string({
      description:
        'Score only the questions of these categories (comma-separated: single-hop, multi-hop, temporal, open-domain).',
    }),
    against: Flags.string({
      description:
        "Compare with a second retrieval profile on the same questions: every metric's difference (this minus --profile, or minus the defaults) with a paired bootstrap 95% interval, overall and per question category.",
    }),
    'rerank-pool': Flags.integer({
      description:
        "Engine candidates the reranker reorders per query, at least the deepest cut-off and 10 (default: the pool the model's training log was written with, recorded in the model, else 50). A model with query-level columns refuses any other pool than its recorded one.",
    }),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(Eval)
    const {runEvalRequest} = await import('../eval/eval-request.js')
    const {json, text} = await runEvalRequest(
      {
        data: flags.data,
        ks: parseKs(flags.k),
        format: flags.format as 'locomo' | 'jsonl' | 'csv' | undefined,
        columns: flags.columns === undefined ? undefined : parseColumns(flags.columns),
        questions: flags.questions,
        conversations: flags.conversation === undefined ? undefined : parseIds(flags.conversation, '--conversation'),
        categories: flags.category === undefined ? undefined : parseIds(flags.category, '--category'),
        profile: flags.profile,
        against: flags.against,
        engine: flags.engine,
        reranker:
          flags.reranker === undefined
            ? undefined
            : {model: flags.reranker, registry: flags.registry, pool: flags['rerank-pool']},
      },
      {
        start: (line) => this.spinner(line),
        // on stderr even under --json
        warn: (line) => process.stderr.write(`kt: warning: ${line}\n`),
      },
    )
    return reply(this, text, json)
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
