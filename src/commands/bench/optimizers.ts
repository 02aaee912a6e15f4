import {Flags} from '@oclif/core'
import {KtCommand, outFlag} from '../../cli/base.js'

export default class BenchOptimizers extends KtCommand {
  static override summary =
    'Benchmark the optimisers on the contract functions (../shared/benchmarks/optimizer-functions.md).'
  static override description =
    'Runs each optimiser on each function for each seed until 200 evaluations and 200 b_max of consumed budget, and reports regret (true loss of the incumbent minus the optimum) after 25/50/100/200 evaluations and 25/50/100/200 b_max. Prints median [IQR] per checkpoint, checks BOHB against random and against the medians of Optuna 3.1 on the same contract (TPE, with Hyperband on the multi-fidelity functions), and writes runs.jsonl, summary.json and a regret-vs-budget chart (vega-lite spec, rendered to SVG/PNG) to --out. With --json, stdout carries one JSON line per run. With --suite all: the optimisers of kt on the broader suite (src/bench/suite) beside the cached runs of Optuna 3.1 at equal cost, one row per function and checkpoint (10/25/50/100 b_max), writing suite.json to --out.'
  static override examples = [
    '<%= config.bin %> bench optimizers --function branin --optimizer bohb --seeds 0-2',
    '<%= config.bin %> bench optimizers --function counting_ones --optimizer random,bohb --seeds 0-1 --json',
    '<%= config.bin %> bench optimizers --suite all --function learning_curves,mixed --optimizer bohb,hyperband --seeds 0-1',
  ]
  static override flags = {
    suite: Flags.string({
      description:
        'contract: the functions of ../shared/benchmarks/optimizer-functions.md; all: the broader multi-fidelity suite (src/bench/suite) against Optuna 3.1 at equal cost, regret at 10/25/50/100 b_max.',
      options: ['contract', 'all'],
      default: 'contract',
    }),
    'refresh-peer': Flags.boolean({
      description:
        'With --suite all: re-run Optuna (needs /usr/bin/python3 with python3-optuna; minutes per function) and replace the runs of the functions and seeds asked for in src/bench/suite/optuna-suite.json instead of reading them.',
      default: false,
    }),
    function: Flags.string({
      description:
        'Functions, comma-separated. Contract: branin, hartmann6, counting_ones, simplex, simplex_mf (the default). Suite: branin_mf, hartmann6_mf, park_mf, borehole_mf, currin_mf, embedded20, learning_curves, mixed, crash_hartmann6, hetero_branin (all by default).',
    }),
    optimizer: Flags.string({
      description:
        'Optimisers, comma-separated: random, grid, bohb, hyperband (default random,grid,bohb; bohb with --suite all).',
    }),
    seeds: Flags.string({description: 'Seeds: a range like 0-9 or a list like 0,1,2.', default: '0-9'}),
    out: outFlag('runs.jsonl, summary.json and the chart (regret-vs-budget.vl.json, .svg, .png).', {
      default: 'reports/bench-optimizers',
    }),
    'no-chart': Flags.boolean({
      description: 'Skip rendering the chart (the vega-lite spec is still written).',
      default: false,
    }),
    'bohb-reference': Flags.boolean({
      description: 'Run BOHB exactly as hpbandster (no magic-clip bandwidth floor), for comparison.',
      default: false,
    }),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(BenchOptimizers)
    const {join} = await import('node:path')
    const {writeFileAtomic} = await import('../../util/fs.js')
    const {benchmarkObjective} = await import('../../search/benchmarks/index.js')
    const {checkOptimizerName} = await import('../../search/optimizers.js')
    const {runBenchmark, summarizeRuns} = await import('../../bench/optimizers.js')
    const report = await import('../../bench/optimizers-report.js')
    if (flags.suite === 'all') return this.suite(flags)
    const functions = (flags.function ?? 'branin,hartmann6,counting_ones,simplex,simplex_mf')
      .split(',')
      .map((f) => f.trim())
      .filter(Boolean)
    for (const f of functions) benchmarkObjective(f)
    const optimizers = (flags.optimizer ?? 'random,grid,bohb').split(',').map((o) => checkOptimizerName(o.trim()))
    const seeds = report.parseSeeds(flags.seeds)
    const json = this.jsonEnabled()
    const spinner = this.spinner('bench optimizers')
    const groups = new Map<string, ReturnType<typeof runBenchmark>[]>()
    const lines: string[] = []
    for (const fn of functions) {
      for (const opt of optimizers) {
        const runs: ReturnType<typeof runBenchmark>[] = []
        for (const seed of seeds) {
          await spinner.update(`bench optimizers: ${fn} ${opt} seed ${seed}`)
          const run = runBenchmark(fn as never, opt, seed, {
            settings: flags['bohb-reference'] ? {bohb: {reference: true}} : undefined,
          })
          runs.push(run)
          const line = JSON.stringify(run, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? null : v))
          lines.push(line)
          if (json) process.stdout.write(`${line}\n`)
        }
        groups.set(`${fn}/${opt}`, runs)
      }
    }
    await spinner.succeed(`bench optimizers: ${lines.length} runs`)
    const summaries = [...groups.values()].map((runs) => summarizeRuns(runs))
    const {compareWithOptuna, peerLines} = await import('../../bench/optimizers-optuna.js')
    const peers = summaries.filter((s) => s.optimizer === 'bohb').flatMap((s) => compareWithOptuna(s) ?? [])
    const checks = functions.flatMap((fn) =>
      groups.has(`${fn}/bohb`) && groups.has(`${fn}/random`)
        ? [report.checkTargets(groups.get(`${fn}/bohb`)!, groups.get(`${fn}/random`)!)]
        : [],
    )
    writeFileAtomic(join(flags.out, 'runs.jsonl'), `${lines.join('\n')}\n`)
    writeFileAtomic(
      join(flags.out, 'summary.json'),
      `${JSON.stringify({seeds, summaries, targets: checks, peer_optuna: peers}, null, 2)}\n`,
    )
    const spec = report.regretChartSpec(groups)
    const specPath = join(flags.out, 'regret-vs-budget.vl.json')
    writeFileAtomic(specPath, `${JSON.stringify(spec)}\n`)
    let chartNote = `chart spec: ${specPath}`
    if (!flags['no-chart']) {
      try {
        const {renderChart, withChartDefaults} = await import('../../report/render.js')
        const chart = await renderChart(withChartDefaults(spec))
        writeFileAtomic(join(flags.out, 'regret-vs-budget.svg'), chart.svg)
        writeFileAtomic(join(flags.out, 'regret-vs-budget.png'), chart.png)
        chartNote = `chart: ${join(flags.out, 'regret-vs-budget.png')} (spec ${specPath})`
      } catch (error) {
        chartNote = `chart spec: ${specPath} (not rendered: ${(error as Error).message.split('\n')[0]})`
      }
    }
    if (json) {
      process.stderr.write(`${chartNote}\n`)
      return undefined
    }
    this.log(`median regret [IQR] over seeds ${flags.seeds} (budget checkpoints in b_max, continuation accounting)`)
    this.log(report.summaryTable(summaries))
    if (checks.length > 0) this.log(`\n${report.targetLines(checks)}`)
    if (peers.length > 0)
      this.log(
        `\nagainst the peer (../shared/benchmarks/optuna-results.md, seeds 0-9; compare with --seeds 0-9):\n${peerLines(peers)}`,
      )
    this.log(`\nruns: ${join(flags.out, 'runs.jsonl')}\n${chartNote}`)
    return undefined
  }

  /** --suite all: kt's optimisers on the broader suite beside Optuna's cached runs. */
  private async suite(flags: {
    function?: string
    optimizer?: string
    seeds: string
    out: string
    'refresh-peer': boolean
    'bohb-reference': boolean
  }): Promise<unknown> {
    const {join} = await import('node:path')
    const {writeFileAtomic} = await import('../../util/fs.js')
    const {checkOptimizerName} = await import('../../search/optimizers.js')
    const {parseSeeds} = await import('../../bench/optimizers-report.js')
    const {SUITE_NAMES, suiteFunction} = await import('../../bench/suite/suite.js')
    const {suiteBench, suiteTable} = await import('../../bench/suite/report.js')
    const functions = flags.function ? flags.function.split(',').map((f) => f.trim()) : [...SUITE_NAMES]
    for (const f of functions) suiteFunction(f)
    const optimizers = (flags.optimizer ?? 'bohb').split(',').map((o) => checkOptimizerName(o.trim()))
    const seeds = parseSeeds(flags.seeds)
    const spinner = this.spinner('bench optimizers --suite all')
    const result = await suiteBench({
      functions,
      seeds,
      optimizers,
      settings: flags['bohb-reference'] ? {bohb: {reference: true}} : undefined,
      refreshPeer: flags['refresh-peer'],
      progress: (text) => void spinner.update(`bench optimizers: ${text}`),
    })
    await spinner.succeed(`bench optimizers --suite all: ${result.runs.length} kt runs`)
    writeFileAtomic(join(flags.out, 'suite.json'), `${JSON.stringify(result, null, 1)}\n`)
    if (this.jsonEnabled()) return {reports: result.reports}
    this.log(`median regret [IQR] of the incumbent (noise-free), seeds ${flags.seeds}, at equal cost (b_max units)`)
    for (const report of result.reports) this.log(`\n${suiteTable(report)}`)
    this.log(`\nruns: ${join(flags.out, 'suite.json')}`)
    return undefined
  }
}
