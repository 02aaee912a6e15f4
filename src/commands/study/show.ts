import {Args, Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'
import {DEFAULT_STORAGE} from '../../study/model.js'

export default class StudyShow extends KtCommand {
  static override summary = 'Show one study: its settings, trials per budget, and the incumbent.'
  static override examples = [
    {
      description:
        'After `kt search --objective branin --optimizer bohb --trials 100` (it stores study branin-bohb-s42 in kt-studies.sqlite, the default --storage): its settings, trials per budget and incumbent.',
      command: '<%= config.bin %> study show branin-bohb-s42',
    },
    {
      description:
        'After `kt search --objective counting_ones --budget 50 --storage studies.sqlite --study co-1`: the same with its best 10 trials, for scripts.',
      command: '<%= config.bin %> study show co-1 --storage studies.sqlite --top 10 --json',
    },
  ]
  static override args = {
    name: Args.string({description: 'Study name.', required: true}),
  }
  static override flags = {
    storage: Flags.string({
      description: 'Study storage: a SQLite file, or postgresql://user@host:port/db.',
      default: DEFAULT_STORAGE,
    }),
    top: Flags.integer({
      description: 'Also list the best N successful trials at the largest budget.',
      default: 5,
      min: 0,
    }),
  }

  async run(): Promise<unknown> {
    const {args, flags} = await this.parse(StudyShow)
    const {openStorage} = await import('../../study/storage.js')
    const {InputError} = await import('../../util/errors.js')
    const {studyJson, configLines, trialJson, studyGridCoverage} = await import('../../study/format.js')
    const store = await openStorage(flags.storage, {readonly: true})
    try {
      const study = await store.getStudy(args.name)
      if (!study)
        throw new InputError(
          `${store.label}: study ${args.name}`,
          `an existing study (${(await store.listStudies()).map((s) => s.name).join(', ') || 'none stored'})`,
          'no such study',
        )
      const trials = await store.trials(study.name)
      const view = studyJson(study, trials)
      const maxBudget = Math.max(-Infinity, ...trials.filter((t) => t.status === 'ok').map((t) => t.budget))
      const top = trials
        .filter((t) => t.status === 'ok' && t.budget === maxBudget)
        .sort((a, b) => (a.loss ?? Infinity) - (b.loss ?? Infinity) || a.id - b.id)
        .slice(0, flags.top)
      if (!this.jsonEnabled()) {
        const grid = studyGridCoverage(study, trials)
        this.log(
          `study ${study.name}: ${study.optimizer} on ${(study.objective as {name?: string}).name}, seed ${study.seed}, ${study.state}${grid && !grid.complete ? ' (partial grid)' : ''}`,
        )
        this.log(`  trials ${view.trials}: ${view.ok} ok, ${view.failed} failed, ${view.running} running`)
        if (grid) this.log(`  ${(await import('../../search/grid.js')).gridCoverageLine(grid)}`)
        for (const b of view.by_budget as Array<Record<string, number | null>>)
          this.log(
            `  budget ${b.budget}: ${b.ok} ok, ${b.failed} failed, ${b.running} running, best loss ${b.best_loss === null ? '-' : Number(b.best_loss).toPrecision(6)}`,
          )
        const best = view.best as {id: number; loss: number; budget: number; config: Record<string, unknown>} | null
        if (best)
          this.log(
            `  incumbent: trial ${best.id} at budget ${best.budget}, loss ${best.loss.toPrecision(6)}\n${configLines(best.config)}`,
          )
        if (top.length > 0)
          this.log(
            `  best ${top.length} at budget ${maxBudget}: ${top.map((t) => `#${t.id} ${t.loss?.toPrecision(5)}`).join(', ')}`,
          )
      }
      const {analyzeObjectiveStudy} = await import('../../search/analysis.js')
      const {analyzeStudy, isBiObjective} = await import('../../eval/retrieval-analysis.js')
      const spec = study.objective as {name?: string; options?: {file?: unknown}}
      const {existsSync} = await import('node:fs')
      if (spec.name === 'engine' && typeof spec.options?.file === 'string' && existsSync(spec.options.file)) {
        // an engine file's study: the front over its objectives and its own profile rules
        const engine = (await import('../../engines/file.js')).loadEngineFile(spec.options.file)
        const analysis = analyzeObjectiveStudy(trials, engine.objectives, engine.profiles)
        if (!this.jsonEnabled() && analysis.lines.length) this.log(analysis.lines.join('\n'))
        // the same snake_case record kt search prints
        const {snakeKeysOfRecord} = await import('../../util/json-keys.js')
        return {
          ...view,
          top: top.map(trialJson),
          ...(snakeKeysOfRecord({engine: engine.name, front: analysis.front, profiles: analysis.profiles}) as Record<
            string,
            unknown
          >),
        }
      }
      if (isBiObjective(trials)) {
        const analysis = analyzeStudy(trials)
        if (!this.jsonEnabled()) this.log(analysis.lines.join('\n'))
        const {snakeKeysOfRecord} = await import('../../util/json-keys.js')
        return {
          ...view,
          top: top.map(trialJson),
          ...(snakeKeysOfRecord({front: analysis.front, profiles: analysis.profiles}) as Record<string, unknown>),
        }
      }
      return {...view, top: top.map(trialJson)}
    } finally {
      await store.close()
    }
  }
}
