import {Flags} from '@oclif/core'
import {KtCommand, outFlag} from '../../cli/base.js'

export default class RerankGenerate extends KtCommand {
  static override summary = 'Generate seeded synthetic learning-to-rank data (the committed fixtures/ltr/ by default).'
  static override description =
    'Twelve features with known relevance relationships (linear signals, an AND interaction, a non-monotone feature, a noisy copy, a discrete feature, noise) and graded labels 0..4. Writes train.txt, valid.txt, test.txt (LETOR text) and the first test queries again as test-small.libsvm + .query and test-small.jsonl. Without size flags it regenerates the committed fixture byte for byte; --check verifies it instead of writing. --structure linear writes a control set where every feature enters linearly.'
  static override examples = [
    '<%= config.bin %> rerank generate --check',
    '<%= config.bin %> rerank generate --out reports/ltr --queries 120,40,40 --docs 10,30 --seed 1',
  ]
  static override flags = {
    out: outFlag(
      'train.txt, valid.txt, test.txt, test-small.libsvm, test-small.libsvm.query and test-small.jsonl (default: the package fixtures/ltr/).',
    ),
    queries: Flags.string({description: "Queries in train,valid,test (default: the fixture's 40,15,15)."}),
    docs: Flags.string({description: 'Fewest,most documents per query (default 6,14).'}),
    seed: Flags.integer({description: "Seed of the generator (default: the fixture's)."}),
    structure: Flags.string({
      description: 'mixed: linear and non-linear terms; linear: a linear-only control.',
      options: ['mixed', 'linear'],
      default: 'mixed',
    }),
    check: Flags.boolean({
      description: 'Do not write: verify that the files in the folder equal a fresh generation.',
      default: false,
    }),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(RerankGenerate)
    const {join} = await import('node:path')
    const {existsSync, readFileSync} = await import('node:fs')
    const {InputError} = await import('../../util/errors.js')
    const {writeFileAtomic} = await import('../../util/fs.js')
    const {fixturesDir} = await import('../../util/paths.js')
    const {FIXTURE_SPEC, fixtureFiles} = await import('../../rank/synthetic.js')
    const integers = (name: string, text: string, count: number): number[] => {
      const values = text.split(',').map(Number)
      if (values.length !== count || values.some((v) => !Number.isInteger(v) || v < 1)) {
        throw new InputError(`--${name}`, `${count} positive integers separated by commas`, text)
      }
      return values
    }
    const [trainQ, validQ, testQ] = flags.queries ? integers('queries', flags.queries, 3) : FIXTURE_SPEC.queries
    const [minDocs, maxDocs] = flags.docs
      ? integers('docs', flags.docs, 2)
      : [FIXTURE_SPEC.minDocs, FIXTURE_SPEC.maxDocs]
    if (maxDocs < minDocs) throw new InputError('--docs', 'fewest <= most', flags.docs)
    const spec = {
      structure: flags.structure as 'mixed' | 'linear',
      queries: [trainQ, validQ, testQ] as const,
      minDocs,
      maxDocs,
      seed: flags.seed ?? FIXTURE_SPEC.seed,
    }
    const dir = flags.out ?? join(fixturesDir, 'ltr')
    const files = Object.entries(fixtureFiles(spec)).map(([name, text]) => {
      const path = join(dir, name)
      const current = existsSync(path) ? readFileSync(path, 'utf8') : undefined
      if (flags.check)
        return {file: path, status: current === undefined ? 'missing' : current === text ? 'identical' : 'differs'}
      writeFileAtomic(path, text)
      return {file: path, status: current === text ? 'unchanged' : 'written'}
    })
    for (const f of files) this.log(`${f.status.padEnd(9)} ${f.file}`)
    if (flags.check && files.some((f) => f.status !== 'identical'))
      this.error('a generated file differs from its generator', {exit: 1})
    return {
      spec: {
        structure: spec.structure,
        queries: spec.queries,
        min_docs: spec.minDocs,
        max_docs: spec.maxDocs,
        seed: spec.seed,
      },
      files,
    }
  }
}
