/**
 * PostgreSQL for a test file: a fresh database on the run's server (test/helpers/pg-setup.ts), or
 * the one-line reason the PostgreSQL tests are skipped here. Use:
 *
 *   const pg = postgresForTests()
 *   describe.skipIf(pg.skip)(`... ${pg.label}`, () => { const url = await pg.database() ... })
 */
import {randomBytes} from 'node:crypto'
import {createRequire} from 'node:module'
import {inject} from 'vitest'

export interface TestPostgres {
  /** True when no server runs (never in CI: the run fails instead). */
  readonly skip: boolean
  /** Appended to describe titles: empty, or "(skipped: reason)". */
  readonly label: string
  readonly adminUrl: string | null
  /** Creates a new empty database and returns its URL. */
  database(prefix?: string): Promise<string>
}

export function postgresForTests(): TestPostgres {
  const provided = inject('ktPostgres')
  return {
    skip: provided.adminUrl === null,
    label: provided.skip ? `(skipped: ${provided.skip})` : '',
    adminUrl: provided.adminUrl,
    async database(prefix = 'kt_test') {
      if (!provided.adminUrl) throw new Error(provided.skip ?? 'no PostgreSQL server')
      const name = `${prefix}_${randomBytes(5).toString('hex')}`
      const pg = createRequire(import.meta.url)('pg') as typeof import('pg')
      const client = new pg.Client({connectionString: provided.adminUrl})
      await client.connect()
      try {
        await client.query(`CREATE DATABASE ${name}`)
      } finally {
        await client.end()
      }
      const url = new URL(provided.adminUrl)
      url.pathname = `/${name}`
      return url.toString()
    },
  }
}
