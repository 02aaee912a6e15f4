import {Args, Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'
import {seedFlag, storageFlag} from '../../cli/flags.js'

export default class StudyImportance extends KtCommand {
  static override summary = "Which parameters explain a study's objective: fANOVA over a random forest."
  static override description =
    "Fits a random forest (64 trees, Optuna's FanovaImportanceEvaluator settings) to the successful trials and reports each parameter's share of the fitted objective's variance (its main effect, Hutter et al. 2014), averaged over the trees, with the shares rescaled to sum to 1 as Optuna reports them. Multi-fidelity studies add the budget as one more feature, shown as \"budget (fidelity)\". --target picks a stored metric instead of the loss (e.g. p99_ms)."
  static override examples = [
    {
      description:
        "After `kt run` (its studies go to reports/seed42-plan226273690f7b): what explains the retrieval study's objective.",
      command:
        '<%= config.bin %> study importance retrieval-all --storage reports/seed42-plan226273690f7b/retrieval-studies.sqlite',
    },
    {
      description: "After `kt run`: the importance engine's BOHB study, for scripts.",
      command:
        '<%= config.bin %> study importance importance-bohb --storage reports/seed42-plan226273690f7b/studies.sqlite --json',
    },
  ]
  static override args = {name: Args.string({description: 'Study name.', required: true})}
  static override flags = {
    storage: storageFlag(),
    target: Flags.string({
      description: 'What to explain: loss (what the optimiser minimised) or a metric name.',
      default: 'loss',
    }),
    seed: seedFlag('Seed of the forest.'),
  }

  async run(): Promise<unknown> {
    const {args, flags} = await this.parse(StudyImportance)
    const {openStudyReader} = await import('../../study/reader.js')
    const {studyImportance} = await import('../../search/parameter-importance.js')
    const {requireStudy} = await import('../../study/name.js')
    const reader = await openStudyReader(flags.storage)
    try {
      const where = `${reader.location}: study ${args.name}`
      const got = await requireStudy(await reader.getStudy(args.name), where, () => reader.listStudies())
      const r = studyImportance(got.study.space as never, got.trials, {target: flags.target, seed: flags.seed})
      if (!this.jsonEnabled()) {
        this.log(`study ${args.name}: importance for ${r.target}, ${r.method}`)
        this.log(`  ${r.trials_used} of ${r.trials_ok} successful trials, ${r.trees} trees, seed ${r.seed}`)
        if (r.note) this.log(`  ${r.note}`)
        const width = Math.max(9, ...r.params.map((p) => p.param.length))
        if (r.params.length) this.log(`  ${'parameter'.padEnd(width)}  importance  variance share (sd over trees)`)
        for (const p of r.params)
          this.log(
            `  ${p.param.padEnd(width)}  ${(100 * p.importance).toFixed(1).padStart(9)}%  ${p.variance_share.toFixed(3)} (${p.variance_share_sd.toFixed(3)})`,
          )
      }
      return {study: args.name, storage: reader.location, ...r}
    } finally {
      await reader.close()
    }
  }
}
