import {Args, Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'

export default class DataImport extends KtCommand {
  static override summary = 'Import your own labelled turns (CSV or JSONL) as a kt dataset.'
  static override description = 'Each turn needs an id, a time (ISO-8601 with a zone, or epoch seconds), its text, a ground-truth importance in [0, 1], a surprise in [0, 1] and the query it is scored against; map your column names with the --col-* flags. The reference time defaults to the latest turn time in the file (never the clock). Add the written file to a plan\'s datasets.imported list to validate on it.'
  static override examples = [
    '<%= config.bin %> data import turns.csv --out data/mine.json',
    '<%= config.bin %> data import log.jsonl --out data/log.json --col-truth label --col-text content --reference-time 2025-06-01T00:00:00Z',
  ]
  static override args = {file: Args.string({description: 'a .csv (with a header row) or .jsonl file', required: true})}
  static override flags = {
    out: Flags.string({description: 'Dataset JSON to write.', required: true}),
    id: Flags.string({description: 'Dataset id (default: the file name).'}),
    'reference-time': Flags.string({description: 'ISO UTC time ages are measured from (default: the latest turn).'}),
    'col-id': Flags.string({description: 'Column of the turn id.', default: 'id'}),
    'col-time': Flags.string({description: 'Column of the turn time.', default: 'time'}),
    'col-text': Flags.string({description: 'Column of the turn text.', default: 'text'}),
    'col-truth': Flags.string({description: 'Column of the ground-truth importance.', default: 'truth'}),
    'col-surprise': Flags.string({description: 'Column of the surprise signal.', default: 'surprise'}),
    'col-query': Flags.string({description: 'Column of the query text.', default: 'query'}),
  }

  async run(): Promise<unknown> {
    const {args, flags} = await this.parse(DataImport)
    const {basename, extname} = await import('node:path')
    const {importLabelledTurns} = await import('../../data/importance/import.js')
    const {serializeDataset} = await import('../../data/importance/dataset.js')
    const {writeFileAtomic} = await import('../../util/fs.js')
    const dataset = importLabelledTurns({
      file: args.file,
      id: flags.id ?? basename(args.file, extname(args.file)),
      referenceTime: flags['reference-time'],
      columns: {id: flags['col-id'], time: flags['col-time'], text: flags['col-text'], truth: flags['col-truth'], surprise: flags['col-surprise'], query: flags['col-query']},
    })
    writeFileAtomic(flags.out, serializeDataset(dataset))
    this.log(`wrote ${flags.out}: ${dataset.turns.length} turns, ${dataset.queries.length} queries, reference time ${dataset.reference_time}`)
    return {file: flags.out, id: dataset.id, turns: dataset.turns.length, queries: dataset.queries.length, reference_time: dataset.reference_time}
  }
}
