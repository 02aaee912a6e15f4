import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'
import {reply} from '../../cli/flags.js'
import {InputError} from '../../util/errors.js'

export default class BenchEngine extends KtCommand {
  static override summary =
    'Retrieval engine speed on synthetic conversations: index build time, query latency p50/p95/p99, classifier time.'
  static override description =
    'For each corpus size, generates a seeded synthetic conversation, builds the engine (BM25, vectors, memory graph), then times every generated question, warm and in-process, through the engine (default configuration, top 20), plain BM25 and the query classifier. Targets: p99 at most 5 ms per query at 10,000 turns; the classifier at most 20 microseconds per query. Timings depend on the machine and its load.'
  static override examples = [
    '<%= config.bin %> bench engine --turns 1000 --repeats 1',
    '<%= config.bin %> bench engine --turns 300,1000 --repeats 2 --json',
  ]
  static override flags = {
    turns: Flags.string({description: 'Corpus sizes in turns, comma-separated.', default: '1000,10000,100000'}),
    repeats: Flags.integer({description: 'Timed passes over the questions per size.', default: 20, min: 1}),
    seed: Flags.integer({description: 'Seed of the synthetic corpora.', default: 42}),
    profile: Flags.string({description: 'Retrieval profile JSON to time instead of the defaults.'}),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(BenchEngine)
    const sizes = flags.turns.split(',').map((s) => {
      const n = Number(s.trim())
      if (!Number.isInteger(n) || n < 100)
        throw new InputError('--turns', 'comma-separated integers >= 100', JSON.stringify(s))
      return n
    })
    const {runEngineBench} = await import('../../eval/bench-engine.js')
    const config =
      flags.profile === undefined
        ? undefined
        : (await import('../../eval/profile.js')).loadRetrievalProfile(flags.profile).config
    const progress = this.spinner('benchmarking')
    const {json, lines} = await runEngineBench(sizes, {seed: flags.seed, repeats: flags.repeats, config}, (n) =>
      progress.update(`benchmarking ${n} turns`),
    )
    await progress.succeed('done')
    return reply(this, lines, json)
  }
}
