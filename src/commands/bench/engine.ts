import {availableParallelism, loadavg} from 'node:os'
import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'
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
    const {benchEngineAt, ENGINE_P99_TARGET_MS, ENGINE_P99_TARGET_TURNS, CLASSIFIER_TARGET_US} =
      await import('../../eval/bench-engine.js')
    const {renderTable} = await import('../../eval/table.js')
    const config =
      flags.profile === undefined
        ? undefined
        : (await import('../../eval/profile.js')).loadRetrievalProfile(flags.profile).config
    const progress = this.spinner('benchmarking')
    const rows = []
    for (const n of sizes) {
      await progress.update(`benchmarking ${n} turns`)
      rows.push(benchEngineAt(n, {seed: flags.seed, repeats: flags.repeats, config}))
    }
    await progress.succeed('done')
    const atTarget = rows.find((r) => Math.abs(r.turns - ENGINE_P99_TARGET_TURNS) / ENGINE_P99_TARGET_TURNS < 0.1)
    const classifierWorst = Math.max(...rows.map((r) => r.classifier_us))
    const verdict = {
      p99_target_ms: ENGINE_P99_TARGET_MS,
      p99_at_10000_ms: atTarget?.p99_ms ?? null,
      p99_ratio_to_target: atTarget ? atTarget.p99_ms / ENGINE_P99_TARGET_MS : null,
      cpu_p99_at_10000_ms: atTarget?.cpu_p99_ms ?? null,
      classifier_target_us: CLASSIFIER_TARGET_US,
      classifier_worst_us: classifierWorst,
      classifier_ratio_to_target: classifierWorst / CLASSIFIER_TARGET_US,
    }
    if (!this.jsonEnabled()) {
      const f = (x: number, d = 3): string => x.toFixed(d)
      this.log(
        renderTable(
          [
            'turns',
            'nodes',
            'edges',
            'build ms',
            'queries',
            'p50 ms',
            'p95 ms',
            'p99 ms',
            'cpu p99 ms',
            'bm25 p50 ms',
            'classifier us',
          ],
          rows.map((r) => [
            String(r.turns),
            String(r.nodes),
            String(r.edges),
            f(r.build_ms, 0),
            String(r.queries),
            f(r.p50_ms),
            f(r.p95_ms),
            f(r.p99_ms),
            f(r.cpu_p99_ms),
            f(r.bm25_p50_ms),
            f(r.classifier_us, 2),
          ]),
        ),
      )
      if (atTarget) {
        this.log(
          `p99 at ${atTarget.turns} turns: ${f(atTarget.p99_ms)} ms wall = ${f(verdict.p99_ratio_to_target as number, 2)} x the ${ENGINE_P99_TARGET_MS} ms target (${atTarget.p99_ms <= ENGINE_P99_TARGET_MS ? 'met' : 'MISSED'}); ${f(atTarget.cpu_p99_ms)} ms CPU time`,
        )
        this.log(
          `machine load average (1 min): ${loadavg()[0].toFixed(2)} on ${availableParallelism()} cores; wall-clock tails grow with load, CPU time much less`,
        )
      }
      this.log(
        `classifier: ${f(classifierWorst, 2)} us/query = ${f(verdict.classifier_ratio_to_target, 2)} x the ${CLASSIFIER_TARGET_US} us target (${classifierWorst <= CLASSIFIER_TARGET_US ? 'met' : 'MISSED'})`,
      )
    }
    return {rows, verdict}
  }
}
