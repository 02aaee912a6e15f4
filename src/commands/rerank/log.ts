import {Flags} from '@oclif/core'
import {KtCommand, outFlag} from '../../cli/base.js'

export default class RerankLog extends KtCommand {
  static override summary =
    "Log the retrieval engine's candidates with their twelve reranker features and evidence labels (train/valid/test JSONL)."
  static override description =
    'Runs the engine on every scored question of a memory dataset and writes, per split, one JSONL line per candidate: {qid, label, features: {bm25, vector, activation, ...}, doc, engine_score, pool}. The label is 1 when the turn is cited as the question\'s evidence (a stand-in for feedback), else 0. The test split holds out whole conversations (20%, at least one); the other conversations\' questions are shuffled 75/25 into train and valid. Feed the files to "kt rerank train"; the model it saves records the pool, which "kt eval --reranker" then serves with (query-level columns depend on it).'
  static override examples = [
    '<%= config.bin %> rerank log --data fixtures/memory_small.json --out reports/ltr-log --test-conversations synth-7-2',
    '<%= config.bin %> rerank log --data fixtures/memory_small.json --out reports/ltr-qf --test-conversations synth-7-2 --pool 30 --query-features qrank',
  ]
  static override flags = {
    data: Flags.string({
      description: 'Dataset: LoCoMo JSON (.json), JSONL turns (.jsonl) or CSV turns (.csv).',
      required: true,
    }),
    out: outFlag('train.jsonl, valid.jsonl and test.jsonl.', {required: true}),
    pool: Flags.integer({description: "Candidates per query (the engine's top N).", default: 50, min: 1}),
    profile: Flags.string({description: "Retrieval profile JSON (default: the engine's default configuration)."}),
    seed: Flags.integer({description: 'Seed of the split.', default: 42}),
    'query-features': Flags.string({
      description:
        "Also log query-level columns: qmax (value / the query's largest), qrank (rank within the query, 0 best .. 1), comma-separated; computed by the same code the reranker runs at query time.",
    }),
    'test-conversations': Flags.string({
      description: 'Comma-separated conversation ids to hold out as the test split (default: 20% drawn with the seed).',
    }),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(RerankLog)
    const {join} = await import('node:path')
    const {loadMemoryDataset} = await import('../../data/conversations/index.js')
    const {loadRetrievalProfile} = await import('../../eval/profile.js')
    const {defaultRetrievalConfig} = await import('../../engine/retrieval/engine.js')
    const {engineFeatureLogs} = await import('../../rank/engine-log.js')
    const {parseQueryFeatureKinds} = await import('../../rank/query-features.js')
    const {table} = await import('../../rank/table.js')
    const {writeFileAtomic} = await import('../../util/fs.js')
    const profile =
      flags.profile === undefined
        ? {config: defaultRetrievalConfig(), overrides: undefined}
        : loadRetrievalProfile(flags.profile)
    const dataset = loadMemoryDataset(flags.data)
    const spinner = this.spinner(`kt rerank log: ranking ${dataset.questions.length} questions`)
    const logs = engineFeatureLogs(dataset, profile.config, {
      pool: flags.pool,
      seed: flags.seed,
      engine: {overrides: profile.overrides},
      testConversations: flags['test-conversations']?.split(',').map((id) => id.trim()),
      queryFeatures:
        flags['query-features'] === undefined
          ? []
          : parseQueryFeatureKinds(flags['query-features'], '--query-features'),
    })
    const files = logs.splits.map((s) => {
      const file = join(flags.out, `${s.split}.jsonl`)
      writeFileAtomic(file, s.text)
      return {
        split: s.split,
        file,
        queries: s.queries,
        judged: s.judged,
        candidates: s.candidates,
        conversations: s.conversations,
      }
    })
    await spinner.succeed(`kt rerank log: wrote ${flags.out}`)
    if (!this.jsonEnabled()) {
      this.log(
        table(
          ['split', 'file', 'queries', 'evidence in pool', 'candidates', 'conversations'],
          files.map((f) => [
            f.split,
            f.file,
            String(f.queries),
            String(f.judged),
            String(f.candidates),
            f.conversations.join(' '),
          ]),
          [0, 1, 5],
        ),
      )
      this.log(
        `split unit: ${logs.unit}; pool ${flags.pool}; label 1 = evidence turn${flags['query-features'] ? `; query features: ${flags['query-features']}` : ''}`,
      )
    }
    return {unit: logs.unit, pool: flags.pool, files}
  }
}
