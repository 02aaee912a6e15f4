import {Args, Flags} from '@oclif/core'
import {KtCommand, outFlag} from '../../cli/base.js'

/** The file `kt data import` writes inside --out (plans list it in datasets.imported). */
export const IMPORTED_DATASET_FILE = 'dataset.json'

export default class DataImport extends KtCommand {
  static override summary =
    'Import labelled turns (CSV or JSONL), or a real LoCoMo conversation, as a kt importance dataset.'
  static override description =
    "Each turn needs an id, a time (ISO-8601 with a zone, or epoch seconds or milliseconds: numbers below 1e11 are seconds), its text, a ground-truth importance in [0, 1], a surprise in [0, 1] and the query it is scored against; map your column names with the --col-* flags. The reference time defaults to the latest turn time in the file (never the clock). It writes OUT/dataset.json; add that file to a plan's datasets.imported list to validate on it. With --format locomo, FILE is LoCoMo JSON and the labels come from its questions: truth = 1 - exp(-number of scored questions citing the turn as evidence); surprise is novelty against the previous turns and the query is the adjacent turn, so no signal sees the questions."
  static override examples = [
    '<%= config.bin %> data import fixtures/import/turns.csv --out data/mine',
    '<%= config.bin %> data import fixtures/memory_small.json --format locomo --conversation synth-7-1 --out reports/locomo-synth-7-1',
    '<%= config.bin %> data import fixtures/import/log.jsonl --out data/log --col-truth label --col-text content --reference-time 2025-06-01T00:00:00Z',
  ]
  static override args = {file: Args.string({description: 'a .csv (with a header row) or .jsonl file', required: true})}
  static override flags = {
    out: outFlag(`${IMPORTED_DATASET_FILE} (the importance dataset).`, {required: true}),
    format: Flags.string({
      description: 'Input format (default: from the extension; .json needs --format locomo).',
      options: ['csv', 'jsonl', 'locomo'],
    }),
    conversation: Flags.string({
      description: 'With --format locomo: the sample_id of the conversation (default: the first).',
    }),
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
    const {join} = await import('node:path')
    const {outFolder, writeFileAtomic} = await import('../../util/fs.js')
    const file = join(flags.out, IMPORTED_DATASET_FILE)
    if (flags.format === 'locomo') {
      const {loadMemoryDataset} = await import('../../data/conversations/load.js')
      const {importanceFromConversation} = await import('../../data/importance/from-conversations.js')
      const data = importanceFromConversation(loadMemoryDataset(args.file, {format: 'locomo'}), {
        conversation: flags.conversation,
        id: flags.id,
      })
      writeFileAtomic(join(outFolder(flags.out), IMPORTED_DATASET_FILE), serializeDataset(data))
      const cited = data.turns.filter((t) => t.truth > 0).length
      this.log(
        `wrote ${file}: ${data.turns.length} turns (${cited} cited as evidence), reference time ${data.reference_time}`,
      )
      return {file, id: data.id, turns: data.turns.length, cited_turns: cited, reference_time: data.reference_time}
    }
    const dataset = importLabelledTurns({
      file: args.file,
      id: flags.id ?? basename(args.file, extname(args.file)),
      referenceTime: flags['reference-time'],
      format: flags.format as 'csv' | 'jsonl' | undefined,
      columns: {
        id: flags['col-id'],
        time: flags['col-time'],
        text: flags['col-text'],
        truth: flags['col-truth'],
        surprise: flags['col-surprise'],
        query: flags['col-query'],
      },
    })
    writeFileAtomic(join(outFolder(flags.out), IMPORTED_DATASET_FILE), serializeDataset(dataset))
    this.log(
      `wrote ${file}: ${dataset.turns.length} turns, ${dataset.queries.length} queries, reference time ${dataset.reference_time}`,
    )
    return {
      file,
      id: dataset.id,
      turns: dataset.turns.length,
      queries: dataset.queries.length,
      reference_time: dataset.reference_time,
    }
  }
}
