import {Args, Flags} from '@oclif/core'
import {KtCommand, commonFlags} from '../cli/base.js'

export default class Phase extends KtCommand {
  static override summary = 'Run one phase of the study (with the phases it needs) and write the report.'
  static override description =
    'PHASE is a number 1-7 or a name: properties, synthetic, ablation, search, validation, deploy, visualize. Phases that PHASE reads from (e.g. search for validation) run first and are recorded in the report. Exit codes: 1 when a check that ran failed (a property violated, a leak flagged, a validation criterion failed, or nothing to validate on); 0 otherwise. A run without the validation (phases 1-4) is never called a pass: its verdict is n/a (exit 0 when nothing that ran failed); 2 on bad input.'
  static override examples = [
    '<%= config.bin %> phase 3',
    '<%= config.bin %> phase ablation --seed 7',
    {
      description: 'Validation alone (with the phases it reads); the default optimum fails one criterion (exit 1).',
      command: '<%= config.bin %> phase 5 --json',
    },
  ]
  static override args = {phase: Args.string({description: 'phase number (1-7) or name', required: true})}
  static override flags = {
    ...commonFlags,
    resume: Flags.boolean({
      description:
        "Reuse the phase results an interrupted run left in the output folder, each only if computed from the same inputs (sha256 of the plan, datasets, retrieval data and engine files, and of kt's code) and with its output files intact; --json lists the phases not reused and why.",
      default: false,
    }),
  }

  async run(): Promise<unknown> {
    const {args, flags} = await this.parse(Phase)
    const {findPhase} = await import('../../phases/runner.js')
    const {runAndSummarise} = await import('../cli/study.js')
    const phase = findPhase(args.phase)
    return runAndSummarise(this, {
      planFile: flags.plan,
      seed: flags.seed,
      outDir: flags.out,
      resume: flags.resume,
      phases: [phase.name],
    })
  }
}
