import {Args, Flags} from '@oclif/core'
import {once} from 'node:events'
import {KtCommand, outFlag} from '../../cli/base.js'
import type {ExportFormat} from '../../study/export.js'
import {storageFlag} from '../../cli/flags.js'

export default class StudyExport extends KtCommand {
  static override summary = 'Export every trial of a study as CSV or JSON.'
  static override description =
    'Without --out the trials go to stdout; with --out DIR they are written (atomically) to DIR/<study>.csv or DIR/<study>.json, where <study> is the study name with every character other than a letter, digit, ".", "_" or "-" replaced by "_".'
  static override examples = [
    {
      description:
        'After `kt search --objective branin --optimizer bohb --trials 100` (it stores study branin-bohb-s42 in kt-studies.sqlite, the default --storage): every trial as CSV.',
      command: '<%= config.bin %> study export branin-bohb-s42 --format csv > trials.csv',
    },
    {
      description:
        'After `kt search --objective counting_ones --budget 50 --storage studies.sqlite --study co-1`: every trial as JSON, written to a folder.',
      command: '<%= config.bin %> study export co-1 --storage studies.sqlite --format json --out reports/trials',
    },
  ]
  static override args = {
    name: Args.string({description: 'Study name.', required: true}),
  }
  static override flags = {
    storage: storageFlag(),
    format: Flags.string({description: 'csv or json.', options: ['csv', 'json'], default: 'csv'}),
    out: outFlag('<study>.csv or <study>.json (instead of stdout).'),
  }

  async run(): Promise<unknown> {
    const {args, flags} = await this.parse(StudyExport)
    const {openStorage} = await import('../../study/storage.js')
    const {requireStudy} = await import('../../study/name.js')
    const {join} = await import('node:path')
    const {outFolder, writeFileAtomic, writeFileAtomicFrom} = await import('../../util/fs.js')
    const {studyJson, trialJson, trialsCsv} = await import('../../study/format.js')
    const {exportStudy} = await import('../../study/export.js')
    const store = await openStorage(flags.storage, {readonly: true})
    try {
      const where = `${store.label}: study ${args.name}`
      const study = await requireStudy(await store.getStudy(args.name), where, () => store.listStudies())
      if (this.jsonEnabled()) {
        // --json prints one document: the whole study in memory (use --format json without --json to stream)
        const trials = await store.trials(study.name)
        let file: string | undefined
        if (flags.out) {
          file = join(outFolder(flags.out), `${exportFileStem(study.name)}.${flags.format}`)
          const text =
            flags.format === 'csv'
              ? trialsCsv(trials)
              : `${JSON.stringify({study: studyJson(study, trials), trials: trials.map(trialJson)}, null, 2)}\n`
          writeFileAtomic(file, text)
        }
        return {study: studyJson(study, trials), trials: trials.map(trialJson), ...(file ? {file} : {})}
      }
      const streamed = exportStudy(store, study, flags.format as ExportFormat)
      if (flags.out) {
        const file = join(outFolder(flags.out), `${exportFileStem(study.name)}.${flags.format}`)
        await writeFileAtomicFrom(file, streamed.chunks)
        this.log(`wrote ${streamed.trials()} trials to ${file}`)
      } else await writeToStdout(streamed.chunks)
      return undefined
    } finally {
      await store.close()
    }
  }
}

/** A study name as a file name: only letters, digits, ".", "_" and "-" (so "a/b" or ".." cannot leave --out). */
export function exportFileStem(name: string): string {
  const stem = name.replace(/[^A-Za-z0-9._-]/g, '_')
  return /^\.*$/.test(stem) ? stem.replace(/\./g, '_') : stem
}

/** Writes the pieces to stdout, waiting while its buffer is full (a pipe to a slow reader holds one piece, not the study). */
async function writeToStdout(chunks: AsyncIterable<string>): Promise<void> {
  for await (const chunk of chunks) if (!process.stdout.write(chunk)) await once(process.stdout, 'drain')
}
