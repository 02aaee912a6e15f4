import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'

export default class BenchAdapters extends KtCommand {
  static override summary =
    "Measure what kt adds around an external engine: per-trial overhead, parallel throughput, and the retrieval service's per-query overhead."
  static override description =
    "Runs real studies through the whole kt search --engine path (engine file, study runner, SQLite store, optimiser, command adapter). Overhead: the median time per trial of a no-op command (/bin/echo of a metrics line) minus the command's own median run time spawned bare; target <= 5 ms. Throughput: a 200 ms command (sh -c 'sleep 0.2; echo ...') at --workers 8 against one worker; target >= 7x. Timings depend on the machine's load, printed beside them. Retrieval service: kt's own CPU time per query at 1,000 searches over keep-alive HTTP against a no-op server in another process (message, HTTP client, reply parsed and checked, ranking scored); target <= 0.1 ms."
  static override examples = [
    '<%= config.bin %> bench adapters --trials 10 --slow-trials 2',
    '<%= config.bin %> bench adapters --trials 10 --slow-trials 2 --json',
  ]
  static override flags = {
    trials: Flags.integer({description: 'No-op trials timed.', default: 60, min: 5}),
    'slow-trials': Flags.integer({
      description: '200 ms trials with one worker (eight workers run eight times as many).',
      default: 8,
      min: 2,
    }),
    seed: Flags.integer({description: 'Seed of the random search that proposes the trials.', default: 42}),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(BenchAdapters)
    const {runAdapterBenches} = await import('../../bench/adapters.js')
    const spinner = this.spinner('kt bench adapters')
    const r = await runAdapterBenches(
      {trials: flags.trials, slowTrials: flags['slow-trials'], seed: flags.seed},
      (name) => void spinner.update(`kt bench adapters: ${name} done`),
    )
    await spinner.succeed()
    for (const l of r.lines) {
      this.log(
        `${l.name}: ${l.unit === 'x' ? `${l.value.toFixed(2)}x` : `${l.value.toFixed(2)} ${l.unit}`} (target ${l.target}: ${l.met ? 'met' : 'MISSED'})`,
      )
      this.log(`  ${l.detail}`)
    }
    this.log(`load average ${r.load.before.toFixed(2)} before, ${r.load.after.toFixed(2)} after, ${r.load.cores} cores`)
    return {lines: r.lines, load: r.load}
  }
}
