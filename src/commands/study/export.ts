import {Args, Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'

export default class StudyExport extends KtCommand {
  static override summary = 'Export every trial of a study as CSV or JSON.'
  static override examples = ['<%= config.bin %> study export branin-bohb-s42 --format csv > trials.csv', '<%= config.bin %> study export co-1 --storage studies.sqlite --format json --out trials.json']
  static override args = {
    name: Args.string({description: 'Study name.', required: true}),
  }
  static override flags = {
    storage: Flags.string({description: 'Study storage: a SQLite file, or postgresql://user@host:port/db.', default: 'kt-studies.sqlite'}),
    format: Flags.string({description: 'csv or json.', options: ['csv', 'json'], default: 'csv'}),
    out: Flags.string({description: 'Write to this file (atomically) instead of stdout.'}),
  }

  async run(): Promise<unknown> {
    const {args, flags} = await this.parse(StudyExport)
    const {openStorage} = await import('../../study/storage.js')
    const {InputError} = await import('../../util/errors.js')
    const {writeFileAtomic} = await import('../../util/fs.js')
    const {studyJson, trialJson, trialsCsv} = await import('../../study/format.js')
    const store = await openStorage(flags.storage, {readonly: true})
    try {
      const study = await store.getStudy(args.name)
      if (!study) throw new InputError(`${store.label}: study ${args.name}`, `an existing study (${(await store.listStudies()).map((s) => s.name).join(', ') || 'none stored'})`, 'no such study')
      const trials = await store.trials(study.name)
      const text = flags.format === 'csv' ? trialsCsv(trials) : `${JSON.stringify({study: studyJson(study, trials), trials: trials.map(trialJson)}, null, 2)}\n`
      if (flags.out) {
        writeFileAtomic(flags.out, text)
        if (!this.jsonEnabled()) this.log(`wrote ${trials.length} trials to ${flags.out}`)
      } else if (!this.jsonEnabled()) process.stdout.write(text)
      return this.jsonEnabled() ? {study: studyJson(study, trials), trials: trials.map(trialJson)} : undefined
    } finally {
      await store.close()
    }
  }
}
