import {defineConfig} from 'vitest/config'
import {BaseSequencer, type TestSpecification} from 'vitest/node'

const jsonOut = process.env.KT_VITEST_JSON

/**
 * Test files that take far longer than the rest (the --help examples: about a quarter of the whole
 * suite's time). They start first, so that the other workers run every other file beside them
 * instead of one of them starting last and running alone. Without this, a fresh clone (no vitest
 * cache of durations) would order files by size, which puts them late.
 */
const LONGEST_FIRST = ['test/cli/examples.test.ts', 'test/cli/run.test.ts', 'test/cli/relocation.test.ts']

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const rank = (f: TestSpecification): number => {
      const i = LONGEST_FIRST.findIndex((name) => f.moduleId.endsWith(`/${name}`))
      return i < 0 ? LONGEST_FIRST.length : i
    }
    return sorted
      .map((f, i) => ({f, i}))
      .sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i)
      .map(({f}) => f)
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // one real PostgreSQL server per run (skipped with a reason outside CI if it cannot start)
    globalSetup: ['test/helpers/pg-setup.ts'],
    // @oclif/test captures stdout itself; vitest's interception would leave it empty (stack-notes).
    disableConsoleIntercept: true,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // vitest's default is one worker per core minus one: on CI's 2 cores a single worker, which
    // leaves a core idle while most files wait on one child process (kt, PostgreSQL, Chromium).
    // Three keep both cores busy: two left gaps (vitest 426-533 s against 299-352 s for three, on
    // this 2-core machine under load 6-10, 2026-12-02).
    maxWorkers: 3,
    sequence: {sequencer: LongestFirst},
    // .ci/run reads the JSON summary to print the closing "N passed, N failed" line.
    reporters: jsonOut ? ['default', 'json'] : ['default'],
    outputFile: jsonOut ? {json: jsonOut} : undefined,
  },
})
