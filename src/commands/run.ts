import {Flags} from '@oclif/core'
import {KtCommand, commonFlags} from '../cli/base.js'

export default class Run extends KtCommand {
  static override summary = 'Run all seven phases of the study and write the report.'
  static override description = 'Runs property tests, datasets, ablation, search, validation, deploy profiles and charts, and writes report.json, report.md, charts/ and profiles/ to the output folder (default reports/<run-id>/). The run id comes from the seed and the plan, so the same inputs land in the same folder and give a byte-identical report.json (its timing section aside).'
  static override examples = ['<%= config.bin %> run', '<%= config.bin %> run --seed 7 --out reports/study-seed7', '<%= config.bin %> run --plan phases/plan.default.json --json']
  static override flags = {
    ...commonFlags,
    resume: Flags.boolean({description: 'Reuse the phase results an interrupted run with the same inputs left in the output folder.', default: false}),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(Run)
    const {runAndSummarise} = await import('../cli/study.js')
    return runAndSummarise(this, {planFile: flags.plan, seed: flags.seed, outDir: flags.out, resume: flags.resume})
  }
}
