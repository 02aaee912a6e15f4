import {defineConfig} from 'vitest/config'

const jsonOut = process.env.KT_VITEST_JSON

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
    // .ci/run reads the JSON summary to print the closing "N passed, N failed" line.
    reporters: jsonOut ? ['default', 'json'] : ['default'],
    outputFile: jsonOut ? {json: jsonOut} : undefined,
  },
})
