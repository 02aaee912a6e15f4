import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'

export default class BenchCli extends KtCommand {
  static override summary = 'Wall time of a whole `kt run` (all phases, all charts) and of `kt --help`.'
  static override description =
    'Starts each as a fresh process, several times, and prints the median against the targets (kt run under 2 s, kt --help under 200 ms).'
  static override examples = ['<%= config.bin %> bench cli --runs 1 --json']
  static override flags = {runs: Flags.integer({description: 'Processes per command.', default: 3, min: 1})}

  async run(): Promise<unknown> {
    const {flags} = await this.parse(BenchCli)
    const {benchCli} = await import('../../bench/cli.js')
    const r = benchCli(flags.runs)
    this.log(
      `kt run: median ${r.kt_run_ms.median.toFixed(0)} ms (min ${r.kt_run_ms.min.toFixed(0)}, max ${r.kt_run_ms.max.toFixed(0)}); target < ${r.target_run_ms} ms: ${r.run_meets_target ? 'met' : 'MISSED'}`,
    )
    this.log(
      `kt run without the plan's retrieval study: median ${r.kt_run_without_retrieval_ms.median.toFixed(0)} ms (min ${r.kt_run_without_retrieval_ms.min.toFixed(0)}, max ${r.kt_run_without_retrieval_ms.max.toFixed(0)})`,
    )
    this.log(
      `kt --help: median ${r.kt_help_ms.median.toFixed(0)} ms (min ${r.kt_help_ms.min.toFixed(0)}, max ${r.kt_help_ms.max.toFixed(0)}); target < ${r.target_help_ms} ms: ${r.help_meets_target ? 'met' : 'MISSED'}`,
    )
    return r
  }
}
