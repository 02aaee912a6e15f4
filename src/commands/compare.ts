import {Args, Flags} from '@oclif/core'
import {KtCommand} from '../cli/base.js'
import {InputError} from '../util/errors.js'

export default class Compare extends KtCommand {
  static override summary =
    'Compare two evaluations of one engine on the same questions (a PR report): paired bootstrap intervals, a verdict per metric and category, what changed.'
  static override description =
    'BASE and HEAD are run folders (kt run; their questions.json) or kt eval --engine --json outputs, or, with --engine and --data, two profiles of that engine evaluated now. For every shared metric, overall and per question category: BASE, HEAD, HEAD - BASE with a paired bootstrap 95% interval over the shared questions, and a verdict: improved (interval above 0), regressed (interval below 0 and the difference worse than -margin), not shown non-inferior (the interval reaches below -margin) or no clear change. Also latency with its kind (measured or cost model) and what changed (parameter values, engine file, data, kt version). Runs on different data are refused unless --allow-different-data. Exit 0 when nothing regressed, 1 when something did (with --strict also when something is not shown non-inferior), 2 on bad input.'
  static override examples = [
    {
      description:
        'Two profiles of the example retrieval service evaluated now on the same data; the narrow one regresses recall@10 (exit 1).',
      command:
        '<%= config.bin %> compare examples/python-engine/profiles/wide.json examples/python-engine/profiles/narrow.json --engine examples/python-engine/engine.service.json --data fixtures/memory_small.json',
    },
    {
      description: 'The same profile on both sides, as JSON for tools: no clear change (exit 0).',
      command:
        '<%= config.bin %> compare examples/python-engine/profiles/wide.json examples/python-engine/profiles/wide.json --engine examples/python-engine/engine.service.json --data fixtures/memory_small.json --format json',
    },
  ]
  static override args = {
    base: Args.string({
      description: 'The base: a run folder, a kt eval --engine --json output, or (with --engine) a profile.',
      required: true,
    }),
    head: Args.string({description: 'The head, of the same kind as BASE.', required: true}),
  }
  static override flags = {
    margin: Flags.string({
      description:
        'Non-inferiority margin: the largest loss (absolute, metric units) a change may not be shown to exceed.',
      default: '0.01',
    }),
    format: Flags.string({
      description: 'Output: Markdown (a PR comment) or JSON.',
      options: ['md', 'json'],
      default: 'md',
    }),
    strict: Flags.boolean({description: 'Exit 1 also when a metric is not shown non-inferior.', default: false}),
    'allow-different-data': Flags.boolean({
      description: 'Compare runs on different data (dataset sha256) anyway; the report says so.',
      default: false,
    }),
    system: Flags.string({
      description: "The system of each side to compare: a profile name of a run (default: the run's first profile).",
    }),
    engine: Flags.string({description: 'Evaluate BASE and HEAD (profiles of this engine file) now; needs --data.'}),
    data: Flags.string({description: 'The dataset BASE and HEAD are evaluated on now (with --engine).'}),
  }

  async run(): Promise<unknown> {
    const {args, flags} = await this.parse(Compare)
    const margin = Number(flags.margin)
    if (!Number.isFinite(margin) || margin < 0)
      throw new InputError('--margin', 'a number >= 0', JSON.stringify(flags.margin))
    const {compareFromFiles} = await import('../report/compare-load.js')
    const {compareExitCode} = await import('../report/compare-runs.js')
    const progress = this.spinner(`comparing ${args.head} against ${args.base}`)
    const comparison = await compareFromFiles({
      base: args.base,
      head: args.head,
      engine: flags.engine,
      data: flags.data,
      margin,
      system: flags.system,
      allowDifferentData: flags['allow-different-data'],
    }).catch(async (error: unknown) => {
      await progress.fail()
      throw error
    })
    await progress.succeed(`${comparison.verdict} on ${comparison.shared_questions} shared questions`)
    // CI fails the job on the exit code: 1 on a regression (with --strict, also on doubt)
    const code = compareExitCode(comparison, flags.strict)
    if (code !== 0) process.exitCode = code
    if (this.jsonEnabled()) return comparison
    if (flags.format === 'json') this.log(JSON.stringify(comparison, null, 2))
    else this.log((await import('../report/compare-render.js')).renderCompareMarkdown(comparison))
    return comparison
  }
}
