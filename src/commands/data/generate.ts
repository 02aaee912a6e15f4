import {Flags} from '@oclif/core'
import {join} from 'node:path'
import {KtCommand, outFlag} from '../../cli/base.js'

export default class DataGenerate extends KtCommand {
  static override summary = 'Generate the seeded synthetic datasets (the committed fixtures by default).'
  static override description =
    'Writes realistic_100, recency_bias_75 and uniform_50 (importance turns with ground truth and a pinned reference time) to fixtures/, byte-identical on every machine and day. With --check, compares instead of writing and fails if a committed fixture differs.'
  static override examples = [
    '<%= config.bin %> data generate',
    '<%= config.bin %> data generate --check',
    '<%= config.bin %> data generate --out reports/fixtures-copy',
    '<%= config.bin %> data generate --kind memory',
  ]
  static override flags = {
    kind: Flags.string({
      description:
        'What to generate: importance fixtures, or memory (synthetic multi-session conversations with gold evidence, LoCoMo-shaped).',
      options: ['importance', 'memory'],
      default: 'importance',
    }),
    out: outFlag('<id>.json per dataset (default: the package fixtures/ folder).'),
    check: Flags.boolean({
      description: 'Do not write: verify that the files in the folder are byte-identical to a fresh generation.',
      default: false,
    }),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(DataGenerate)
    const {fixturesDir} = await import('../../util/paths.js')
    if (flags.kind === 'memory') {
      const {generateMemoryFixtures} = await import('../../data/memory-synth/fixtures.js')
      const results = generateMemoryFixtures(flags.out ?? fixturesDir, flags.check)
      for (const r of results)
        this.log(
          `${r.status.padEnd(9)} ${join(flags.out ?? 'fixtures', `${r.id}.json`)} (${r.turns} turns, ${r.questions} questions)`,
        )
      if (flags.check && results.some((r) => r.status !== 'identical'))
        this.error('a fixture differs from its generator', {exit: 1})
      return {files: results}
    }
    const {generateImportanceFixtures} = await import('../../data/importance/fixtures.js')
    const results = generateImportanceFixtures(flags.out ?? fixturesDir, flags.check)
    for (const r of results)
      this.log(`${r.status.padEnd(9)} ${join(flags.out ?? 'fixtures', `${r.id}.json`)} (${r.turns} turns)`)
    if (flags.check && results.some((r) => r.status !== 'identical'))
      this.error('a fixture differs from its generator', {exit: 1})
    return {files: results}
  }
}
