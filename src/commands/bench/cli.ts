import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'
import {reply} from '../../cli/flags.js'

export default class BenchCli extends KtCommand {
  static override summary = 'Wall time of a whole `kt run` (all phases, all charts) and of `kt --help`.'
  static override description =
    'Starts each as a fresh process, several times, and prints the median against the targets (kt run under 2 s, kt --help under 200 ms).'
  static override examples = ['<%= config.bin %> bench cli --runs 1 --json']
  static override flags = {runs: Flags.integer({description: 'Processes per command.', default: 3, min: 1})}

  async run(): Promise<unknown> {
    const {flags} = await this.parse(BenchCli)
    const {benchCli, cliBenchLines} = await import('../../bench/cli.js')
    const r = benchCli(flags.runs)
    return reply(this, cliBenchLines(r), r)
  }
}
