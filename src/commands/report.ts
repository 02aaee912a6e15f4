import {Args, Flags} from '@oclif/core'
import {KtCommand} from '../cli/base.js'

export default class ReportCmd extends KtCommand {
  static override summary = "Re-render a run's report from its report.json."
  static override description =
    'Reads RUN_DIR/report.json (validating its schema and version) and writes report.md again (--format md), or report.html (--format html): the same content as one self-contained page (vega, vega-lite and vega-embed inlined; opens from disk with no network) whose charts are interactive (hover a point for its configuration and metrics, drag and scroll to pan and zoom) and whose tables sort by a click on their header. --stdout prints instead of writing.'
  static override examples = [
    '<%= config.bin %> report reports/seed42-plan226273690f7b --format md',
    '<%= config.bin %> report reports/seed42-plan226273690f7b --format html',
    '<%= config.bin %> report reports/seed42-plan226273690f7b --stdout',
  ]
  static override args = {runDir: Args.string({description: 'run folder holding report.json', required: true})}
  static override flags = {
    format: Flags.string({description: 'Output format.', options: ['md', 'json', 'html'], default: 'md'}),
    stdout: Flags.boolean({description: 'Print instead of writing the file.', default: false}),
  }

  async run(): Promise<unknown> {
    const {args, flags} = await this.parse(ReportCmd)
    const {loadReport, rerender} = await import('../report/load.js')
    const report = loadReport(args.runDir)
    const text = rerender(report, flags.format as 'md' | 'json' | 'html', `${args.runDir}/report.json`)
    if (flags.stdout) {
      if (!this.jsonEnabled()) process.stdout.write(text)
      return {format: flags.format, text}
    }
    const {writeFileAtomic} = await import('../util/fs.js')
    const file = `${args.runDir}/report.${flags.format}`
    writeFileAtomic(file, text)
    this.log(`wrote ${file}`)
    return {format: flags.format, file}
  }
}
